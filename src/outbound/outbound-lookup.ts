/**
 * The connect-time half of the outbound policy: a resolver with the signature of Node's
 * `dns.lookup`, for the undici dispatcher here and for future SMTP (nodemailer `lookup`) and OIDC
 * callers. It answers only addresses the policy allows, so the socket can only ever connect to
 * an allowed address: a name that resolves (or rebinds between two lookups) to a refused one
 * fails with OutboundDestinationBlocked before any connection is attempted.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { type DestinationPolicy, isLocalhostName, LOCALHOST_ADDRESSES, parseIpLiteral } from './destination-policy';

/** Why a call was not made. The message names the host as configured, never what it resolved to. */
export class OutboundDestinationBlocked extends Error {
  readonly code = 'OutboundDestinationBlocked';

  constructor(readonly host: string) {
    super(`the destination ${JSON.stringify(host.slice(0, 255))} is not allowed by the outbound policy`);
    this.name = 'OutboundDestinationBlocked';
  }
}

export function isOutboundDestinationBlocked(error: unknown): error is OutboundDestinationBlocked {
  return error instanceof OutboundDestinationBlocked;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Node's `dns.lookup` signature, as `net.connect({lookup})`, undici and nodemailer call it. */
export type LookupFunction = (hostname: string, options: LookupOptions | number | LookupCallback, callback?: LookupCallback) => void;

/** The system resolver, asked for every address of a name. */
export type ResolveAll = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolveAll: ResolveAll = (hostname, options, callback) => dnsLookup(hostname, options, callback);

function familyOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

function isAllowedEntry(policy: DestinationPolicy, entry: LookupAddress): boolean {
  const address = parseIpLiteral(entry.address);
  return address !== undefined && policy.isAllowedAddress(address);
}

function noAddressOfFamily(hostname: string, family: number): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname} (no IPv${family} address)`);
  error.code = 'ENOTFOUND';
  return error;
}

/**
 * A `dns.lookup` that answers only allowed addresses. Host names in OUTBOUND_ALLOW resolve as
 * usual; IP literals in any notation are classified without DNS; `localhost` names stand for the
 * loopback addresses without DNS (RFC 6761), so they are refused unless loopback is allowed.
 */
export function createOutboundLookup(policy: DestinationPolicy, resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, optionsOrCallback, maybeCallback) => {
    const callback = typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback;
    if (!callback) throw new TypeError('lookup needs a callback');
    const options: LookupOptions =
      typeof optionsOrCallback === 'number' ? { family: optionsOrCallback } : typeof optionsOrCallback === 'object' ? optionsOrCallback : {};
    const wantedFamily = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family || 0;

    const answer = (addresses: LookupAddress[]): void => {
      const allowed = policy.isAllowedName(hostname) ? addresses : addresses.filter((entry) => isAllowedEntry(policy, entry));
      if (!allowed.length) return callback(new OutboundDestinationBlocked(hostname), options.all ? [] : '');
      const usable = wantedFamily ? allowed.filter((entry) => entry.family === wantedFamily) : allowed;
      if (!usable.length) return callback(noAddressOfFamily(hostname, wantedFamily), options.all ? [] : '');
      if (options.all) return callback(null, usable);
      callback(null, usable[0].address, usable[0].family);
    };

    // Answers that need no DNS still arrive asynchronously, as dns.lookup's do: callers rely on it.
    const literal = parseIpLiteral(hostname);
    if (literal) {
      const address = literal.toString();
      return process.nextTick(answer, [{ address, family: familyOf(address) }]);
    }
    if (isLocalhostName(hostname) && !policy.isAllowedName(hostname)) {
      return process.nextTick(answer, LOCALHOST_ADDRESSES.map((address) => ({ address, family: familyOf(address) })));
    }
    resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '');
      answer(addresses);
    });
  };
}
