import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  type AnyPgColumn,
  type PgColumnBuilderBase,
  type PgTableExtraConfigValue,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/*
 * Columns many tables share. Each helper returns fresh builders on every call: a drizzle column
 * builder becomes one table's column, so two tables must never spread the same builder objects.
 */

/** created/modified bookkeeping shared by every stored resource (the API's `sys`). */
const sysColumns = () => ({
  createdAt: ts('created_at').notNull().defaultNow(),
  createdBy: text('created_by').notNull(),
  modifiedAt: ts('modified_at'),
  modifiedBy: text('modified_by'),
});

/** The key of a row that belongs to one membership, and that membership (the row goes with it). */
const membershipOwned = () => ({
  id: text('id').primaryKey(),
  membershipId: text('membership_id')
    .notNull()
    .references(() => memberships.id, { onDelete: 'cascade' }),
});

/** The name an administrator gives a membership or a membership resource, and its slug (unique among its kind). */
const nameAndSlug = () => ({
  name: text('name').notNull(),
  slug: text('slug').notNull(),
});

/** A membership resource an administrator names: its key, membership, name, slug and description. */
const namedResource = () => ({
  ...membershipOwned(),
  ...nameAndSlug(),
  description: text('description'),
});

/**
 * The table of a named membership resource (roles, applications, webhooks...): `namedResource`,
 * its own columns, then `sysColumns`. Its slug is unique inside the membership and its rows are
 * listed in creation order (MembershipScopedRepository's findBySlug and default sort): an index
 * serves each. `indexes` adds the table's own.
 */
function namedResourceTable<TName extends string, TColumns extends Record<string, PgColumnBuilderBase>>(
  name: TName,
  columns: TColumns,
  indexes: (t: { membershipId: AnyPgColumn } & Record<keyof TColumns, AnyPgColumn>) => PgTableExtraConfigValue[] = () => [],
) {
  return pgTable(name, { ...namedResource(), ...columns, ...sysColumns() }, (t) => [
    uniqueIndex(`${name}_slug_unique`).on(t.membershipId, t.slug),
    index(`${name}_membership_created`).on(t.membershipId, t.createdAt),
    ...indexes(t),
  ]);
}

/** The user a row belongs to (deleted with the user). */
const ownedByUser = () => ({
  userId: text('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
});

/** Permission expressions granted and forbidden (roles, users, applications). */
const grantLists = () => ({
  permissions: jsonb('permissions').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  forbidden: jsonb('forbidden').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
});

/** When, by whom and why a session or token record was revoked; null while it is valid. */
const revocation = () => ({
  revokedAt: ts('revoked_at'),
  revokedBy: text('revoked_by'),
  revokeReason: text('revoke_reason'),
});

/** One entry of memberships.mail_providers (see src/mail/mail-provider.ts); the password is write-only. */
export interface StoredMailProvider {
  slug: string;
  name: string;
  type: 'smtp';
  host: string;
  port: number | null;
  tls: 'none' | 'starttls' | 'tls';
  username: string | null;
  password: string | null;
}

export const memberships = pgTable(
  'memberships',
  {
    id: text('id').primaryKey(),
    ...nameAndSlug(),
    secretKey: text('secret_key').notNull(),
    expiresIn: integer('expires_in').notNull().default(3600),
    refreshTokenExpiresIn: integer('refresh_token_expires_in').notNull().default(86400),
    scopedTokenExpiresIn: integer('scoped_token_expires_in'),
    hashAlgorithm: text('hash_algorithm').notNull().default('ARGON2ID'),
    userActivation: text('user_activation').notNull().default('active'),
    mailProviders: jsonb('mail_providers').$type<StoredMailProvider[]>().notNull().default(sql`'[]'::jsonb`),
    otpSettings: jsonb('otp_settings').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    /** `sign_in_policy` as set ({} until set: the defaults); read by the sign-in defenses' counting statement itself. */
    signInPolicy: jsonb('sign_in_policy').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    /** Slug of the token code policy its device codes follow; null: the policy defaults. */
    codePolicy: text('code_policy'),
    /** `required`: every user signs in with a second factor, enrolling one at sign-in if it has none. */
    mfaPolicy: text('mfa_policy').$type<'optional' | 'required'>().notNull().default('optional'),
    isSystem: boolean('is_system').notNull().default(false),
    ...sysColumns(),
  },
  (t) => [
    uniqueIndex('memberships_slug_unique').on(t.slug),
    // At most one system membership: the guarantee that one of several concurrent setups wins.
    uniqueIndex('memberships_single_system').on(t.isSystem).where(sql`${t.isSystem}`),
  ],
);

export const roles = namedResourceTable('roles', grantLists());

export const userTypes = namedResourceTable('user_types', {
  properties: jsonb('properties').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  allowAdditionalProperties: boolean('allow_additional_properties').notNull().default(false),
});

export const users = pgTable(
  'users',
  {
    ...membershipOwned(),
    username: text('username').notNull(),
    emailAddress: text('email_address').notNull(),
    passwordHash: text('password_hash').notNull(),
    firstname: text('firstname'),
    lastname: text('lastname'),
    role: text('role'),
    userType: text('user_type'),
    ...grantLists(),
    isActive: boolean('is_active').notNull().default(true),
    sourceProvider: text('source_provider'),
    /** When the address was last proven (activation or reset by mail, a provider's verified claim): the ID token's `email_verified`. */
    emailVerifiedAt: ts('email_verified_at'),
    customFields: jsonb('custom_fields').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    ...sysColumns(),
  },
  (t) => [
    uniqueIndex('users_username_unique').on(t.membershipId, sql`lower(${t.username})`),
    uniqueIndex('users_email_unique').on(t.membershipId, t.emailAddress),
    index('users_membership_created').on(t.membershipId, t.createdAt),
    index('users_membership_role').on(t.membershipId, t.role),
    // `where: {username: ...}` compares the username as stored (case-sensitive): the unique index
    // above is on lower(username) and cannot serve it, and without this one the filter read every
    // user of the membership (users `_query` by username 3x slower at 100k users than at 1k).
    index('users_membership_username').on(t.membershipId, t.username),
  ],
);

/** An application as a client of its membership's OpenID Provider (applications/application-oidc.ts checks it). */
export interface ApplicationOidcRecord {
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  public: boolean;
  require_consent: boolean;
}

export const applications = namedResourceTable('applications', {
  role: text('role'),
  ...grantLists(),
  isActive: boolean('is_active').notNull().default(true),
  /** Null: not an OpenID Connect client. */
  oidc: jsonb('oidc').$type<ApplicationOidcRecord>(),
  /** SHA-256 of the secret, hex. The secret itself is shown once and never stored. */
  secretDigest: text('secret_digest').notNull(),
});

/**
 * A sign-in session: its token pair, every pair refreshed from it and every scoped token made
 * from any of its access tokens. Revoking it ends all of them: a token is valid only while its
 * session is not revoked. Revocation is a durable record here, never derived from the user's
 * `is_active`. A session lives as long as it has token records: the sweeper deletes it with its
 * last one (no expiry column, so that issuing a token never writes the session row).
 */
export const sessions = pgTable(
  'sessions',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    createdAt: ts('created_at').notNull().defaultNow(),
    ...revocation(),
  },
  (t) => [index('sessions_user').on(t.membershipId, t.userId)],
);

/**
 * One row per issued token record: a token pair (access + refresh) or a scoped token, each in
 * one session. Tokens carry the row id as `tid` and the session id as `sid`; validity is one
 * primary-key lookup of this row joined with its session. Revocation sets `revoked_at` (here and,
 * for a whole session, on the session); the sweeper deletes rows a few minutes after `expires_at`.
 */
/** What a token record stands for (see `token_sessions.kind`). */
export type TokenRecordKind = 'pair' | 'scoped' | 'oidc' | 'browser';

export const tokenSessions = pgTable(
  'token_sessions',
  {
    // No foreign keys to the membership and the user (dropped in 0009): the session's key ties
    // the record to both (deleting either cascades through the session), and each of them took a
    // key-share lock, on every insert, on the one membership row that all concurrent sign-ins and
    // refreshes of a tenant share. PostgreSQL keeps such shared locks as multixacts: they cost
    // the issuing statement a fifth of its database CPU across 16 concurrent sessions.
    id: text('id').primaryKey(),
    membershipId: text('membership_id').notNull(),
    userId: text('user_id').notNull(),
    /** The sign-in session the token belongs to; a sign-in's first pair has the session's id. */
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    /**
     * `pair` and `scoped` as the specification's routes issue them; `oidc` an OpenID Provider grant's
     * access (and refresh) token for `client_id`; `browser` the OpenID Provider's single sign-on
     * cookie (its `access_jti` the cookie secret's digest), which keeps its session alive.
     */
    kind: text('kind').$type<TokenRecordKind>().notNull(),
    /** The OpenID Provider client (application id) an `oidc` record was issued to; null otherwise. */
    clientId: text('client_id'),
    /** The grant that issued an `oidc` record (`authorization_code`, `refresh_token`, the device grant): TokenRevoked names it. */
    grantType: text('grant_type'),
    /**
     * The pair a scoped token was made from (informative: its session is what revocation follows);
     * for an `oidc` record, the grant's first record (its own id for that one): revoking a grant
     * (code reuse, refresh reuse, RFC 7009) revokes every record naming it.
     */
    parentId: text('parent_id'),
    /**
     * `oidc` records: when and how the user authenticated (OpenID Connect `auth_time`, RFC 8176
     * `amr`), kept for the ID tokens of later refreshes; the opaque refresh token carries neither.
     */
    authTime: ts('auth_time'),
    amr: jsonb('amr').$type<string[] | null>(),
    /**
     * `oidc` records: the grant's scopes (its refresh token's, RFC 6749 6; an access token narrowed
     * at a refresh carries fewer in its own `scope`), and RFC 8707's `resource`, the audience of
     * its access tokens, kept for the access tokens of later refreshes.
     */
    scopes: jsonb('scopes').$type<string[] | null>(),
    resource: text('resource'),
    accessJti: text('access_jti').notNull(),
    refreshJti: text('refresh_jti'),
    accessExpiresAt: ts('access_expires_at').notNull(),
    refreshExpiresAt: ts('refresh_expires_at'),
    /** The later of the two expiries: when the whole session is dead. */
    expiresAt: ts('expires_at').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    createdAt: ts('created_at').notNull().defaultNow(),
    ...revocation(),
  },
  (t) => [
    index('token_sessions_user').on(t.membershipId, t.userId),
    index('token_sessions_session').on(t.sessionId),
    // Only records that have a parent (scoped tokens, OpenID Provider grants): a sign-in's or a
    // refresh's pair has none, and each one added a NULL to this index for nothing.
    index('token_sessions_parent').on(t.parentId).where(sql`${t.parentId} is not null`),
    index('token_sessions_expires').on(t.expiresAt),
    index('token_sessions_membership_created').on(t.membershipId, t.createdAt),
  ],
);

/**
 * The event log. Migration 0014 adds `commit_xid` (xid8, default pg_current_xact_id()), the
 * stream's commit order, outside this schema: inserts here list the table's columns, and that one
 * must always take its default. Only EventStreamRepository reads it.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    membershipId: text('membership_id').notNull(),
    eventType: text('event_type').notNull(),
    utilizerId: text('utilizer_id').notNull(),
    document: jsonb('document').$type<Record<string, unknown>>().notNull(),
    prior: jsonb('prior').$type<Record<string, unknown> | null>(),
    eventTime: ts('event_time').notNull(),
  },
  (t) => [
    // By time, by type, by utilizer within a membership; a backward scan serves "newest first".
    index('events_membership_time').on(t.membershipId, t.eventTime, t.id),
    index('events_membership_type_time').on(t.membershipId, t.eventType, t.eventTime, t.id),
    index('events_membership_utilizer_time').on(t.membershipId, t.utilizerId, t.eventTime),
  ],
);

export interface WebhookRequestTemplate {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  uncoveredBody?: boolean;
}

export const webhooks = namedResourceTable(
  'webhooks',
  {
    event: text('event').notNull(),
    status: text('status').$type<'active' | 'passive'>().notNull(),
    tryCount: integer('try_count').notNull(),
    request: jsonb('request').$type<WebhookRequestTemplate>().notNull(),
    /** HMAC key for X-Webhook-Signature. Write-only through the API. */
    secret: text('secret'),
  },
  (t) => [index('webhooks_membership_event').on(t.membershipId, t.event, t.status)],
);

export const providers = namedResourceTable('providers', {
  type: text('type').$type<'oidc'>().notNull(),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  /** For the code exchange at the token endpoint. Write-only through the API. */
  clientSecret: text('client_secret'),
  defaultRole: text('default_role'),
  defaultUserType: text('default_user_type'),
  isActive: boolean('is_active').notNull().default(true),
  trustEmail: boolean('trust_email').notNull().default(false),
});

/** Which user a provider's subject (`sub`) signs in as; deleting the provider deletes its links. */
export const providerIdentities = pgTable(
  'provider_identities',
  {
    ...membershipOwned(),
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    ...ownedByUser(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('provider_identities_subject_unique').on(t.providerId, t.subject), index('provider_identities_user').on(t.userId)],
);

/** A fixed address a mail hook also writes to. */
export interface MailRecipient {
  display_name?: string;
  email_address: string;
}

export const mailhooks = namedResourceTable(
  'mailhooks',
  {
    event: text('event').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    /** Slug of an entry of the membership's mail_providers. */
    mailProvider: text('mail_provider').notNull(),
    fromAddress: text('from_address').notNull(),
    fromName: text('from_name'),
    mailSubject: text('mail_subject').notNull(),
    mailFormat: text('mail_format').$type<'html' | 'text'>().notNull(),
    mailTemplate: text('mail_template').notNull(),
    sendToUtilizer: boolean('send_to_utilizer').notNull().default(false),
    recipients: jsonb('recipients').$type<MailRecipient[]>().notNull().default(sql`'[]'::jsonb`),
  },
  (t) => [index('mailhooks_membership_event').on(t.membershipId, t.event, t.isActive)],
);

export const schema = { memberships, roles, userTypes, users, applications, sessions, tokenSessions, events, webhooks, providers, providerIdentities, mailhooks };
export type Schema = typeof schema;

export type MembershipRow = typeof memberships.$inferSelect;
export type RoleRow = typeof roles.$inferSelect;
export type UserTypeRow = typeof userTypes.$inferSelect;
export type UserRow = typeof users.$inferSelect;
/** A user as anything outside sign-in and password changes sees it: without the hash. */
export type UserRecord = Omit<UserRow, 'passwordHash'>;
export type ApplicationRow = typeof applications.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type TokenSessionRow = typeof tokenSessions.$inferSelect;
export type EventRow = typeof events.$inferSelect;
export type WebhookRow = typeof webhooks.$inferSelect;
export type ProviderRow = typeof providers.$inferSelect;
export type ProviderIdentityRow = typeof providerIdentities.$inferSelect;
export type MailhookRow = typeof mailhooks.$inferSelect;

/**
 * A device code (RFC 8628): the device holds the code, known here only by its SHA-256 digest;
 * a user of the membership approves or denies it by its user code. Approval stores the approver
 * and, for a scoped approval, its scopes and origin; the first successful poll consumes it. The sweeper
 * deletes rows a few minutes after `expires_at`.
 */
export const tokenCodes = pgTable(
  'token_codes',
  {
    ...membershipOwned(),
    userCode: text('user_code').notNull(),
    deviceCodeDigest: text('device_code_digest').notNull(),
    state: text('state').$type<'pending' | 'approved' | 'denied' | 'consumed'>().notNull().default('pending'),
    clientInfo: jsonb('client_info').$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
    /** Seconds between polls; grows by 5 with each poll that came too early. */
    pollInterval: integer('poll_interval').notNull(),
    lastPolledAt: ts('last_polled_at'),
    approvedBy: text('approved_by').references(() => users.id, { onDelete: 'cascade' }),
    scopes: jsonb('scopes').$type<string[] | null>(),
    /**
     * A scoped approval only: the approving token's sign-in session and token record, and when that
     * token expires. The poll's token is a scoped token in that session, living no longer.
     */
    approvedSessionId: text('approved_session_id'),
    approvedTokenId: text('approved_token_id'),
    approvedUntil: ts('approved_until'),
    /** The approving session's authentication methods (RFC 8176): the device's pair keeps them. */
    amr: jsonb('amr').$type<string[] | null>(),
    /**
     * A code an OpenID Provider client asked for at `<issuer>/device/authorize` (RFC 8628): the
     * client, and the OpenID scopes it asked (`openid`, `profile`...). Null for the specification's routes.
     */
    oidcClientId: text('oidc_client_id'),
    oidcScopes: jsonb('oidc_scopes').$type<string[] | null>(),
    decidedAt: ts('decided_at'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('token_codes_user_code_unique').on(t.membershipId, t.userCode),
    uniqueIndex('token_codes_device_code_unique').on(t.deviceCodeDigest),
    index('token_codes_expires_at').on(t.expiresAt),
  ],
);

export type TokenCodeRow = typeof tokenCodes.$inferSelect;

/**
 * How a membership's device codes look and live (referenced by slug from `memberships.code_policy`).
 * A named resource, declared without namedResourceTable: its creation-order index, as its migration
 * shipped it, has another name and ends with the id.
 */
export const tokenCodePolicies = pgTable(
  'token_code_policies',
  {
    ...namedResource(),
    length: integer('length').notNull().default(8),
    containsLetters: boolean('contains_letters').notNull().default(true),
    containsDigits: boolean('contains_digits').notNull().default(true),
    expiresIn: integer('expires_in').notNull().default(600),
    ...sysColumns(),
  },
  (t) => [
    uniqueIndex('token_code_policies_slug_unique').on(t.membershipId, t.slug),
    index('token_code_policies_created').on(t.membershipId, t.createdAt, t.id),
  ],
);

export type TokenCodePolicyRow = typeof tokenCodePolicies.$inferSelect;

/**
 * A user's pending password reset or activation (contract "Account recovery, activation and
 * password checks"). The tokens themselves are never stored: a token is valid only while its
 * `jti` is the one here. The OTP is stored as HMAC-SHA256(secret_key, `<id>:<otp>`).
 */
export const userChallenges = pgTable(
  'user_challenges',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    kind: text('kind').$type<'reset' | 'activation'>().notNull(),
    /** The `jti` of the one token that may use this challenge. */
    jti: text('jti').notNull(),
    otpDigest: text('otp_digest'),
    otpAttempts: integer('otp_attempts').notNull().default(0),
    otpExpiresAt: ts('otp_expires_at'),
    /** When the reset was requested: another request within RESET_MIN_INTERVAL_SECONDS does nothing. */
    requestedAt: ts('requested_at').notNull().defaultNow(),
    /** When the row is no longer needed (token expiry, or the end of the request interval if later); swept after. */
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [uniqueIndex('user_challenges_user_kind_unique').on(t.userId, t.kind), index('user_challenges_expires_at').on(t.expiresAt)],
);

export type UserChallengeRow = typeof userChallenges.$inferSelect;

/**
 * One webhook call an event owes (contract "Durable webhook delivery"): written in the statement
 * that records the event, one row per active webhook on its type, so a crash or a full queue loses
 * nothing. An instance claims due rows (FOR UPDATE SKIP LOCKED) by setting `lease_id` and moving
 * `next_attempt_at` to the lease's end: a claimed row is not due again until its lease expires (a
 * crash, even kill -9), and one index serves both. `lease_id` fences the claimant: a slow instance
 * whose lease was taken over cannot overwrite the new claimant's result. Finished rows are
 * swept after WEBHOOK_DELIVERY_RETENTION_DAYS. No key on webhook_id: a deleted webhook's deliveries
 * stay, canceled, until swept.
 */
export const deliveries = pgTable(
  'deliveries',
  {
    ...membershipOwned(),
    webhookId: text('webhook_id').notNull(),
    eventId: text('event_id').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    /** Attempts finished (with an answer, an error or a timeout); an attempt cut by a crash is not counted. */
    attempts: integer('attempts').notNull().default(0),
    /** When the next attempt is due; while a lease is held, when the lease ends. */
    nextAttemptAt: ts('next_attempt_at').notNull(),
    /** The claim holding the row (null when none); a fence, never shown. */
    leaseId: text('lease_id'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // The claim's scan: due pending rows, oldest first.
    index('deliveries_due').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    // A webhook's list (newest first) and the cancel of its pending rows.
    index('deliveries_webhook_created').on(t.membershipId, t.webhookId, t.createdAt, t.id),
    // The retention sweep of finished rows.
    index('deliveries_finished').on(t.updatedAt).where(sql`status <> 'pending'`),
  ],
);

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';
export type DeliveryRow = typeof deliveries.$inferSelect;

/**
 * Failed sign-ins of one login (a user, or an unknown name lower-cased, within a membership) or of
 * one client address (over every membership), and its lock (contract "Sign-in defenses"). `id`
 * is the counter's key (`login:`, `name:` or `address:` and what it counts). A row lives
 * until its window and any lock have passed, plus a day for the lock's doubling; then the sweeper
 * deletes it.
 */
export const signInCounters = pgTable(
  'sign_in_counters',
  {
    id: text('id').primaryKey(),
    /** The login's membership (the counter goes with it); null for an address. */
    membershipId: text('membership_id').references(() => memberships.id, { onDelete: 'cascade' }),
    /** Attempts counted in the window; an attempt counts before its password is hashed (a success clears the row). */
    failures: integer('failures').notNull(),
    windowEndsAt: ts('window_ends_at').notNull(),
    lockedUntil: ts('locked_until'),
    /** Locks since the last success: the next lock lasts lock_seconds x 2^lock_level (at most a day). */
    lockLevel: integer('lock_level').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('sign_in_counters_expires_at').on(t.expiresAt), index('sign_in_counters_membership').on(t.membershipId)],
);

/**
 * A membership's keys for signing as an OpenID Provider (contract "Single sign-on", docs/oidc.md):
 * ES256, one current key per membership (`retired_at` null), kept in the JWKS after a rotation
 * until `expires_at` (twice the longest token lifetime) so tokens signed with it still verify,
 * then deleted by the expiry sweeper. `id`, the `kid`, is the public key's RFC 7638 thumbprint. The private
 * JWK never leaves the database but to the signer.
 */
export const signingKeys = pgTable(
  'signing_keys',
  {
    /** The key id (`kid`). */
    id: text('id').primaryKey(),
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    algorithm: text('algorithm').notNull(),
    publicJwk: jsonb('public_jwk').$type<Record<string, string>>().notNull(),
    privateJwk: jsonb('private_jwk').$type<Record<string, string>>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    retiredAt: ts('retired_at'),
    expiresAt: ts('expires_at'),
  },
  (t) => [
    uniqueIndex('signing_keys_current').on(t.membershipId).where(sql`${t.retiredAt} is null`),
    index('signing_keys_membership').on(t.membershipId),
    index('signing_keys_expires_at').on(t.expiresAt),
  ],
);

export type SigningKeyRow = typeof signingKeys.$inferSelect;

/**
 * A user's TOTP factor (RFC 6238) and pending passkey registration: one row per user, made on
 * first use. The secret is the base32 shared secret (an authenticator app holds the same one);
 * `totp_pending_secret` waits for its confirm code and never verifies a sign-in. `totp_last_step`
 * is the last time step accepted: a code of that step or an earlier one is refused (no replay).
 */
export const userMfa = pgTable(
  'user_mfa',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    totpSecret: text('totp_secret'),
    totpEnabledAt: ts('totp_enabled_at'),
    totpPendingSecret: text('totp_pending_secret'),
    totpLastStep: integer('totp_last_step'),
    /** The challenge of the latest passkey registration options (base64url), single use, with its expiry. */
    webauthnChallenge: text('webauthn_challenge'),
    webauthnChallengeExpiresAt: ts('webauthn_challenge_expires_at'),
  },
  (t) => [uniqueIndex('user_mfa_user_unique').on(t.membershipId, t.userId)],
);

export type UserMfaRow = typeof userMfa.$inferSelect;

/** A passkey (WebAuthn credential) registered as a second factor; `credential_id` and `public_key` base64url. */
export const webauthnCredentials = pgTable(
  'webauthn_credentials',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    name: text('name').notNull(),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    /** The authenticator's signature counter; 0 for authenticators that keep none. */
    counter: integer('counter').notNull().default(0),
    transports: jsonb('transports').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [uniqueIndex('webauthn_credentials_credential_unique').on(t.membershipId, t.credentialId), index('webauthn_credentials_user').on(t.membershipId, t.userId)],
);

export type WebauthnCredentialRow = typeof webauthnCredentials.$inferSelect;

/** A recovery code, known only by its SHA-256 digest; deleted when used (single use) or replaced. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    codeDigest: text('code_digest').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('recovery_codes_user_digest_unique').on(t.membershipId, t.userId, t.codeDigest)],
);

/**
 * A sign-in waiting for its second factor (the `mfa_token`, known by its SHA-256 digest): bound to
 * the user, the membership and the first step's grant; single use, 5 wrong codes at most. The
 * sweeper deletes it after `expires_at`.
 */
export const mfaSignIns = pgTable(
  'mfa_sign_ins',
  {
    ...membershipOwned(),
    ...ownedByUser(),
    tokenDigest: text('token_digest').notNull(),
    /** What the first step was: `{grant: "password"}` or `{grant: "provider", provider: <slug>}`. */
    grant: jsonb('grant').$type<Record<string, string>>().notNull(),
    /** RFC 8176 methods of the first step (`["pwd"]`, or none after a provider). */
    amr: jsonb('amr').$type<string[]>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** A TOTP secret offered for enrollment at sign-in (`mfa_policy: required`). */
    enrollSecret: text('enroll_secret'),
    webauthnChallenge: text('webauthn_challenge'),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [uniqueIndex('mfa_sign_ins_token_unique').on(t.tokenDigest), index('mfa_sign_ins_expires_at').on(t.expiresAt)],
);

export type MfaSignInRow = typeof mfaSignIns.$inferSelect;

/**
 * An OpenID Provider authorization in progress (docs/oidc.md, "Authorization"): the validated
 * request of `<issuer>/authorize`, then who signed in and which step is next. Its id names the
 * pages' URLs; the interaction cookie holds a secret whose SHA-256 digest is `cookie_digest`, so
 * a form posted without that cookie signs no one in. Lives at most 600 s; the sweeper deletes it.
 */
export const oidcInteractions = pgTable(
  'oidc_interactions',
  {
    ...membershipOwned(),
    cookieDigest: text('cookie_digest').notNull(),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    state: text('state'),
    nonce: text('nonce'),
    codeChallenge: text('code_challenge').notNull(),
    /** `prompt` and `max_age` as requested (`login`, `consent`; `none` never gets this far). */
    prompt: text('prompt'),
    maxAge: integer('max_age'),
    /** The RFC 8707 resource the access token is for, when one was asked. */
    resource: text('resource'),
    /**
     * The user a verified `id_token_hint` names (its `sub`): another user signing in here ends the
     * request with `login_required` (OpenID Connect Core 3.1.2.1). No foreign key: a hint names a
     * user the issuer knew, who may be gone since.
     */
    hintedUserId: text('hinted_user_id'),
    /** What the user must do next. */
    stage: text('stage').$type<'login' | 'second_factor' | 'consent'>().notNull().default('login'),
    /** Set once the password (and, at `consent`, the second factor) was right. */
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    amr: jsonb('amr').$type<string[] | null>(),
    authTime: ts('auth_time'),
    /** The single sign-on session the interaction runs in, once there is one. */
    sessionId: text('session_id').references(() => sessions.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('oidc_interactions_expires_at').on(t.expiresAt)],
);

export type OidcInteractionRow = typeof oidcInteractions.$inferSelect;

/**
 * An authorization code (docs/oidc.md, "Tokens"), known by the SHA-256 digest of the code: 60 s,
 * single use, bound to its client, `redirect_uri`, S256 challenge and session. `issued_token_id`
 * names the token record the exchange issued (the grant): a second use revokes it.
 */
export const oidcAuthorizationCodes = pgTable(
  'oidc_authorization_codes',
  {
    /** SHA-256 (base64url) of the code. */
    id: text('id').primaryKey(),
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    ...ownedByUser(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    nonce: text('nonce'),
    resource: text('resource'),
    authTime: ts('auth_time').notNull(),
    amr: jsonb('amr').$type<string[] | null>(),
    consumedAt: ts('consumed_at'),
    issuedTokenId: text('issued_token_id'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  // By user: a withdrawn consent uses up the user's codes for the client.
  (t) => [index('oidc_authorization_codes_expires_at').on(t.expiresAt), index('oidc_authorization_codes_user').on(t.membershipId, t.userId)],
);

export type OidcAuthorizationCodeRow = typeof oidcAuthorizationCodes.$inferSelect;

/** Consent a user gave a client (contract: remembered per user and client), with the scopes it covers. */
export const oidcConsents = pgTable(
  'oidc_consents',
  {
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    ...ownedByUser(),
    clientId: text('client_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.membershipId, t.userId, t.clientId] }), index('oidc_consents_client').on(t.clientId)],
);

export type OidcConsentRow = typeof oidcConsents.$inferSelect;

/**
 * An access token a client got for itself (`client_credentials`, `sub` the client): no user and
 * no session, so its record is here; introspection and revocation read it by `jti`.
 */
export const oidcClientTokens = pgTable(
  'oidc_client_tokens',
  {
    /** The token's `jti`. */
    id: text('id').primaryKey(),
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    clientId: text('client_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    ...revocation(),
  },
  (t) => [index('oidc_client_tokens_expires_at').on(t.expiresAt)],
);

export type OidcClientTokenRow = typeof oidcClientTokens.$inferSelect;
