import { ConfigError, loadConfig } from './config';
import { parseOutboundAllow } from './outbound-allow';

describe('OUTBOUND_ALLOW', () => {
  const shown = (raw: string) => {
    const list = parseOutboundAllow(raw);
    return { cidrs: list.cidrs.map(([address, prefix]) => `${address.toString()}/${prefix}`), hostNames: list.hostNames };
  };

  it('is empty by default', () => {
    expect(shown('')).toEqual({ cidrs: [], hostNames: [] });
    expect(parseOutboundAllow(undefined)).toEqual({ cidrs: [], hostNames: [] });
    expect(loadConfig({ DATABASE_URL: 'memory://' }).outboundAllow).toEqual({ cidrs: [], hostNames: [] });
  });

  it('reads CIDRs, single addresses and host names, ignoring blanks and empty entries', () => {
    expect(shown(' 127.0.0.1/32, ::1/128 ,10.0.0.0/8,,fd00::/8, 10.0.0.5, [::1], Relay.Internal., mail-relay ')).toEqual({
      cidrs: ['127.0.0.1/32', '::1/128', '10.0.0.0/8', 'fd00::/8', '10.0.0.5/32', '::1/128'],
      hostNames: ['relay.internal', 'mail-relay'],
    });
  });

  it('parses addresses in the notations ipaddr.js knows', () => {
    expect(shown('2130706433/8,0x7f.1')).toEqual({ cidrs: ['127.0.0.1/8', '127.0.0.1/32'], hostNames: [] });
  });

  it.each(['10.0.0.0/33', '::1/129', 'x/8', '10.0.0.0/', 'under_score.example', 'spa ce', '-leading.example', 'a..b', `${'a'.repeat(64)}.example`, 'http://relay'])(
    'refuses %j naming the entry',
    (entry) => {
      expect(() => parseOutboundAllow(`127.0.0.1/32,${entry}`)).toThrow(entry.slice(0, 100));
    },
  );

  it('stops the start with one line naming the variable', () => {
    expect(() => loadConfig({ DATABASE_URL: 'memory://', OUTBOUND_ALLOW: '10.0.0.0/33' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'memory://', OUTBOUND_ALLOW: '10.0.0.0/33' })).toThrow(/^Invalid configuration: OUTBOUND_ALLOW .*"10\.0\.0\.0\/33"/);
  });
});
