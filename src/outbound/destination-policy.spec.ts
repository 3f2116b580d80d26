import ipaddr from 'ipaddr.js';
import { parseOutboundAllow } from '../config/outbound-allow';
import { casesByOutcome } from '../../test/support/unit/cases';
import { DestinationPolicy, isLocalhostName, parseIpLiteral, refusedRange } from './destination-policy';

/** Pure classification: nothing here resolves or connects. */
describe('destination policy', () => {
  const range = (literal: string): string | undefined => {
    const address = parseIpLiteral(literal);
    if (!address) throw new Error(`not an IP literal: ${literal}`);
    return refusedRange(address);
  };

  describe('refusedRange, every notation of every refused range', () => {
    it.each(
      casesByOutcome({
        // 127/8 in the notations a resolver accepts
        loopback: ['127.0.0.1', '127.255.255.254', '2130706433', '0x7f000001', '0x7f.1', '0x7f.0.0.1', '0177.0.0.1', '017700000001', '127.1', '127.0.1', '::1', '0:0:0:0:0:0:0:1', '[::1]'],
        private: ['10.0.0.1', '167772161', '0xa.0.0.1', '012.0.0.1', '10.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '0xc0.0xa8.1.1', 'fc00::1', 'fd12:3456::1'],
        // the cloud metadata address included
        'link-local': ['169.254.169.254', '2852039166', '0xa9.0xfe.0xa9.0xfe', 'fe80::1', 'fe80::1%eth0', 'febf::1'],
        'carrier-grade NAT': ['100.64.0.1', '100.127.255.255'],
        unspecified: ['0.0.0.0', '0', '0.1.2.3', '::'],
        multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1'],
        broadcast: ['255.255.255.255', '4294967295'],
        reserved: ['240.0.0.1'],
      }),
    )('%s is refused as %s', (literal, expected) => {
      expect(range(literal)).toBe(expected);
    });

    // IPv4-mapped (::ffff:), NAT64 (64:ff9b::, an IPv4 address a translator forwards to), 6to4
    // (2002:AABB:CCDD::, a relay's), Teredo (2001:0:..., the client address inverted) and the
    // deprecated IPv4-compatible form (ipaddr.js reads the dotted ::127.0.0.1 as mapped: refused either way)
    it.each(
      casesByOutcome({
        loopback: ['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '[::ffff:127.0.0.1]', '64:ff9b::7f00:1', '::127.0.0.1', '2002:7f00:1::', '2002:7f00:1:0:1::1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
        private: ['::ffff:10.0.0.1', '::ffff:172.16.0.1', '::ffff:192.168.1.1', '64:ff9b::a00:1', '2002:a00:1::1', '2002:c0a8:101::', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
        'link-local': ['::ffff:169.254.169.254', '2002:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:5601:5601'],
        'NAT64 local-use': ['64:ff9b:1::7f00:1', '64:ff9b:1:ffff::808:808'],
        'carrier-grade NAT': ['::ffff:100.64.0.1'],
        unspecified: ['::ffff:0.0.0.0'],
        multicast: ['::ffff:224.0.0.1'],
        broadcast: ['::ffff:255.255.255.255'],
        'IPv4-compatible': ['::7f00:1', '::a00:1'],
      }),
    )('the IPv6 form %s is refused as %s', (literal, expected) => {
      expect(range(literal)).toBe(expected);
    });

    it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '134744072', '0x08080808', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.0.1', '223.255.255.255', '2606:4700:4700::1111', '2001:db8::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])(
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
    // The trailing dot of a fully qualified name does not hide an address.
    expect(parseIpLiteral('127.0.0.1.')?.toString()).toBe('127.0.0.1');
    expect(parseIpLiteral('0x7f.0.0.1.')?.toString()).toBe('127.0.0.1');
    expect(parseIpLiteral('127.0.0.1..')).toBeUndefined();
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

    /** Checks `judge` on each input of each group: a refused range by its name, or `none` for no problem. */
    const expectProblems = (judge: (input: string) => string | undefined, groups: Record<string, string[]>): void => {
      for (const [input, problem] of casesByOutcome(groups)) expect([input, judge(input)]).toEqual([input, problem === 'none' ? undefined : problem]);
    };

    it('judges a configured host: IP literals and localhost names now, other names at connect time', () => {
      expectProblems((host) => strict.configuredHostProblem(host), {
        loopback: ['127.0.0.1', '[::1]', '0x7f.1', 'localhost', 'x.localhost'],
        'link-local': ['169.254.169.254'],
        none: ['example.com', '8.8.8.8'],
      });
      expectProblems((host) => loopback.configuredHostProblem(host), { none: ['127.0.0.1', 'localhost'], private: ['10.0.0.1'] });
      expectProblems((host) => relay.configuredHostProblem(host), { none: ['relay.internal', '10.0.0.5'] });
    });

    it('judges the host of a URL as the WHATWG parser normalizes it', () => {
      expectProblems((url) => strict.configuredUrlProblem(url), {
        loopback: ['http://2130706433/', 'http://[::ffff:127.0.0.1]:8080/x', 'http://LOCALHOST./'],
        private: ['http://user:pw@10.0.0.1/'],
        none: ['https://example.com/', 'not a url'],
      });
    });
  });
});
