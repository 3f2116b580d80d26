import ipaddr from 'ipaddr.js';

/**
 * The network an address limit counts a client address under: an IPv4 address alone (an
 * IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address by its /64. One IPv6 client
 * commonly holds a whole /64 (RFC 6177's smallest end-site assignment, SLAAC's privacy addresses
 * rotate within it), so counting each of its 2^64 addresses apart would let it step around any
 * per-address limit. Anything that does not parse (`unknown`) counts as itself.
 */
export function clientNetworkOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  // `process` answers an IPv4-mapped IPv6 address as its IPv4 address.
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = new ipaddr.IPv6([...(parsed as ipaddr.IPv6).parts.slice(0, 4), 0, 0, 0, 0]);
  return `${network.toString()}/64`;
}
