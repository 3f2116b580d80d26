/**
 * OUTBOUND_ALLOW: the destinations an operator permits although the outbound policy refuses their
 * range (contract "Outbound calls"). Parsed here, at start, so that a bad value stops the start;
 * src/outbound applies it.
 */
import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

export interface OutboundAllowList {
  /** Address ranges connected to even when they are refused by default (IPv4-mapped IPv6 forms are matched as IPv4). */
  cidrs: ReadonlyArray<readonly [IpAddress, number]>;
  /** Host names (lower case, no trailing dot) called whatever they resolve to. */
  hostNames: readonly string[];
}

export const EMPTY_OUTBOUND_ALLOW: OutboundAllowList = { cidrs: [], hostNames: [] };

// Syntax only (RFC 1123 labels); IP literals never reach this test, ipaddr.js classifies them first.
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A host name as compared everywhere: lower case, without the trailing dot of a fully qualified name. */
export function normalizeHostName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function parseEntry(entry: string): { cidr: readonly [IpAddress, number] } | { hostName: string } {
  if (entry.includes('/')) {
    // parseCIDR accepts the address in any notation ipaddr.js knows and checks the prefix length.
    return { cidr: ipaddr.parseCIDR(entry) };
  }
  const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  if (ipaddr.isValid(bare)) {
    const address = ipaddr.parse(bare);
    return { cidr: [address, address.kind() === 'ipv4' ? 32 : 128] };
  }
  const hostName = normalizeHostName(entry);
  if (hostName.length > 253 || !hostName.split('.').every((label) => HOST_LABEL.test(label))) {
    throw new Error('is neither a CIDR, an IP address nor a host name');
  }
  return { hostName };
}

/**
 * Comma-separated CIDRs (`10.0.0.0/8`, `::1/128`), single addresses (a /32 or /128) and host names
 * (`relay.internal`); blanks around entries and empty entries are ignored. Throws an Error naming
 * the first bad entry.
 */
export function parseOutboundAllow(raw: string | undefined): OutboundAllowList {
  if (raw === undefined || raw.trim() === '') return EMPTY_OUTBOUND_ALLOW;
  const cidrs: Array<readonly [IpAddress, number]> = [];
  const hostNames: string[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    let parsed: ReturnType<typeof parseEntry>;
    try {
      parsed = parseEntry(entry);
    } catch (error) {
      const reason = error instanceof Error ? error.message.replace(/^ipaddr: /, '') : String(error);
      throw new Error(`entry "${entry.slice(0, 100)}" ${reason}`, { cause: error });
    }
    if ('cidr' in parsed) cidrs.push(parsed.cidr);
    else hostNames.push(parsed.hostName);
  }
  return { cidrs, hostNames };
}
