import { isEmail, Matches, ValidateBy } from 'class-validator';
import ipaddr from 'ipaddr.js';

/*
 * The one home of the shapes the API accepts for slugs, usernames, e-mail addresses and ids: the
 * patterns, the messages a 400 names them with, and the validation decorators DTOs declare.
 */

/** What a slug looks like: lower-case letters, digits and inner dashes, 1..64. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const SLUG_MESSAGE = 'must be lower-case letters, digits and dashes (1-64)';

/** A username: letters, digits and `._@+-`, 1..128 (an e-mail address fits, so either may sign in). */
export const USERNAME_PATTERN = /^[A-Za-z0-9._@+-]{1,128}$/;
export const USERNAME_MESSAGE = 'must be 1-128 letters, digits or ._@+-';

export const EMAIL_MESSAGE = 'must be an e-mail address';

/**
 * The longest id the service looks up. Ids it issues are 36 characters (UUID v4); the contract
 * also allows 24 hex characters. Tokens already cap their membership id (`prn`) at 64.
 */
export const MAX_ID_LENGTH = 64;

/** An id that comes from outside may name something only if it matches (see isPossibleId in ids.ts). */
export const POSSIBLE_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_ID_LENGTH}}$`);

/** `@IsSlug()`: the property is a slug. */
export const IsSlug = (): PropertyDecorator => Matches(SLUG_PATTERN, { message: SLUG_MESSAGE });

/** `@IsUsername()`: the property is a username. */
export const IsUsername = (): PropertyDecorator => Matches(USERNAME_PATTERN, { message: USERNAME_MESSAGE });

/** Control, space and format characters (zero-width ones included): never part of an address a person reads. */
const NOT_PLAIN = /[\p{Cc}\p{Zs}\p{Cf}]/u;

/**
 * An e-mail address as the service stores and sends to (contract, "Decisions of the third
 * review"): class-validator's rule, and plain: no control, space or format character, and no
 * quoted local part (which may hold CR/LF and makes one address read as another).
 */
export function isPlainEmailAddress(value: unknown): value is string {
  return typeof value === 'string' && !NOT_PLAIN.test(value) && !value.includes('"') && isEmail(value);
}

/** `@IsEmailAddress()`: the property is a plain e-mail address (isPlainEmailAddress), with the house's message. */
export const IsEmailAddress = (): PropertyDecorator =>
  ValidateBy({ name: 'isEmailAddress', validator: { validate: isPlainEmailAddress, defaultMessage: () => EMAIL_MESSAGE } });

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens (an IDN as punycode), an optional final dot. */
const HOST_NAME_PATTERN = /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
export const HOST_MESSAGE = 'must be a host name or an IP address, without port';

/** A host to connect to: a host name or an IP literal (IPv6 bare or in brackets), and nothing else (no port, no spaces). */
export function isHostOrIpLiteral(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const bare = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  return HOST_NAME_PATTERN.test(value) || (bare.includes(':') && ipaddr.IPv6.isValid(bare));
}

/** `@IsHostOrIpLiteral()`: the property is isHostOrIpLiteral. */
export const IsHostOrIpLiteral = (): PropertyDecorator =>
  ValidateBy({ name: 'isHostOrIpLiteral', validator: { validate: isHostOrIpLiteral, defaultMessage: () => HOST_MESSAGE } });
