import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { DomainError, RetryLaterError, userInactive } from '../common/errors';
import { newId, newSecret } from '../common/ids';
import { validationFailure } from '../common/validation';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { TokenCodeRow, UserRecord } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import type { ScopedApproval } from '../tokens/token-issuer';
import type { SessionMetadata, TokenResponse } from '../tokens/token.dto';
import { SignInSessions } from '../tokens/sign-in-sessions';
import { TokenService } from '../tokens/token.service';
import { SIGN_IN_ATTEMPTS, type SignInAttempts } from '../sign-in/sign-in-attempts';
import { parseClientInfo } from './client-info';
import { TokenCodeRepository } from './token-code.repository';
import { TokenCodePolicyRepository } from '../token-code-policies/token-code-policy.repository';
import { DEFAULT_USER_CODE_SHAPE, drawUserCode, normalizeUserCode, type UserCodeShape } from '../common/user-code';

/** The create answer (RFC 8628 section 3.2); the only place the device code ever appears. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface TokenCodeView {
  user_code: string;
  state: TokenCodeRow['state'];
  client_info: Record<string, string>;
  created_at: string;
  expires_at: string;
}

/**
 * Drawing a user code again on collision. With the default 28^8 codes running out cannot happen,
 * but a policy may allow as few as 10^5, and creating codes is public: anyone can fill that space
 * (a code stays stored until its expiry plus SWEEP_GRACE_SECONDS). A full space is not a bug of
 * the service: it answers 503 with Retry-After (NO_FREE_CODE_RETRY_SECONDS), never a 500.
 */
const MAX_USER_CODE_DRAWS = 10;
const NO_FREE_CODE_RETRY_SECONDS = 60;
const DEVICE_CODE_BYTES = 32;
/** The longest `client_info` value (contract: 256 characters), which the service's own values keep to as well. */
const MAX_CLIENT_INFO_VALUE = 256;

const digestOf = (deviceCode: string): string => createHash('sha256').update(deviceCode).digest('hex');

const toView = (row: TokenCodeRow): TokenCodeView => ({
  user_code: row.userCode,
  state: row.state,
  client_info: row.clientInfo,
  created_at: row.createdAt.toISOString(),
  expires_at: row.expiresAt.toISOString(),
});

const codeNotFound = (): DomainError => new DomainError('TokenCodeNotFound', 'The code does not exist or has expired');

@Injectable()
export class TokenCodesService {
  constructor(
    private readonly codes: TokenCodeRepository,
    private readonly memberships: MembershipCache,
    private readonly recorder: EventRecorder,
    private readonly tokens: TokenService,
    private readonly signIns: SignInSessions,
    private readonly policies: TokenCodePolicyRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  /** A code for the specification's route, requested from `address` (anonymous, so counted per address). */
  async create(membershipId: string, clientInfo: unknown, address: string): Promise<DeviceAuthorization> {
    return this.createCode(membershipId, parseClientInfo(clientInfo), null, address);
  }

  /**
   * A code an OpenID Provider client asked for at `<issuer>/device/authorize` (RFC 8628 3.1): the same
   * code as the specification's route makes (the membership's policy, the same approval routes and
   * `/device` page), tied to the client and the scopes it asked. Its `client_info` is the client's
   * name and what it asks, written by the service, so the approving user sees which application it admits.
   */
  async createForClient(
    membershipId: string,
    client: { id: string; name: string },
    scopes: readonly string[],
    address: string,
  ): Promise<DeviceAuthorization> {
    const info: Record<string, string> = { name: client.name.slice(0, MAX_CLIENT_INFO_VALUE), client_id: client.id };
    if (scopes.length) info.scope = scopes.join(' ').slice(0, MAX_CLIENT_INFO_VALUE);
    return this.createCode(membershipId, info, { clientId: client.id, scopes: [...scopes] }, address);
  }

  private async createCode(
    membershipId: string,
    info: Record<string, string>,
    oidc: { clientId: string; scopes: string[] } | null,
    address: string,
  ): Promise<DeviceAuthorization> {
    const membership = await this.memberships.get(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    // Anyone may ask (a public client too): one address may not hold enough codes to fill a
    // short code policy's space, nor grow the table without bound.
    await this.attempts.countDeviceCodeRequest(address);
    const shape = await this.shapeOf(membershipId, membership.codePolicy);
    const deviceCode = newSecret(DEVICE_CODE_BYTES);
    const interval = this.config.devicePollIntervalSeconds;
    for (let draw = 0; draw < MAX_USER_CODE_DRAWS; draw++) {
      const userCode = drawUserCode(shape);
      const stored = await this.codes.insert({
        id: newId(),
        membershipId,
        userCode,
        deviceCodeDigest: digestOf(deviceCode),
        clientInfo: info,
        pollInterval: interval,
        expiresAt: new Date(Date.now() + shape.expiresIn * 1000),
        oidcClientId: oidc?.clientId ?? null,
        oidcScopes: oidc?.scopes ?? null,
      });
      if (!stored) continue;
      const verificationUri = this.config.deviceVerificationUri.replaceAll('{membership_id}', encodeURIComponent(membershipId));
      const complete = new URL(verificationUri);
      complete.searchParams.set('user_code', userCode);
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: complete.toString(),
        expires_in: shape.expiresIn,
        interval,
      };
    }
    throw new RetryLaterError(
      'AuthenticationServiceUnavailable',
      `No free user code after ${MAX_USER_CODE_DRAWS} draws: the membership's code policy allows too few codes for the codes now stored`,
      NO_FREE_CODE_RETRY_SECONDS,
    );
  }

  /** The membership's code policy; none named (or none left): the contract's defaults. */
  private async shapeOf(membershipId: string, codePolicy: string | null): Promise<UserCodeShape> {
    const policy = codePolicy === null ? undefined : await this.policies.findBySlug(membershipId, codePolicy);
    if (!policy) return DEFAULT_USER_CODE_SHAPE;
    return { length: policy.length, containsLetters: policy.containsLetters, containsDigits: policy.containsDigits, expiresIn: policy.expiresIn };
  }

  async view(caller: Caller, membershipId: string, userCode: string, address: string): Promise<TokenCodeView> {
    const { userId } = requireUser(caller);
    return toView(await this.lookUpTyped(membershipId, userId, address, normalizeUserCode(userCode)));
  }

  /**
   * The live code a user typed, or 404. A user code is a secret a person types, short when a
   * policy makes it so (RFC 8628 5.1: guessing must be limited): each lookup is an attempt under
   * the sign-in defenses, of the user's user codes (counted apart from its sign-in) and of its
   * address. A code that names nothing is a failure, and past the membership's max_failures every
   * lookup answers 429 until the lock ends. One that names a code is no failure, but does not start
   * the count over either: creating a code is public, so a guesser always holds one that exists.
   */
  private async lookUpTyped(membershipId: string, userId: string, address: string, userCode: string): Promise<TokenCodeRow> {
    const attempt = { membershipId, login: { userCodesOf: userId }, address };
    await this.attempts.assertOpen(attempt);
    const row = await this.codes.findLive(membershipId, userCode);
    if (!row) {
      await this.attempts.recordFailure(attempt);
      throw codeNotFound();
    }
    await this.attempts.recordNeither(attempt);
    return row;
  }

  /**
   * Approval or denial by any active user of the membership (it grants the user's own access, so
   * no permission is needed): one conditional update, its event in the same transaction.
   */
  async decide(caller: Caller, membershipId: string, rawUserCode: string, state: 'approved' | 'denied', address: string): Promise<TokenCodeView> {
    const { userId, profile, amr, sessionId } = requireUser(caller);
    const userCode = normalizeUserCode(rawUserCode);
    // A session that skipped the factor its user has now (one opened before it was enabled) cannot hand out a device's session.
    if (state === 'approved') await this.signIns.assertPassedSecondStep(membershipId, userId, amr);
    // A scoped token approves no more than itself (contract, "Decisions of the third review").
    const scoped =
      state === 'approved' && caller.kind === 'user' && caller.scopes?.length
        ? { scopes: caller.scopes, sessionId: caller.sessionId, tokenId: caller.tokenId, until: new Date(caller.tokenExpiresAt * 1000) }
        : null;
    const typed = await this.lookUpTyped(membershipId, userId, address, userCode);
    // An application's sign-in (an OpenID Provider code) may hand out a refreshable grant and ID
    // tokens: a scoped token, which can never become a refreshable session (third review), does not
    // approve one. Its oidc_client_id never changes, so reading it first is no race.
    if (scoped && typed.oidcClientId) {
      throw new DomainError('AccessDenied', "A scoped token cannot approve an application's sign-in; approve it with a full session");
    }
    const decided = await this.recorder.transaction(async (record) => {
      const row = await this.codes.decide(
        membershipId,
        userCode,
        { state, approvedBy: state === 'approved' ? userId : null, scoped, amr: state === 'approved' ? amr : null },
        state === 'approved' ? sessionId : null,
      );
      if (!row) return undefined;
      record({
        membershipId,
        eventType: state === 'approved' ? 'TokenCodeApproved' : 'TokenCodeDenied',
        utilizerId: userId,
        document: {
          user: profile,
          code: { user_code: row.userCode, client_info: row.clientInfo, created_at: row.createdAt.toISOString() },
        },
      });
      return row;
    });
    if (decided) return toView(decided);
    const live = await this.codes.findLive(membershipId, userCode);
    // Still pending: the approving session was revoked since this request was authenticated.
    if (live?.state === 'pending') throw new DomainError('TokenWasRevoked', 'The token has been revoked');
    if (live) throw new DomainError('TokenCodeAlreadyDecided', 'The code has already been approved or denied');
    throw codeNotFound();
  }

  /** The device's poll (RFC 8628 section 3.4), checked in the contract's order. */
  async poll(membershipId: string, deviceCode: unknown, metadata: SessionMetadata): Promise<TokenResponse> {
    if (typeof deviceCode !== 'string' || !deviceCode) throw validationFailure([{ field: 'device_code', message: 'is required' }]);
    if (!(await this.memberships.get(membershipId))) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    // A code an OpenID Provider client asked for is redeemed at its issuer's token endpoint only:
    // here it would become a token pair of the management API, which the client never asked for.
    const { code, membership, approver } = await this.approvedCode(membershipId, deviceCode, null);
    // Approved. A deleted approver deletes its codes with it, so the approver is there.
    if (!approver?.isActive) throw userInactive();
    const scoped = scopedApprovalOf(code);
    // Approved with scopes before approvals kept the approving token's session: never a full pair.
    if (code.scopes?.length && !scoped) throw new DomainError('AuthorizationDenied', 'The approval cannot be used; approve the code again');
    const issued = await this.tokens.issueForDeviceCode(membership, approver, { codeId: code.id, userCode: code.userCode, scoped, amr: code.amr }, metadata);
    if (!issued) {
      throw await this.notIssued(code.id, scoped ? new DomainError('AuthorizationDenied', 'The session that approved the code has ended') : userInactive());
    }
    return issued;
  }

  /**
   * Why an approved code's issuance stored nothing, from the code as it is now: used by a parallel
   * poll (or deleted with its approver), denied meanwhile (a user-wide revocation), or, still
   * approved, `stillApproved`: what the issuance needed ended (the session a scoped approval
   * joins, the user's standing).
   */
  private async notIssued(codeId: string, stillApproved: DomainError): Promise<DomainError> {
    const state = await this.codes.stateOf(codeId);
    if (state === 'denied') return new DomainError('AuthorizationDenied', 'The user denied the code');
    if (state === 'approved') return stillApproved;
    return new DomainError('InvalidDeviceCode', 'The device code is not valid');
  }

  /**
   * The checks every poll makes, in RFC 8628's order, up to an approved code: the code of `owner`
   * (an OpenID Provider client's id, or null for the specification's own routes; any other code is
   * as unknown), not expired, not pending (a poll too soon slows the device down), not denied.
   */
  private async approvedCode(membershipId: string, deviceCode: string, owner: string | null) {
    const digest = digestOf(deviceCode);
    const found = await this.codes.findForPoll(membershipId, digest);
    if (!found || !sameDigest(found.code.deviceCodeDigest, digest) || found.code.state === 'consumed' || found.code.oidcClientId !== owner) {
      throw new DomainError('InvalidDeviceCode', 'The device code is not valid');
    }
    const { code } = found;
    if (code.expiresAt.getTime() <= Date.now()) throw new DomainError('ExpiredToken', 'The device code has expired');
    if (code.state === 'pending') {
      const outcome = await this.codes.recordPendingPoll(code.id);
      if (outcome === 'slow_down') throw new DomainError('SlowDown', 'Polled too soon: wait longer between polls');
      throw new DomainError('AuthorizationPending', 'The user has not approved the code yet');
    }
    if (code.state === 'denied') throw new DomainError('AuthorizationDenied', 'The user denied the code');
    return found;
  }

  /**
   * The poll of an OpenID Provider client at its issuer's token endpoint (RFC 8628 3.4): the checks
   * of `poll` in the same order, for the client's own codes only (another client's code, or one of
   * the specification's routes, is as unknown), then `issue` with the approved code, which its
   * issuing statement uses up (undefined when it stored nothing: a parallel poll then gets
   * InvalidDeviceCode, a code denied meanwhile AuthorizationDenied).
   */
  async pollForClient<T>(
    membershipId: string,
    clientId: string,
    deviceCode: string,
    issue: (approved: ApprovedClientCode) => Promise<T | undefined>,
  ): Promise<T> {
    const { code, approver } = await this.approvedCode(membershipId, deviceCode, clientId);
    // A user made inactive denies its approved codes first (third review); one deactivated in between is denied here too.
    const inactive = new DomainError('AuthorizationDenied', 'The user account is not active');
    if (!approver?.isActive) throw inactive;
    // Never approved with a scoped token (decide refuses it); a row that says otherwise hands out nothing.
    if (code.scopes?.length) throw new DomainError('AuthorizationDenied', 'The approval cannot be used; approve the code again');
    const issued = await issue({
      codeId: code.id,
      approver,
      scopes: code.oidcScopes ?? [],
      amr: code.amr,
      decidedAt: code.decidedAt ?? new Date(),
      userCode: code.userCode,
    });
    if (issued === undefined) throw await this.notIssued(code.id, inactive);
    return issued;
  }
}

/** An approved OpenID Provider code, as the issuer's device grant turns it into tokens. */
export interface ApprovedClientCode {
  /** The code's row, which the issuing statement uses up. */
  codeId: string;
  approver: UserRecord;
  /** The OpenID scopes the client asked at device/authorize. */
  scopes: string[];
  amr: string[] | null;
  /** When the user approved: the moment it authenticated the device's sign-in. */
  decidedAt: Date;
  userCode: string;
}

/** The scoped token an approval stands for, when a scoped token approved the code. */
function scopedApprovalOf(code: TokenCodeRow): ScopedApproval | null {
  if (!code.scopes?.length || !code.approvedSessionId || !code.approvedTokenId || !code.approvedUntil) return null;
  return { scopes: code.scopes, sessionId: code.approvedSessionId, tokenId: code.approvedTokenId, until: code.approvedUntil };
}

function sameDigest(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(computed, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function requireUser(caller: Caller) {
  if (caller.kind !== 'user') throw new DomainError('AccessDenied', 'Device codes are viewed and decided by users');
  if (!caller.profile) throw new Error('Token code routes must be declared with @Authenticated({ profile: true })');
  return { userId: caller.id, profile: caller.profile, amr: caller.amr, sessionId: caller.sessionId };
}
