import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookReceiver } from '../../test/support/webhook-receiver';
import { deliveryEvent } from '../../test/support/unit/delivery-event';
import { waitUntil } from '../../test/support/unit/wait-until';
import { parseOutboundAllow } from '../config/outbound-allow';
import { DestinationPolicy } from '../outbound/destination-policy';
import { createOutboundAgent, sendOutbound } from '../outbound/outbound-http';
import type { DeliveryWebhook } from './delivery-request';
import type { OutgoingCall } from '../outbound/outgoing-calls';
import { type AttemptResult, attemptOnce, type DeliveryContext, RESPONSE_BODY_LIMIT_BYTES } from './webhook-delivery';

/**
 * One attempt against a real HTTP receiver on 127.0.0.1 (no fetch mock). Retries, their times and
 * the delivery's state belong to the dispatcher (webhook-deliveries.e2e-spec.ts).
 */
describe('attemptOnce', () => {
  let receiver: WebhookReceiver;
  const recorded: AttemptResult[] = [];
  const calls: OutgoingCall[] = [];
  let stop: AbortController;
  // The receiver is on loopback: allowed here, as OUTBOUND_ALLOW=127.0.0.1/32 would; `strict` allows nothing.
  const allowingLoopback = createOutboundAgent(new DestinationPolicy(parseOutboundAllow('127.0.0.1/32')));
  const strict = createOutboundAgent(new DestinationPolicy(parseOutboundAllow('')));

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await Promise.all([allowingLoopback.destroy(), strict.destroy()]);
  });
  beforeEach(() => {
    receiver.reset();
    recorded.length = 0;
    calls.length = 0;
    stop = new AbortController();
  });

  function context(timeoutMs = 2000, agent = allowingLoopback): DeliveryContext {
    return {
      send: (call) => sendOutbound(agent, call),
      timeoutMs,
      stopSignal: stop.signal,
      nowSeconds: () => Math.floor(Date.now() / 1000),
      observeCall: (call) => calls.push(call),
    };
  }

  /** The one attempt recorded (failing when there were more or none). */
  function onlyAttempt(): AttemptResult {
    expect(recorded).toHaveLength(1);
    return recorded[0];
  }

  function webhook(url: string, tryCount = 1, request: Partial<DeliveryWebhook['request']> = {}): DeliveryWebhook {
    return { id: 'wh-1', membershipId: 'm-1', tryCount, secret: null, request: { method: 'POST', url, ...request } };
  }

  /** Attempt number `n`, recorded as the dispatcher records it. */
  async function attempt(hook: DeliveryWebhook, ctx: DeliveryContext, n = 1): Promise<AttemptResult> {
    const result = await attemptOnce(hook, event, n, ctx);
    recorded.push(result);
    return result;
  }

  const event = deliveryEvent();

  it('records one Sent attempt for a 2xx answer, with status and body', async () => {
    receiver.answer(201).answerWith('created');
    expect((await attempt(webhook(receiver.url('/a'), 3, { headers: { Authorization: 'Bearer x' } }), context())).sent).toBe(true);
    expect(receiver.received()).toHaveLength(1);
    expect(onlyAttempt()).toMatchObject({
      sent: true,
      outcome: 'success',
      document: {
        webhook_id: 'wh-1',
        attempt: 1,
        request: { method: 'POST', url: receiver.url('/a'), headers: { Authorization: '[masked]', 'Content-Type': 'application/json' } },
        response: { status: 201, body: 'created' },
      },
    });
    expect(recorded[0].document.error).toBeUndefined();
    expect(calls).toEqual([{ kind: 'webhook', outcome: 'success', durationSeconds: expect.any(Number), status: 201 }]);
  });

  it('numbers its attempt and reports each answer: a 5xx is a failure with the status', async () => {
    receiver.answer(500, 502, 200);
    const hook = webhook(receiver.url('/b'), 3);
    for (const n of [1, 2, 3]) await attempt(hook, context(), n);
    expect(recorded.map((r) => [r.sent, r.outcome, r.document.attempt, r.document.response?.status])).toEqual([
      [false, 'failure', 1, 500],
      [false, 'failure', 2, 502],
      [true, 'success', 3, 200],
    ]);
    expect(recorded.map((r) => r.document.error)).toEqual(['The receiver answered HTTP 500', 'The receiver answered HTTP 502', undefined]);
  });

  it('does not follow redirects: a 3xx is a failure', async () => {
    receiver.answer(302).answerWithHeaders({ Location: receiver.url('/elsewhere') });
    expect((await attempt(webhook(receiver.url('/d'), 1), context())).sent).toBe(false);
    expect(receiver.received().map((r) => r.url)).toEqual(['/d']);
    expect(recorded[0].document.response?.status).toBe(302);
  });

  it('keeps only the first 4 KiB of the answer', async () => {
    receiver.answerWith('x'.repeat(100_000));
    await attempt(webhook(receiver.url('/e')), context());
    expect(recorded[0].document.response?.body).toHaveLength(RESPONSE_BODY_LIMIT_BYTES);
  });

  it('times out a receiver that does not answer, as a timeout outcome, closing each hung connection', async () => {
    // A receiver that never answers and notes when the caller gives up on a request.
    let requests = 0;
    let closed = 0;
    const silent: Server = createServer((_request, response) => {
      requests++;
      response.on('close', () => closed++);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/f`;
      await attempt(webhook(url, 2), context(200), 1);
      await attempt(webhook(url, 2), context(200), 2);
      expect(recorded.map((r) => [r.outcome, r.document.response, r.document.error])).toEqual([
        ['timeout', null, 'No answer within 200 ms'],
        ['timeout', null, 'No answer within 200 ms'],
      ]);
      expect(calls.map((c) => c.outcome)).toEqual(['timeout', 'timeout']);
      // Each attempt was ended by the caller, not left hanging: the receiver sees both connections go.
      expect(requests).toBe(2);
      await waitUntil(() => closed === 2, 'the receiver to see both timed-out requests closed');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('reports a refused connection as a failure with the network error', async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await attempt(webhook(`http://127.0.0.1:${port}/`, 1), context());
    expect(recorded[0]).toMatchObject({ sent: false, outcome: 'failure', document: { response: null } });
    expect(recorded[0].document.error).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('does not send a request that cannot be built (not_sent: the dispatcher does not retry it)', async () => {
    await attempt(webhook('http://{{document.firstname}}.localhost:{{document.firstname}}/', 5), context());
    expect(recorded).toHaveLength(1);
    expect(recorded[0].outcome).toBe('not_sent');
    expect(recorded[0].document.error).toMatch(/could not be built/);
    expect(recorded[0].document.error_code).toBe('TemplateInvalid');
    expect(calls).toHaveLength(0);
  });

  it('records the template error code and sends nothing when the body would render past its limit', async () => {
    const big = { ...event, document: { big: 'b'.repeat(60_000) } };
    const hook = webhook(receiver.url('/big'), 5, { body: { blob: '{{document.big}}'.repeat(1000) } });
    recorded.push(await attemptOnce(hook, big, 1, context()));
    expect(onlyAttempt()).toMatchObject({ sent: false, outcome: 'not_sent', document: { attempt: 1, response: null, error_code: 'TemplateOutputTooLarge' } });
    expect(recorded[0].document.error).toMatch(/nothing was sent: Body would render to more than 1048576 bytes/);
    expect(receiver.received()).toHaveLength(0);
    expect(calls).toHaveLength(0);
  });

  it('ends a hanging call at once when the stop signal fires', async () => {
    receiver.answer('hang');
    const delivery = attempt(webhook(receiver.url('/g'), 5), context(60_000));
    await receiver.waitForRequests(1);
    stop.abort();
    expect(await delivery).toMatchObject({ sent: false, outcome: 'failure', document: { response: null } });
    expect(recorded[0].document.error).toMatch(/stopped/);
  });

  it('ends with OutboundDestinationBlocked, without sending, when the policy refuses the resolved address', async () => {
    // `localhost` stands for loopback without DNS; the strict policy allows no loopback address.
    await attempt(webhook(`http://localhost:${receiver.port}/blocked`, 3), context(2000, strict));
    expect(receiver.received()).toHaveLength(0);
    expect(onlyAttempt()).toMatchObject({
      sent: false,
      outcome: 'blocked',
      document: { attempt: 1, response: null, error_code: 'OutboundDestinationBlocked', error: expect.stringMatching(/^OutboundDestinationBlocked: /) },
    });
    expect(calls).toHaveLength(0);
  });

  it('sends the same call once the policy allows loopback', async () => {
    expect((await attempt(webhook(`http://localhost:${receiver.port}/allowed`, 3), context())).sent).toBe(true);
    expect(receiver.received().map((r) => r.url)).toEqual(['/allowed']);
  });
});
