/**
 * One webhook attempt (`attemptOnce`): the durable dispatcher runs it, records its result event
 * and decides on a retry. A request that cannot be built (`not_sent`), or whose destination the
 * outbound policy refuses (`blocked`), is not retried: it would fail identically (rendering
 * depends only on the webhook and the event, and an over-long template would only cost its
 * rendering again). Every attempt is reported as the document of a WebhookRequestSent (2xx) or
 * WebhookRequestFailed event. No framework imports: the dispatcher supplies time, metrics and the
 * egress.
 */
import { outboundErrorText, type OutboundRequest, type OutboundResult } from '../outbound/outbound-http';
import type { OutgoingCall, OutgoingCallOutcome } from '../outbound/outgoing-calls';
import { type DeliveryEvent, type DeliveryWebhook, maskHeaders, maskUrl, prepareDeliveryRequest, type PreparedRequest } from './delivery-request';
import { TemplateError } from './template';

/** The error code a result event carries when the outbound policy refused the destination. */
export const DESTINATION_BLOCKED_CODE = 'OutboundDestinationBlocked';

/** How much of a receiver's answer a result event keeps. */
export const RESPONSE_BODY_LIMIT_BYTES = 4096;

/** The document of a WebhookRequestSent / WebhookRequestFailed event. */
export interface AttemptDocument {
  webhook_id: string;
  /** 1-based. */
  attempt: number;
  request: { method: string; url: string; headers: Record<string, string> };
  /** null when no answer arrived (network error, timeout, or the request could not be built). */
  response: { status: number; body: string } | null;
  error?: string;
  /**
   * Why an attempt failed before anything was sent, as a code: OutboundDestinationBlocked (the
   * outbound policy refused the destination), TemplateOutputTooLarge or TemplateInvalid.
   */
  error_code?: string;
  /** Configured headers left out because their value could not be sent safely. */
  skipped_headers?: string[];
  [key: string]: unknown;
}

export interface AttemptResult {
  /** True for a 2xx answer. */
  sent: boolean;
  /** 'not_sent': the request could not be built; 'blocked': the policy refused the destination. No call was made for either. */
  outcome: OutgoingCallOutcome | 'not_sent' | 'blocked';
  document: AttemptDocument;
}

export interface DeliveryContext {
  timeoutMs: number;
  /** Aborted when the service stops waiting for calls (end of the shutdown drain). */
  stopSignal: AbortSignal;
  nowSeconds: () => number;
  /** Reports a request that was actually sent; must not throw. */
  observeCall: (call: OutgoingCall) => void;
  /** The egress (src/outbound): sends one request under the outbound policy; never throws. */
  send: (call: OutboundRequest) => Promise<OutboundResult>;
}

function requestShown(prepared: Pick<PreparedRequest, 'method' | 'url' | 'headers'>): AttemptDocument['request'] {
  return { method: prepared.method, url: maskUrl(prepared.url), headers: maskHeaders(prepared.headers) };
}

/**
 * One attempt (1-based `attempt`), not yet recorded. `deliveryId` goes out as X-Webhook-Delivery.
 * Outcome 'cancelled' never comes back: a call the stop signal ended is a failure with that text.
 */
export async function attemptOnce(webhook: DeliveryWebhook, event: DeliveryEvent, attempt: number, ctx: DeliveryContext, deliveryId?: string): Promise<AttemptResult> {
  let prepared: PreparedRequest;
  try {
    prepared = prepareDeliveryRequest(webhook, event, ctx.nowSeconds(), deliveryId);
  } catch (error) {
    return {
      sent: false,
      outcome: 'not_sent',
      document: {
        webhook_id: webhook.id,
        attempt,
        request: requestShown({ method: webhook.request.method.toUpperCase(), url: webhook.request.url, headers: {} }),
        response: null,
        error: `The request could not be built, nothing was sent: ${outboundErrorText(error)}`,
        ...(error instanceof TemplateError ? { error_code: error.code } : {}),
      },
    };
  }

  const document: AttemptDocument = { webhook_id: webhook.id, attempt, request: requestShown(prepared), response: null };
  if (prepared.skippedHeaders.length) document.skipped_headers = prepared.skippedHeaders;
  const result = await ctx.send({
    url: prepared.url,
    method: prepared.method,
    headers: prepared.headers,
    body: prepared.body,
    timeoutMs: ctx.timeoutMs,
    signal: ctx.stopSignal,
    bodyLimitBytes: RESPONSE_BODY_LIMIT_BYTES,
  });
  if (result.kind === 'blocked') {
    document.error = `${DESTINATION_BLOCKED_CODE}: ${result.error}`;
    document.error_code = DESTINATION_BLOCKED_CODE;
    return { sent: false, outcome: 'blocked', document };
  }
  let outcome: OutgoingCallOutcome;
  let status: number | undefined;
  switch (result.kind) {
    case 'answered':
      status = result.status;
      // Only an allowed destination ever answers: its body start is what the event may show.
      document.response = { status, body: result.body };
      outcome = status >= 200 && status < 300 ? 'success' : 'failure';
      if (outcome === 'failure') document.error = `The receiver answered HTTP ${status}`;
      break;
    case 'timeout':
      outcome = 'timeout';
      document.error = `No answer within ${ctx.timeoutMs} ms`;
      break;
    case 'cancelled':
      outcome = 'failure';
      document.error = 'Cancelled: the service stopped before the receiver answered';
      break;
    case 'failed':
      outcome = 'failure';
      document.error = result.error;
      break;
  }
  ctx.observeCall({ kind: 'webhook', outcome, durationSeconds: result.durationSeconds, status });
  return { sent: outcome === 'success', outcome, document };
}
