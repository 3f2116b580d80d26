import { OAuthError } from '../common/oauth-error';

/** The longest value an OAuth parameter of ours may have (codes, tokens, URIs, scopes). */
const MAX_PARAMETER_LENGTH = 4096;

/**
 * One parameter of an OAuth form or query: absent, or one string (RFC 6749 3.1 and 3.2: "Request
 * and response parameters MUST NOT be included more than once"). A repeated, empty-named or
 * over-long one is `invalid_request`.
 */
export function formField(form: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = form[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be given once`);
  if (value.length > MAX_PARAMETER_LENGTH) throw new OAuthError('invalid_request', `${name} is too long`);
  return value === '' ? undefined : value;
}

/** `formField`, required: missing is `invalid_request` naming it. */
export function requiredFormField(form: Readonly<Record<string, unknown>>, name: string): string {
  const value = formField(form, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
