/**
 * Which destinations the service may call (contract "Outbound calls"): pure functions, nothing
 * here connects or resolves. IP literals are parsed by ipaddr.js in every notation it knows
 * (decimal `2130706433`, hex `0x7f.1`, octal `0177.0.0.1`, short `127.1`), the same forms the
 * system resolver would turn into an address, so that no spelling of a refused address passes.
 */
import ipaddr from 'ipaddr.js';
import { type IpAddress, normalizeHostName, type OutboundAllowList } from '../config/outbound-allow';

/** The refused ranges, by the name a log line or test shows. */
const REFUSED_IPV4: ReadonlyArray<readonly [string, string]> = [
  // 0.0.0.0 itself reaches this host on Linux; the rest of 0/8 is "this network".
  ['unspecified', '0.0.0.0/8'],
  ['loopback', '127.0.0.0/8'],
  ['private', '10.0.0.0/8'],
  ['private', '172.16.0.0/12'],
  ['private', '192.168.0.0/16'],
  ['link-local', '169.254.0.0/16'],
  ['carrier-grade NAT', '100.64.0.0/10'],
  ['multicast', '224.0.0.0/4'],
  // 240/4 is reserved and unroutable; it includes the broadcast address 255.255.255.255.
  ['broadcast', '255.255.255.255/32'],
  ['reserved', '240.0.0.0/4'],
];

const REFUSED_IPV6: ReadonlyArray<readonly [string, string]> = [
  ['unspecified', '::/128'],
  ['loopback', '::1/128'],
  // The deprecated IPv4-compatible form (::a.b.c.d); nothing public lives there.
  ['IPv4-compatible', '::/96'],
  ['private', 'fc00::/7'],
  ['link-local', 'fe80::/10'],
  ['site-local', 'fec0::/10'],
  ['multicast', 'ff00::/8'],
  // RFC 8215's local-use NAT64 prefix: each network places the IPv4 address in it as it chooses
  // (RFC 6052 allows six layouts), so the address it reaches cannot be read off it; nothing public
  // lives there.
  ['NAT64 local-use', '64:ff9b:1::/48'],
];

function parsedRanges(ranges: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [string, [IpAddress, number]]> {
  return ranges.map(([name, cidr]) => [name, ipaddr.parseCIDR(cidr)] as const);
}

const REFUSED_RANGES = [...parsedRanges(REFUSED_IPV4), ...parsedRanges(REFUSED_IPV6)];

/** The well-known NAT64 prefix (RFC 6052): the IPv4 address a translator forwards to is its last 32 bits. */
const NAT64_PREFIX = ipaddr.parseCIDR('64:ff9b::/96');
/** 6to4 (RFC 3056): a relay delivers to the IPv4 address in bits 16 to 47 (2002:7f00:1:: is 127.0.0.1). */
const SIX_TO_FOUR_PREFIX = ipaddr.parseCIDR('2002::/16');
/** Teredo (RFC 4380): a relay delivers to the client's IPv4 address, the last 32 bits inverted. */
const TEREDO_PREFIX = ipaddr.parseCIDR('2001::/32');

/**
 * Parses an IP literal in any notation (also bracketed IPv6, and IPv4 with the trailing dot of a
 * fully qualified name, `127.0.0.1.`, which some resolvers take as the address); undefined for a
 * host name.
 */
export function parseIpLiteral(host: string): IpAddress | undefined {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const bare = unbracketed.endsWith('.') && !unbracketed.endsWith('..') ? unbracketed.slice(0, -1) : unbracketed;
  if (!ipaddr.isValid(bare)) return undefined;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

/**
 * The IPv4 address an IPv6 address stands for, when it does: IPv4-mapped (::ffff:a.b.c.d), which
 * the kernel connects to as IPv4, and the forms a translator or relay forwards to an IPv4 address
 * (NAT64, 6to4, Teredo). A host with such a route would otherwise reach a refused IPv4 address
 * through an IPv6 literal or a name resolving to one.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const bytes = address.toByteArray();
  const ipv4 = (four: number[]) => ipaddr.fromByteArray(four) as ipaddr.IPv4;
  if (address.match(NAT64_PREFIX)) return ipv4(bytes.slice(12));
  if (address.match(SIX_TO_FOUR_PREFIX)) return ipv4(bytes.slice(2, 6));
  if (address.match(TEREDO_PREFIX)) return ipv4(bytes.slice(12).map((byte) => byte ^ 0xff));
  return undefined;
}

/** The address as it is matched: an IPv6 form of an IPv4 address becomes that IPv4 address. */
function effectiveAddress(address: IpAddress): IpAddress {
  if (address.kind() === 'ipv6') return embeddedIpv4(address as ipaddr.IPv6) ?? address;
  return address;
}

/** The name of the refused range the address lies in, or undefined when the policy lets it through. */
export function refusedRange(address: IpAddress): string | undefined {
  const effective = effectiveAddress(address);
  for (const [name, range] of REFUSED_RANGES) {
    if (effective.kind() === range[0].kind() && effective.match(range)) return name;
  }
  return undefined;
}

/** `localhost` and every name under it (RFC 6761: they always mean this host). */
export function isLocalhostName(host: string): boolean {
  const name = normalizeHostName(host);
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The loopback addresses a `localhost` name stands for, answered without asking DNS (RFC 6761 6.3). */
export const LOCALHOST_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

/**
 * The policy with the operator's OUTBOUND_ALLOW applied. Every outbound caller asks it twice: at
 * create time about the configured host (IP literals and localhost names only; other names are
 * unknown until resolved), and at connect time about each address actually resolved.
 */
export class DestinationPolicy {
  private readonly allowedNames: ReadonlySet<string>;

  constructor(private readonly allow: OutboundAllowList) {
    this.allowedNames = new Set(allow.hostNames);
  }

  /** A host name the operator allowed: called whatever it resolves to. */
  isAllowedName(host: string): boolean {
    return this.allowedNames.has(normalizeHostName(host));
  }

  /** Whether the service may connect to this address (an allowed range wins over a refused one). */
  isAllowedAddress(address: IpAddress): boolean {
    const effective = effectiveAddress(address);
    for (const range of this.allow.cidrs) {
      if (effective.kind() === range[0].kind() && effective.match(range as [IpAddress, number])) return true;
      // An IPv4-mapped range in the allowlist (::ffff:10.0.0.0/104) covers the IPv4 form too.
      if (address.kind() === range[0].kind() && address.match(range as [IpAddress, number])) return true;
    }
    return refusedRange(address) === undefined;
  }

  /**
   * The check a configured host can have before any call: undefined when it may be stored, else
   * why not. An IP literal must be an allowed address; a localhost name must be allowed by name or
   * stand for an allowed loopback address; any other name is decided when it is resolved.
   */
  configuredHostProblem(host: string): string | undefined {
    if (this.isAllowedName(host)) return undefined;
    const literal = parseIpLiteral(host);
    if (literal) return this.isAllowedAddress(literal) ? undefined : (refusedRange(literal) ?? 'refused');
    if (isLocalhostName(host)) {
      return LOCALHOST_ADDRESSES.some((address) => this.isAllowedAddress(ipaddr.parse(address))) ? undefined : 'loopback';
    }
    return undefined;
  }

  /** `configuredHostProblem` for the host of an absolute URL (an unparsable URL is left to its own validation). */
  configuredUrlProblem(url: string): string | undefined {
    let hostname: string;
    try {
      hostname = new URL(url).hostname;
    } catch {
      return undefined;
    }
    return this.configuredHostProblem(hostname);
  }
}

/**
 * The message every create/update check answers for a refused destination: the range, and the
 * setting that would permit it (contract, "Decisions of the third review").
 */
export function destinationNotAllowed(range: string): string {
  return `destination not allowed (${range}; see OUTBOUND_ALLOW)`;
}
