/**
 * The one HTTP egress (contract "Outbound calls"): every HTTP call the service starts goes through
 * `OutboundHttp.send`, on an undici dispatcher whose connector applies the destination policy to
 * IP literals and whose resolver answers only allowed addresses. Redirects are not followed: a
 * 3xx is the call's answer. Uses undici's own `request` with that dispatcher (the global fetch
 * carries its own copy of undici, which must not be mixed with this one's Agent).
 */
import { type Dispatcher, Agent, buildConnector, request } from 'undici';
import { type DestinationPolicy, parseIpLiteral } from './destination-policy';
import { createOutboundLookup, isOutboundDestinationBlocked, type LookupFunction, OutboundDestinationBlocked } from './outbound-lookup';

const MAX_ERROR_LENGTH = 500;

export interface OutboundRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The whole call, answer start included, must finish within this time. */
  timeoutMs: number;
  /** Aborts the call from outside (e.g. the end of a shutdown drain). */
  signal?: AbortSignal;
  /** How much of the answer's body to read; the rest is discarded unread. */
  bodyLimitBytes: number;
}

/** How a call ended. `durationSeconds` runs from sending to having read the start of the answer (or failing). */
export type OutboundResult = { durationSeconds: number } & (
  | { kind: 'answered'; status: number; body: string }
  /** Refused by the policy before any connection: nothing was sent. */
  | { kind: 'blocked'; error: string }
  | { kind: 'timeout' }
  | { kind: 'cancelled' }
  | { kind: 'failed'; error: string }
);

/** A network error as a result event may show it: the message, with the system code of its cause. */
export function outboundErrorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    let causeText: string | undefined;
    if (cause instanceof Error) {
      const code = (cause as Error & { code?: unknown }).code;
      causeText = typeof code === 'string' ? code : cause.message;
    }
    text = causeText ? `${error.message}: ${causeText}` : error.message;
  } else {
    text = String(error);
  }
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}...` : text;
}

/**
 * An undici dispatcher that connects only where the policy allows. `net.connect` skips the
 * resolver for an IP literal, so the connector checks literals itself; names go through the
 * filtering `lookup`, which runs on every new connection (no address is cached past the policy).
 */
export function createOutboundAgent(policy: DestinationPolicy, lookup: LookupFunction = createOutboundLookup(policy)): Agent {
  const connectVia = buildConnector({ lookup });
  const connect: buildConnector.connector = (options, callback) => {
    const literal = parseIpLiteral(options.hostname);
    if (literal && !policy.isAllowedAddress(literal) && !policy.isAllowedName(options.hostname)) {
      callback(new OutboundDestinationBlocked(options.hostname), null);
      return;
    }
    connectVia(options, callback);
  };
  // Redirects are the caller's answer, never followed.
  return new Agent({ connect, maxRedirections: 0 });
}

async function readBodyStart(body: Dispatcher.ResponseData['body'], limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total >= limitBytes) break;
    }
  } finally {
    // Leaving the loop early, or failing, must release the connection.
    if (!body.destroyed) body.destroy();
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks).subarray(0, limitBytes));
}

/**
 * Sends one request through the dispatcher and reports how it ended; never throws.
 *
 * The call's own AbortController ends it at its deadline or when `call.signal` aborts, and
 * everything tying it to those is undone when the call ends: the timer cleared, the listener
 * taken off `call.signal`. Not `AbortSignal.any([AbortSignal.timeout(...), call.signal])`:
 * `call.signal` lives as long as the service (the webhook dispatcher's stop signal), and Node
 * keeps every signal derived from a long-lived one that has a listener, which undici adds. A
 * ten-minute run calling a webhook on each verification held 34 MB more heap at its end
 * (the "eighth pass" in the git history of docs/benchmarks.md). `AbortSignal.timeout` also kept each call's signal until
 * its deadline passed, long after the answer.
 */
export async function sendOutbound(dispatcher: Dispatcher, call: OutboundRequest): Promise<OutboundResult> {
  const controller = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The outbound call took longer than its timeout', 'TimeoutError'));
  }, call.timeoutMs);
  // Like AbortSignal.timeout's: a call in flight does not hold the process up on its own.
  deadline.unref();
  const outside = call.signal;
  const stopFromOutside = (): void => controller.abort(outside?.reason);
  if (outside?.aborted) stopFromOutside();
  else outside?.addEventListener('abort', stopFromOutside, { once: true });
  const started = performance.now();
  const elapsed = (): number => (performance.now() - started) / 1000;
  try {
    const response = await request(call.url, {
      dispatcher,
      method: call.method as Dispatcher.HttpMethod,
      headers: call.headers,
      body: call.body,
      signal: controller.signal,
    });
    let body = '';
    try {
      body = await readBodyStart(response.body, call.bodyLimitBytes);
    } catch {
      // The status decides the call; a body cut short (timeout, reset) is only shown empty.
    }
    return { kind: 'answered', status: response.statusCode, body, durationSeconds: elapsed() };
  } catch (error) {
    const durationSeconds = elapsed();
    if (isOutboundDestinationBlocked(error)) return { kind: 'blocked', error: error.message, durationSeconds };
    if (timedOut) return { kind: 'timeout', durationSeconds };
    if (outside?.aborted) return { kind: 'cancelled', durationSeconds };
    return { kind: 'failed', error: outboundErrorText(error), durationSeconds };
  } finally {
    clearTimeout(deadline);
    outside?.removeEventListener('abort', stopFromOutside);
  }
}
