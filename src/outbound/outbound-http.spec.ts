import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseOutboundAllow } from '../config/outbound-allow';
import { DestinationPolicy } from './destination-policy';
import { createOutboundAgent, type OutboundRequest, sendOutbound } from './outbound-http';

/** The egress against a real HTTP server on 127.0.0.1 that counts every connection it accepts. */
describe('sendOutbound', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  const paths: string[] = [];
  const strict = createOutboundAgent(new DestinationPolicy(parseOutboundAllow('')));
  const allowing = createOutboundAgent(new DestinationPolicy(parseOutboundAllow('127.0.0.1/32')));

  beforeAll(async () => {
    server = createServer((request, response) => {
      paths.push(request.url ?? '');
      if (request.url === '/redirect') response.writeHead(302, { Location: '/target' }).end('moved');
      else if (request.url === '/large') response.end('y'.repeat(64 * 1024));
      // Never answers: the call ends by its timeout or from outside.
      else if (request.url === '/silent') return;
      else response.end('hello');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await Promise.all([strict.destroy(), allowing.destroy()]);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    connections = 0;
    paths.length = 0;
  });

  const call = (url: string): OutboundRequest => ({ url, method: 'GET', headers: {}, timeoutMs: 2000, bodyLimitBytes: 4096 });

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost', '2130706433', '0x7f.1', '127.1'])(
    'refuses http://%s:<port> before connecting when loopback is not allowed',
    async (host) => {
      const result = await sendOutbound(strict, call(`http://${host}:${port}/`));
      expect(result).toMatchObject({ kind: 'blocked', error: expect.stringContaining('not allowed by the outbound policy') });
      expect(connections).toBe(0);
    },
  );

  it('calls the same destinations once OUTBOUND_ALLOW names loopback', async () => {
    for (const host of ['127.0.0.1', 'localhost', '2130706433']) {
      expect(await sendOutbound(allowing, call(`http://${host}:${port}/ok`))).toMatchObject({ kind: 'answered', status: 200, body: 'hello' });
    }
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    expect(await sendOutbound(allowing, call(`http://127.0.0.1:${port}/redirect`))).toMatchObject({ kind: 'answered', status: 302, body: 'moved' });
    expect(paths).toEqual(['/redirect']);
  });

  it('reads only the start of a long answer', async () => {
    const result = await sendOutbound(allowing, call(`http://127.0.0.1:${port}/large`));
    expect(result).toMatchObject({ kind: 'answered', status: 200 });
    expect(result.kind === 'answered' && result.body).toHaveLength(4096);
  });

  it('reports a refused connection as failed with the system code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await sendOutbound(allowing, call(`http://127.0.0.1:${closedPort}/`))).toMatchObject({ kind: 'failed', error: expect.stringContaining('ECONNREFUSED') });
  });

  it('ends a call whose answer does not come by its timeout', async () => {
    const result = await sendOutbound(allowing, { ...call(`http://127.0.0.1:${port}/silent`), timeoutMs: 200 });
    expect(result).toMatchObject({ kind: 'timeout' });
    expect(result.durationSeconds).toBeGreaterThanOrEqual(0.15);
  });

  it('ends a call at once when the outside signal aborts, and reports it cancelled', async () => {
    const stop = new AbortController();
    const pending = sendOutbound(allowing, { ...call(`http://127.0.0.1:${port}/silent`), signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    expect(await pending).toMatchObject({ kind: 'cancelled' });
  });

  it('sends nothing when the outside signal has already aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    expect(await sendOutbound(allowing, { ...call(`http://127.0.0.1:${port}/ok`), signal: stop.signal })).toMatchObject({ kind: 'cancelled' });
    expect(paths).toEqual([]);
  });

  it('leaves nothing on a long-lived outside signal once its calls have ended', async () => {
    // The webhook dispatcher's stop signal lives as long as the service and goes with every call.
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) {
      expect(await sendOutbound(allowing, { ...call(`http://127.0.0.1:${port}/ok`), signal: stop.signal })).toMatchObject({ kind: 'answered' });
    }
    expect(await sendOutbound(allowing, { ...call(`http://127.0.0.1:${port}/silent`), timeoutMs: 50, signal: stop.signal })).toMatchObject({ kind: 'timeout' });
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    // What leaked before: each AbortSignal.any([timeout, stop.signal]) added an entry to the
    // signal's dependants (Node's internal kDependantSignals set: 21 entries here, never pruned
    // while the signal lived). Read through the symbol's description, since Node does not export it.
    const dependants = Object.getOwnPropertySymbols(stop.signal).find((symbol) => symbol.description === 'kDependantSignals');
    expect(dependants ? (stop.signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants]?.size ?? 0 : 0).toBe(0);
  });
});
