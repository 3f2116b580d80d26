import { IsEmail, Matches } from 'class-validator';

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

/** `@IsEmailAddress()`: the property is an e-mail address (class-validator's rule, the house's message). */
export const IsEmailAddress = (): PropertyDecorator => IsEmail({}, { message: EMAIL_MESSAGE });
