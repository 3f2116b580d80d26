import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { DomainError, validationError } from '../common/errors';
import { isPossibleId, newId } from '../common/ids';
import { isPlainEmailAddress, USERNAME_PATTERN } from '../common/patterns';
import type { MembershipRow, ProviderRow, UserRecord, UserRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { SYSTEM_UTILIZER } from '../events/event-types';
import { MembershipRepository } from '../memberships/membership.repository';
import type { SessionMetadata, TokenResponse } from '../tokens/token.dto';
import { SignInSessions } from '../tokens/sign-in-sessions';
import { noPasswordHash } from '../users/password-hasher';
import { toUserResponse } from '../users/user.mapper';
import { UserRepository } from '../users/user.repository';
import { ActivationIssuer } from '../recovery/activation-issuer';
import { UsersService } from '../users/users.service';
import { OidcClient } from './oidc-client';
import { ProviderCache } from './provider-cache';
import { ProviderIdentityRepository } from './provider-identity.repository';

const MAX_FIELD_LENGTH = 16 * 1024;
const MAX_NAME_LENGTH = 128;

/** The two accepted bodies of POST /oauth/{slug}/login. */
type LoginRequest =
  | { mode: 'id_token'; idToken: string; nonce: string | undefined }
  | { mode: 'code'; code: string; redirectUri: string; codeVerifier: string | undefined; nonce: string | undefined };

const ID_TOKEN_FIELDS = new Set(['id_token', 'nonce']);
const CODE_FIELDS = new Set(['code', 'redirect_uri', 'code_verifier', 'nonce']);

function stringField(body: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const value = body[field];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MAX_FIELD_LENGTH) {
    throw validationError(field, `must be a non-empty string of at most ${MAX_FIELD_LENGTH} characters`);
  }
  return value;
}

/** Exactly one of the two bodies; identity claims in the body (email, sub, ...) are another field: 400. */
export function parseLoginRequest(body: unknown): LoginRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationError('body', 'must be a JSON object');
  const fields = body as Record<string, unknown>;
  const keys = Object.keys(fields);
  const hasIdToken = 'id_token' in fields;
  const hasCode = 'code' in fields;
  if (hasIdToken === hasCode) throw validationError('body', 'must hold exactly one of id_token or code');
  const allowed = hasIdToken ? ID_TOKEN_FIELDS : CODE_FIELDS;
  const unknown = keys.find((key) => !allowed.has(key));
  if (unknown !== undefined) throw validationError(unknown.slice(0, 64), 'is not allowed with ' + (hasIdToken ? 'id_token' : 'code'));
  const nonce = stringField(fields, 'nonce', false);
  if (hasIdToken) return { mode: 'id_token', idToken: stringField(fields, 'id_token', true) as string, nonce };
  return {
    mode: 'code',
    code: stringField(fields, 'code', true) as string,
    redirectUri: stringField(fields, 'redirect_uri', true) as string,
    codeVerifier: stringField(fields, 'code_verifier', false),
    nonce,
  };
}

/** Some providers (Apple) send `email_verified` as the string "true". */
const emailVerified = (claims: JWTPayload): boolean => claims.email_verified === true || claims.email_verified === 'true';

const clipName = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, MAX_NAME_LENGTH) : null);

/**
 * Sign-in through an external OpenID Connect provider (contract "External identity providers"):
 * the identity comes only from the verified id token; the user is found by its link, linked by
 * verified e-mail when the provider is trusted, or signed up.
 */
@Injectable()
export class ProviderSignIn {
  constructor(
    private readonly memberships: MembershipRepository,
    private readonly providers: ProviderCache,
    private readonly oidc: OidcClient,
    private readonly identities: ProviderIdentityRepository,
    private readonly users: UserRepository,
    private readonly userRules: UsersService,
    private readonly recorder: EventRecorder,
    private readonly signIns: SignInSessions,
    private readonly activations: ActivationIssuer,
  ) {}

  async login(membershipId: string | undefined, slug: string, body: unknown, metadata: SessionMetadata): Promise<TokenResponse> {
    if (!membershipId) throw new DomainError('MembershipIdRequired', 'The membership_id query parameter or the X-Service-Alias header is required');
    // A membership id that cannot exist is not looked up (contract, "Bounded work").
    const membership = isPossibleId(membershipId) ? await this.memberships.findById(membershipId) : undefined;
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const request = parseLoginRequest(body);
    const provider = slug.length <= 64 ? await this.providers.get(membership.id, slug) : undefined;
    if (!provider) throw new DomainError('ProviderNotFound', 'The provider does not exist');
    if (!provider.isActive) throw new DomainError('ProviderDisabled', 'The provider is disabled');

    const client = { issuer: provider.issuer, clientId: provider.clientId };
    let idToken: string;
    if (request.mode === 'code') {
      if (provider.clientSecret === null) throw validationError('code', 'the provider has no client secret to exchange a code with');
      idToken = await this.oidc.exchangeCode(provider.issuer, { clientId: provider.clientId, clientSecret: provider.clientSecret }, request);
    } else {
      idToken = request.idToken;
    }
    const claims = await this.oidc.verifyIdToken(client, idToken, request.nonce);
    const user = await this.resolveUser(membership, provider, claims);
    return this.signIns.signInVerified(membership, user, metadata, { grant: 'provider', provider: provider.slug });
  }

  private async resolveUser(membership: MembershipRow, provider: ProviderRow, claims: JWTPayload & { sub: string }): Promise<UserRecord> {
    const membershipId = membership.id;
    // Under `user_activation: passive` a signed-up user starts inactive and gets an activation mail.
    const activeOnSignUp = membership.userActivation !== 'passive';
    const linked = await this.identities.findUser(membershipId, provider.id, claims.sub);
    if (linked) return withoutHash(linked);
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : undefined;
    const verified = emailVerified(claims);
    // The user type's custom-field rules, as POST users applies them. Looked up before the
    // transaction (the user type cache must not query inside one); only a sign-up uses the
    // answer, so a failure is thrown then, not when the subject links to an existing user.
    const signUpCustomFields = await this.userRules.customFieldsForSignUp(membershipId, provider.defaultUserType).then(
      (values) => () => values,
      (error: unknown) => () => {
        throw error;
      },
    );
    return this.recorder.transaction(async (record) => {
      // Two first sign-ins of one subject at once: the second waits here and finds the first's link.
      await this.identities.lockSubject(provider.id, claims.sub);
      const linkedMeanwhile = await this.identities.findUser(membershipId, provider.id, claims.sub);
      if (linkedMeanwhile) return withoutHash(linkedMeanwhile);
      if (email) await this.identities.lockEmail(membershipId, email);
      const existing = email ? await this.users.findByEmail(membershipId, email) : undefined;
      if (existing) {
        if (!provider.trustEmail) throw new DomainError('ProviderEmailNotTrusted', 'A user with this e-mail address exists and the provider is not trusted to link it');
        if (!verified) throw new DomainError('ProviderEmailNotVerified', 'The provider has not verified the e-mail address');
        await this.identities.link(membershipId, provider.id, claims.sub, existing.id);
        // The provider verified this very address.
        const provenAt = new Date();
        await this.users.setEmailVerified(membershipId, existing.id, existing.emailAddress, provenAt);
        return withoutHash({ ...existing, emailVerifiedAt: provenAt });
      }
      if (!email || !verified || !isPlainEmailAddress(email)) throw new DomainError('ProviderEmailNotVerified', 'Signing up needs an e-mail address the provider has verified');
      const username = USERNAME_PATTERN.test(email) ? email : `${provider.slug}-${createHash('sha256').update(claims.sub).digest('hex').slice(0, 16)}`;
      // Logins stay unambiguous (contract, "Decisions of the third review"): an e-mail that is
      // another user's username, or a username that is another user's e-mail, would make a
      // password sign-in by that name find two users.
      if (await this.users.findLoginConflict(membershipId, username, email)) {
        throw new DomainError('UserAlreadyExists', 'A user with this username or e-mail address already exists');
      }
      const row = await this.users.insert({
        id: newId(),
        membershipId,
        username,
        emailAddress: email,
        // Password sign-in answers InvalidCredentials until a reset sets one.
        passwordHash: noPasswordHash(),
        firstname: clipName(claims.given_name),
        lastname: clipName(claims.family_name),
        role: provider.defaultRole,
        userType: provider.defaultUserType,
        customFields: signUpCustomFields(),
        isActive: activeOnSignUp,
        sourceProvider: provider.slug,
        // Signing up needs the provider's verified claim (checked above).
        emailVerifiedAt: new Date(),
        createdBy: SYSTEM_UTILIZER,
      });
      await this.identities.link(membershipId, provider.id, claims.sub, row.id);
      const mailValues = activeOnSignUp ? undefined : await this.activations.open(membership, row.id);
      record({ membershipId, eventType: 'UserCreated', utilizerId: SYSTEM_UTILIZER, document: toUserResponse(row) }, mailValues);
      return withoutHash(row);
    });
  }
}

function withoutHash(row: UserRow): UserRecord {
  const { passwordHash: _hash, ...user } = row;
  return user;
}
