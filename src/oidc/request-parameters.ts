import { OAuthError } from '../common/oauth-error';

/** RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), tokens separated by spaces. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** A space-delimited parameter (`scope`, `prompt`, RFC 6749 3.3 and OpenID Connect Core 3.1.2.1) as its values, empty ones dropped; absent is none. */
export function spaceDelimited(value: string | null | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean);
}

/**
 * The `scope` parameter as a list without repeats, in the order asked. A token outside `allowed`
 * (or not a scope token at all) is `invalid_scope` naming the first such one, so a caller learns
 * what to drop; absent or empty is the empty list.
 */
export function parseScopeParameter(value: string | undefined, allowed: readonly string[], why = 'is not supported'): string[] {
  if (value === undefined) return [];
  const scopes: string[] = [];
  for (const token of spaceDelimited(value)) {
    if (!SCOPE_TOKEN.test(token)) throw new OAuthError('invalid_scope', 'scope holds a character RFC 6749 does not allow');
    // A scope name is echoed back only once it is known to be one of ours: the text stays bounded and plain.
    if (!allowed.includes(token)) throw new OAuthError('invalid_scope', token.length <= 64 ? `The scope ${token} ${why}` : `A scope ${why}`);
    if (!scopes.includes(token)) scopes.push(token);
  }
  return scopes;
}

/**
 * RFC 8707's `resource` parameter (one only: a repeated one is refused before, by `formField`): an
 * absolute URI without a fragment, the audience of the token. Anything else is `invalid_target`.
 */
export function parseResourceParameter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_target', 'resource must be an absolute URI');
  }
  if (value.includes('#') || url.hash) throw new OAuthError('invalid_target', 'resource must not have a fragment');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7F]/.test(value)) throw new OAuthError('invalid_target', 'resource must be an absolute URI');
  return value;
}
