import type { LookupAddress } from 'node:dns';
import { parseOutboundAllow } from '../config/outbound-allow';
import { DestinationPolicy } from './destination-policy';
import { createOutboundLookup, type LookupFunction, OutboundDestinationBlocked, type ResolveAll } from './outbound-lookup';

/**
 * The resolver half of the policy. The system resolver is replaced by a table (a parameter of
 * createOutboundLookup, as DNS answers are exactly what an attacker controls): nothing resolves
 * or connects.
 */
describe('createOutboundLookup', () => {
  const table: Record<string, LookupAddress[]> = {
    'public.example': [{ address: '93.184.215.14', family: 4 }],
    'mixed.example': [
      { address: '10.0.0.1', family: 4 },
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ],
    'internal.example': [{ address: '10.1.2.3', family: 4 }],
    'rebound.example': [
      { address: '127.0.0.1', family: 4 },
      { address: '::ffff:169.254.169.254', family: 6 },
    ],
    'relay.internal': [{ address: '10.0.0.5', family: 4 }],
  };
  const asked: string[] = [];
  const resolveAll: ResolveAll = (hostname, _options, callback) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses) return callback(null, addresses);
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    error.code = 'ENOTFOUND';
    callback(error, []);
  };
  beforeEach(() => {
    asked.length = 0;
  });

  const all = (lookup: LookupFunction, hostname: string, family?: number): Promise<LookupAddress[]> =>
    new Promise((resolve, reject) => lookup(hostname, { all: true, family }, (error, addresses) => (error ? reject(error) : resolve(addresses as LookupAddress[]))));
  const one = (lookup: LookupFunction, hostname: string): Promise<[string, number | undefined]> =>
    new Promise((resolve, reject) => lookup(hostname, {}, (error, address, family) => (error ? reject(error) : resolve([address as string, family]))));

  const strict = createOutboundLookup(new DestinationPolicy(parseOutboundAllow('')), resolveAll);
  const loopback = createOutboundLookup(new DestinationPolicy(parseOutboundAllow('127.0.0.1/32')), resolveAll);
  const relay = createOutboundLookup(new DestinationPolicy(parseOutboundAllow('relay.internal')), resolveAll);

  it('answers public addresses as the resolver gave them, in both calling forms', async () => {
    expect(await all(strict, 'public.example')).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(await one(strict, 'public.example')).toEqual(['93.184.215.14', 4]);
  });

  it('refuses a name that resolves only to refused addresses, before any connection', async () => {
    await expect(all(strict, 'internal.example')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    await expect(one(strict, 'rebound.example')).rejects.toMatchObject({ code: 'OutboundDestinationBlocked' });
  });

  it('never names the refused address in the error', async () => {
    const error = await all(strict, 'internal.example').then(
      () => new Error('resolved'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toContain('internal.example');
    expect(error.message).not.toContain('10.1.2.3');
  });

  it('drops refused addresses of a name that also has allowed ones: the socket can only reach an allowed one', async () => {
    expect(await all(strict, 'mixed.example')).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    expect(await one(strict, 'mixed.example')).toEqual(['93.184.215.14', 4]);
    expect(await all(strict, 'mixed.example', 6)).toEqual([{ address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }]);
  });

  it('answers localhost names with loopback without asking DNS: refused unless loopback is allowed', async () => {
    await expect(all(strict, 'localhost')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    await expect(all(strict, 'anything.localhost')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    expect(await all(loopback, 'LocalHost.')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(asked).toEqual([]);
  });

  it('classifies IP literals in any notation without asking DNS', async () => {
    await expect(one(strict, '0x7f.1')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    await expect(one(strict, '2130706433')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    await expect(one(strict, '::ffff:127.0.0.1')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
    expect(await one(loopback, '0x7f.1')).toEqual(['127.0.0.1', 4]);
    expect(await one(strict, '134744072')).toEqual(['8.8.8.8', 4]);
    expect(asked).toEqual([]);
  });

  it('lets an allowed host name resolve to whatever it names', async () => {
    expect(await one(relay, 'relay.internal')).toEqual(['10.0.0.5', 4]);
    await expect(one(relay, 'internal.example')).rejects.toBeInstanceOf(OutboundDestinationBlocked);
  });

  it('passes resolver errors through', async () => {
    await expect(one(strict, 'missing.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('accepts the (hostname, callback) and (hostname, family, callback) forms of dns.lookup', async () => {
    const viaCallback = await new Promise<string>((resolve, reject) => strict('public.example', (error, address) => (error ? reject(error) : resolve(address as string))));
    expect(viaCallback).toBe('93.184.215.14');
    const viaFamily = await new Promise<string>((resolve, reject) => strict('mixed.example', 6, (error, address) => (error ? reject(error) : resolve(address as string))));
    expect(viaFamily).toBe('2606:2800:21f:cb07:6820:80da:af6b:8b2c');
  });
});
