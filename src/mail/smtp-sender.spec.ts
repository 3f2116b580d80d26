import { SMTPServer } from 'smtp-server';
import { parseOutboundAllow } from '../config/outbound-allow';
import type { StoredMailProvider } from '../database/schema';
import { DestinationPolicy } from '../outbound/destination-policy';
import { createOutboundLookup } from '../outbound/outbound-lookup';
import { sendSmtp } from './smtp-sender';

/**
 * The connect-time half of the outbound policy for SMTP: a refused destination ends the attempt
 * before any socket opens. A real SMTP server on 127.0.0.1 counts the connections it sees.
 */
describe('sendSmtp through the outbound policy', () => {
  let server: SMTPServer;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onConnect(_session, callback) {
        connections++;
        callback();
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback());
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    port = address.port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const provider = (host: string): StoredMailProvider => ({ slug: 'p', name: 'P', type: 'smtp', host, port, tls: 'none', username: null, password: null });
  const mail = { from: { email_address: 'a@example.com' }, to: { email_address: 'b@example.com' }, subject: 's', body: 'b', format: 'text' as const };

  it.each(['127.0.0.1', '2130706433', 'localhost', 'mail.localhost'])('refuses %s without connecting when loopback is not allowed (final, not retryable)', async (host) => {
    const before = connections;
    const lookup = createOutboundLookup(new DestinationPolicy(parseOutboundAllow('')));
    const result = await sendSmtp(provider(host), mail, { lookup, timeoutMs: 2000 });
    expect(result).toEqual({ outcome: 'blocked', retryable: false, error: expect.stringContaining('OutboundDestinationBlocked') });
    expect(connections).toBe(before);
  });

  it('connects to the address the policy allowed when loopback is allowed', async () => {
    const before = connections;
    const lookup = createOutboundLookup(new DestinationPolicy(parseOutboundAllow('127.0.0.1/32')));
    expect(await sendSmtp(provider('127.0.0.1'), mail, { lookup, timeoutMs: 2000 })).toEqual({ outcome: 'sent' });
    expect(connections).toBe(before + 1);
  });
});
