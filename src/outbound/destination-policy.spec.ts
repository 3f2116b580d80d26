import ipaddr from 'ipaddr.js';
import { parseOutboundAllow } from '../config/outbound-allow';
import { DestinationPolicy, isLocalhostName, parseIpLiteral, refusedRange } from './destination-policy';

/** Pure classification: nothing here resolves or connects. */
describe('destination policy', () => {
  const range = (literal: string): string | undefined => {
    const address = parseIpLiteral(literal);
    if (!address) throw new Error(`not an IP literal: ${literal}`);
    return refusedRange(address);
  };

  describe('refusedRange, every notation of every refused range', () => {
    it.each([
      // loopback 127/8 in the notations a resolver accepts
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['2130706433', 'loopback'],
      ['0x7f000001', 'loopback'],
      ['0x7f.1', 'loopback'],
      ['0x7f.0.0.1', 'loopback'],
      ['0177.0.0.1', 'loopback'],
      ['017700000001', 'loopback'],
      ['127.1', 'loopback'],
      ['127.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['[::1]', 'loopback'],
      // private
      ['10.0.0.1', 'private'],
      ['167772161', 'private'],
      ['0xa.0.0.1', 'private'],
      ['012.0.0.1', 'private'],
      ['10.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.0.1', 'private'],
      ['0xc0.0xa8.1.1', 'private'],
      ['fc00::1', 'private'],
      ['fd12:3456::1', 'private'],
      // link-local, including the cloud metadata address
      ['169.254.169.254', 'link-local'],
      ['2852039166', 'link-local'],
      ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['febf::1', 'link-local'],
      // carrier-grade NAT
      ['100.64.0.1', 'carrier-grade NAT'],
      ['100.127.255.255', 'carrier-grade NAT'],
      // unspecified
      ['0.0.0.0', 'unspecified'],
      ['0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      // multicast and broadcast
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['4294967295', 'broadcast'],
      ['240.0.0.1', 'reserved'],
    ])('%s is refused as %s', (literal, expected) => {
      expect(range(literal)).toBe(expected);
    });

    it.each([
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
      ['[::ffff:127.0.0.1]', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:172.16.0.1', 'private'],
      ['::ffff:192.168.1.1', 'private'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['::ffff:100.64.0.1', 'carrier-grade NAT'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['::ffff:224.0.0.1', 'multicast'],
      ['::ffff:255.255.255.255', 'broadcast'],
      // NAT64 carries an IPv4 address a translator forwards to
      ['64:ff9b::a00:1', 'private'],
      ['64:ff9b::7f00:1', 'loopback'],
      // the deprecated IPv4-compatible form (ipaddr.js reads the dotted ::127.0.0.1 as mapped: refused either way)
      ['::7f00:1', 'IPv4-compatible'],
      ['::a00:1', 'IPv4-compatible'],
      ['::127.0.0.1', 'loopback'],
    ])('the IPv6 form %s is refused as %s', (literal, expected) => {
      expect(range(literal)).toBe(expected);
    });

    it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '134744072', '0x08080808', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.0.1', '223.255.255.255', '2606:4700:4700::1111', '2001:db8::1', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
      'lets the public address %s through',
      (literal) => {
        expect(range(literal)).toBeUndefined();
      },
    );
  });

  it('parses IP literals only, never host names', () => {
    for (const name of ['localhost', 'example.com', 'vm', '08.0.0.1', '1e3', '0x', 'a.b.c.d', '127.0.0.1.example.com', '']) {
      expect([name, parseIpLiteral(name)]).toEqual([name, undefined]);
    }
    expect(parseIpLiteral('2130706433')?.toString()).toBe('127.0.0.1');
  });

  it('knows localhost names (RFC 6761), in any case and with a trailing dot', () => {
    for (const name of ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'a.b.LocalHost.']) expect([name, isLocalhostName(name)]).toEqual([name, true]);
    for (const name of ['localhost.example.com', 'notlocalhost', 'mylocalhost', 'example.com']) expect([name, isLocalhostName(name)]).toEqual([name, false]);
  });

  describe('DestinationPolicy', () => {
    const strict = new DestinationPolicy(parseOutboundAllow(''));
    const loopback = new DestinationPolicy(parseOutboundAllow('127.0.0.1/32,::1/128'));
    const relay = new DestinationPolicy(parseOutboundAllow('10.0.0.5, relay.internal'));

    it('refuses refused ranges and lets public addresses through without an allowlist', () => {
      expect(strict.isAllowedAddress(ipaddr.parse('127.0.0.1'))).toBe(false);
      expect(strict.isAllowedAddress(ipaddr.parse('::ffff:127.0.0.1'))).toBe(false);
      expect(strict.isAllowedAddress(ipaddr.parse('8.8.8.8'))).toBe(true);
    });

    it('allows what OUTBOUND_ALLOW names, IPv4-mapped forms included, and nothing beyond it', () => {
      expect(loopback.isAllowedAddress(ipaddr.parse('127.0.0.1'))).toBe(true);
      expect(loopback.isAllowedAddress(ipaddr.parse('::ffff:127.0.0.1'))).toBe(true);
      expect(loopback.isAllowedAddress(ipaddr.parse('::1'))).toBe(true);
      expect(loopback.isAllowedAddress(ipaddr.parse('127.0.0.2'))).toBe(false);
      expect(loopback.isAllowedAddress(ipaddr.parse('10.0.0.1'))).toBe(false);
      expect(relay.isAllowedAddress(ipaddr.parse('10.0.0.5'))).toBe(true);
      expect(relay.isAllowedAddress(ipaddr.parse('10.0.0.6'))).toBe(false);
      expect(relay.isAllowedName('Relay.Internal.')).toBe(true);
      expect(relay.isAllowedName('other.internal')).toBe(false);
    });

    it('judges a configured host: IP literals and localhost names now, other names at connect time', () => {
      expect(strict.configuredHostProblem('127.0.0.1')).toBe('loopback');
      expect(strict.configuredHostProblem('[::1]')).toBe('loopback');
      expect(strict.configuredHostProblem('0x7f.1')).toBe('loopback');
      expect(strict.configuredHostProblem('169.254.169.254')).toBe('link-local');
      expect(strict.configuredHostProblem('localhost')).toBe('loopback');
      expect(strict.configuredHostProblem('x.localhost')).toBe('loopback');
      expect(strict.configuredHostProblem('example.com')).toBeUndefined();
      expect(strict.configuredHostProblem('8.8.8.8')).toBeUndefined();
      expect(loopback.configuredHostProblem('127.0.0.1')).toBeUndefined();
      expect(loopback.configuredHostProblem('localhost')).toBeUndefined();
      expect(loopback.configuredHostProblem('10.0.0.1')).toBe('private');
      expect(relay.configuredHostProblem('relay.internal')).toBeUndefined();
      expect(relay.configuredHostProblem('10.0.0.5')).toBeUndefined();
    });

    it('judges the host of a URL as the WHATWG parser normalizes it', () => {
      expect(strict.configuredUrlProblem('http://2130706433/')).toBe('loopback');
      expect(strict.configuredUrlProblem('http://[::ffff:127.0.0.1]:8080/x')).toBe('loopback');
      expect(strict.configuredUrlProblem('http://user:pw@10.0.0.1/')).toBe('private');
      expect(strict.configuredUrlProblem('http://LOCALHOST./')).toBe('loopback');
      expect(strict.configuredUrlProblem('https://example.com/')).toBeUndefined();
      expect(strict.configuredUrlProblem('not a url')).toBeUndefined();
    });
  });
});
