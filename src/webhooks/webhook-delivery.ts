/**
 * One webhook call with its retries (spec "Webhook delivery" 3): attempts follow one another at
 * once until one answers 2xx or `tryCount` attempts were made (a request that cannot be built is
 * not retried: rendering depends only on the webhook and the event, so every retry would fail
 * identically, and an over-long template would only cost its rendering again). Every attempt is reported as the
 * document of a WebhookRequestSent (2xx) or WebhookRequestFailed event. No framework imports:
 * the dispatcher supplies time, recording and metrics.
 */
import type { ReadableStreamDefaultReader, ReadableStreamReadResult } from 'node:stream/web';
import { type DeliveryEvent, type DeliveryWebhook, maskHeaders, maskUrl, prepareDeliveryRequest, type PreparedRequest } from './delivery-request';
import type { OutgoingCall, OutgoingCallOutcome } from './outgoing-calls';
import { TemplateError } from './template';

/** How much of a receiver's answer a result event keeps. */
export const RESPONSE_BODY_LIMIT_BYTES = 4096;
const MAX_ERROR_LENGTH = 500;

/** The document of a WebhookRequestSent / WebhookRequestFailed event. */
export interface AttemptDocument {
  webhook_id: string;
  /** 1-based. */
  attempt: number;
  request: { method: string; url: string; headers: Record<string, string> };
  /** null when no answer arrived (network error, timeout, or the request could not be built). */
  response: { status: number; body: string } | null;
  error?: string;
  /** For an attempt that failed before sending: why, as a code (TemplateOutputTooLarge, TemplateInvalid). */
  error_code?: string;
  /** Configured headers left out because their value could not be sent safely. */
  skipped_headers?: string[];
  [key: string]: unknown;
}

export interface AttemptResult {
  /** True for a 2xx answer. */
  sent: boolean;
  /** 'not_sent' when the request could not be built (no call was made). */
  outcome: OutgoingCallOutcome | 'not_sent';
  document: AttemptDocument;
}

export interface DeliveryContext {
  timeoutMs: number;
  /** Aborted when the service stops waiting for calls (end of the shutdown drain). */
  stopSignal: AbortSignal;
  nowSeconds: () => number;
  /** Records the attempt's result event; must not throw. */
  recordAttempt: (webhook: DeliveryWebhook, result: AttemptResult) => Promise<void>;
  /** Reports a request that was actually sent; must not throw. */
  observeCall: (call: OutgoingCall) => void;
}

export interface DeliverySummary {
  attempts: number;
  delivered: boolean;
}

function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    // fetch reports network failures as "fetch failed" with the reason (ECONNREFUSED, ...) in `cause`.
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

/** The start of the body as text; stops reading (and releases the connection) after the limit. */
async function readBodyStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < RESPONSE_BODY_LIMIT_BYTES) {
      const chunk: ReadableStreamReadResult<Uint8Array> = await reader.read();
      if (chunk.done) break;
      chunks.push(chunk.value);
      total += chunk.value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT_BYTES);
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

function requestShown(prepared: Pick<PreparedRequest, 'method' | 'url' | 'headers'>): AttemptDocument['request'] {
  return { method: prepared.method, url: maskUrl(prepared.url), headers: maskHeaders(prepared.headers) };
}

async function attemptOnce(webhook: DeliveryWebhook, event: DeliveryEvent, attempt: number, ctx: DeliveryContext): Promise<AttemptResult> {
  let prepared: PreparedRequest;
  try {
    prepared = prepareDeliveryRequest(webhook, event, ctx.nowSeconds());
  } catch (error) {
    return {
      sent: false,
      outcome: 'not_sent',
      document: {
        webhook_id: webhook.id,
        attempt,
        request: requestShown({ method: webhook.request.method.toUpperCase(), url: webhook.request.url, headers: {} }),
        response: null,
        error: `The request could not be built, nothing was sent: ${errorText(error)}`,
        ...(error instanceof TemplateError ? { error_code: error.code } : {}),
      },
    };
  }

  const document: AttemptDocument = { webhook_id: webhook.id, attempt, request: requestShown(prepared), response: null };
  if (prepared.skippedHeaders.length) document.skipped_headers = prepared.skippedHeaders;
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const signal = AbortSignal.any([timeout, ctx.stopSignal]);
  const started = performance.now();
  let outcome: OutgoingCallOutcome;
  let status: number | undefined;
  try {
    const response = await fetch(prepared.url, {
      method: prepared.method,
      headers: prepared.headers,
      body: prepared.body,
      redirect: 'manual',
      signal,
    });
    status = response.status;
    let body = '';
    try {
      body = await readBodyStart(response);
    } catch {
      // The status decides the attempt; a body cut short by the timeout is only shown empty.
    }
    document.response = { status, body };
    if (status >= 200 && status < 300) {
      outcome = 'success';
    } else {
      outcome = 'failure';
      document.error = `The receiver answered HTTP ${status}`;
    }
  } catch (error) {
    if (timeout.aborted) {
      outcome = 'timeout';
      document.error = `No answer within ${ctx.timeoutMs} ms`;
    } else if (ctx.stopSignal.aborted) {
      outcome = 'failure';
      document.error = 'Cancelled: the service stopped before the receiver answered';
    } else {
      outcome = 'failure';
      document.error = errorText(error);
    }
  }
  const durationSeconds = (performance.now() - started) / 1000;
  ctx.observeCall({ kind: 'webhook', outcome, durationSeconds, status });
  return { sent: outcome === 'success', outcome, document };
}

/** Calls the webhook for the event, retrying at once on failure, up to `tryCount` attempts in total. */
export async function deliverWebhook(webhook: DeliveryWebhook, event: DeliveryEvent, ctx: DeliveryContext): Promise<DeliverySummary> {
  const tries = Math.max(1, Math.min(webhook.tryCount, 5));
  let attempts = 0;
  for (let attempt = 1; attempt <= tries; attempt++) {
    attempts = attempt;
    const result = await attemptOnce(webhook, event, attempt, ctx);
    await ctx.recordAttempt(webhook, result);
    if (result.sent) return { attempts, delivered: true };
    // A request that cannot be built fails the same way every time; after shutdown, nobody waits.
    if (result.outcome === 'not_sent' || ctx.stopSignal.aborted) break;
  }
  return { attempts, delivered: false };
}
