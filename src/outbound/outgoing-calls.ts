/**
 * Outgoing HTTP calls (webhook receivers now; mail interfaces and providers later), reported to
 * whoever turns them into metrics. The observer is optional: without one, calls are only counted
 * in `OutgoingCallTotals`.
 */
export type OutgoingCallKind = 'webhook' | 'mail' | 'provider';
export type OutgoingCallOutcome = 'success' | 'failure' | 'timeout';

export interface OutgoingCall {
  kind: OutgoingCallKind;
  /** success: 2xx; failure: any other status or a network error; timeout: no answer in time. */
  outcome: OutgoingCallOutcome;
  /** From sending the request to having read the start of the answer (or failing). */
  durationSeconds: number;
  /** The HTTP status, when an answer arrived. */
  status?: number;
}

export interface OutgoingCallObserver {
  /** Called once per request actually sent; must not throw (errors are swallowed anyway). */
  observe(call: OutgoingCall): void;
}

/**
 * Provide this token (from a @Global module, e.g. the metrics module) to receive every outgoing
 * call: `{ provide: OUTGOING_CALL_OBSERVER, useExisting: PrometheusOutgoingCalls }`.
 */
export const OUTGOING_CALL_OBSERVER = Symbol('OUTGOING_CALL_OBSERVER');

/** Running totals per outcome, since start. */
export interface OutgoingCallTotals {
  success: number;
  failure: number;
  timeout: number;
  durationSecondsSum: number;
}
