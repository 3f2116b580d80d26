import { clientNetworkOf } from './client-network';

describe('clientNetworkOf', () => {
  it('counts an IPv6 client by its /64: addresses of one /64 are one, of another /64 another', () => {
    expect(clientNetworkOf('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetworkOf('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientNetworkOf('2001:0db8:0001:0002:abcd::9')).toBe('2001:db8:1:2::/64');
    expect(clientNetworkOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientNetworkOf('fe80::1%eth0')).toBe('fe80::/64');
    expect(clientNetworkOf('::1')).toBe('::/64');
  });

  it('counts an IPv4 client by its address, written either way', () => {
    expect(clientNetworkOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetworkOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetworkOf('203.0.113.8')).toBe('203.0.113.8');
  });

  it('anything else counts as itself', () => {
    expect(clientNetworkOf('unknown')).toBe('unknown');
    expect(clientNetworkOf('')).toBe('');
  });
});
