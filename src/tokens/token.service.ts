import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { EventRecorder } from '../events/event-recorder';
import { holdsScope, PermissionExpression } from '../permissions';
import type { UserRecord } from '../database/schema';
import { CallerPermissions } from '../roles/caller-permissions';
import { ApplicationCredentials } from '../applications/application-credentials';
import type { Credentials } from '../common/authorization-header';
import { IssuedTokenStore, tokenGeneratedEvent } from './issued-token-store';
import { toUserCaller } from './token-caller';
import { type IssuedTokens, type ScopedApproval, TokenIssuer } from './token-issuer';
import { TokenRevoker } from '../sessions/token-revoker';
import { DEVICE_CODE_SESSION_GRANT, type SigningMembership } from '../sessions/token-session.repository';
import { RefreshTokenReuse, TokenVerifier, type VerifiedBearer } from './token-verifier';
import type { SessionMetadata, TokenResponse, VerificationResponse } from './token.dto';

const MAX_SCOPES = 100;

/** TokenRevoked's reason when a rotated refresh token came back. */
const REFRESH_TOKEN_REUSE = 'refresh_token_reuse';

/**
 * Tokens beyond sign-in (SignInSessions opens those): a device code's tokens, scoped tokens,
 * refresh, verification and revocation.
 */
@Injectable()
export class TokenService {
  constructor(
    private readonly issuer: TokenIssuer,
    private readonly issued: IssuedTokenStore,
    private readonly verifier: TokenVerifier,
    private readonly revoker: TokenRevoker,
    private readonly recorder: EventRecorder,
    private readonly applications: ApplicationCredentials,
    private readonly permissions: CallerPermissions,
  ) {}

  /**
   * A device code's tokens (RFC 8628): a pair in a new sign-in session of the approver, or, for a
   * code a scoped token approved, a scoped token in that token's session that outlives neither it
   * nor its session (a scoped token never becomes a refreshable session). The code is used up in
   * the statement that stores them. Undefined when nothing was stored: the code was used or denied
   * meanwhile, or what the tokens needed ended (the session a scoped approval joins, the user's
   * standing); the caller tells which.
   */
  async issueForDeviceCode(
    membership: SigningMembership,
    user: UserRecord,
    grant: { codeId: string; userCode: string; scoped: ScopedApproval | null; amr: readonly string[] | null },
    metadata: SessionMetadata,
  ): Promise<TokenResponse | undefined> {
    const issued = grant.scoped
      ? this.scopedFromApproval(membership, user, grant.scoped, grant.amr, metadata)
      : this.issuer.pair(membership, user, metadata, { scopes: null, amr: grant.amr });
    // A new session, but no new sign-in: whatever asks how recently the user proved itself
    // (managing factors without a password) must not take an approval by an old session for one.
    if (!grant.scoped) issued.session.grantType = DEVICE_CODE_SESSION_GRANT;
    const generated = tokenGeneratedEvent(user, issued.response);
    const event = { ...generated, document: { ...generated.document, grant: 'device_code', user_code: grant.userCode } };
    const stored = await this.issued.store(issued, [event], { kind: 'device_code', codeId: grant.codeId });
    return stored ? issued.response : undefined;
  }

  private scopedFromApproval(
    membership: SigningMembership,
    user: UserRecord,
    approval: ScopedApproval,
    amr: readonly string[] | null,
    metadata: SessionMetadata,
  ): IssuedTokens {
    const remaining = Math.floor((approval.until.getTime() - Date.now()) / 1000);
    if (remaining <= 0) throw new DomainError('ExpiredToken', 'The token that approved the code has expired');
    const origin = { sessionId: approval.sessionId, parentId: approval.tokenId, amr };
    return this.issuer.scoped(membership, user, origin, approval.scopes, metadata, remaining);
  }

  /** A narrower token from a valid access token: every rule of the specification's scoped tokens. */
  async issueScoped(authorization: Credentials, scopes: unknown, metadata: SessionMetadata): Promise<TokenResponse> {
    if (authorization.scheme !== 'bearer') throw new DomainError('InvalidToken', 'Scoped tokens are issued for Bearer access tokens only');
    const verified = await this.verifier.verify(authorization.token, 'access');
    const caller = toUserCaller(verified);
    const requested = parseScopes(scopes);
    const holder = await this.permissions.holderOf(caller);
    for (const scope of requested) {
      if (!holdsScope(holder, scope.expression)) {
        throw new DomainError('UserHasNoPermissionForThisScope', `The user does not hold the permission "${scope.text}"`);
      }
    }
    const parentId = verified.session.kind === 'scoped' && verified.session.parentId ? verified.session.parentId : verified.session.id;
    const origin = { sessionId: verified.family.id, parentId, amr: verified.claims.amr };
    // A token carrying scopes only narrows (third review: "scoped means carrying scopes"), in time
    // too: what it makes ends when it does, else a chain of them would renew access for ever, a
    // scoped token made refreshable. From a full access token the membership's lifetime applies.
    const carriesScopes = verified.session.kind === 'scoped' || (verified.session.scopes?.length ?? 0) > 0;
    const remaining = carriesScopes ? verified.claims.exp - Math.floor(Date.now() / 1000) : Number.POSITIVE_INFINITY;
    if (remaining <= 0) throw new DomainError('TokenWasExpired', 'The token has expired');
    const issued = this.issuer.scoped(verified.membership, verified.user, origin, requested.map((s) => s.text), metadata, remaining);
    // Its session revoked between the check and the write: nothing was issued.
    if (!(await this.issued.store(issued, [tokenGeneratedEvent(verified.user, issued.response)]))) {
      throw new DomainError('TokenWasRevoked', 'The token has been revoked');
    }
    return issued.response;
  }

  /**
   * A new pair for a valid refresh token, in the same session; with `revoke` the used pair works
   * only once. A rotated refresh token presented again ends its whole session (the pair issued
   * from it included): the legitimate holder and a thief cannot be told apart.
   */
  async refresh(token: string | undefined, revoke: boolean, metadata: SessionMetadata): Promise<TokenResponse> {
    if (!token) throw new DomainError('RefreshTokenRequired', 'A refresh token is required in the Authorization header or the body');
    const verified = await this.verifyRefreshToken(token);
    const { user, session, family, membership } = verified;
    const issued = this.issuer.pair(
      membership,
      user,
      { ipAddress: metadata.ipAddress ?? session.ipAddress ?? undefined, userAgent: metadata.userAgent ?? session.userAgent ?? undefined },
      { sessionId: family.id, scopes: session.scopes, amr: verified.claims.amr },
    );
    const generated = tokenGeneratedEvent(user, issued.response);
    const stored = await this.issued.store(issued, [{ ...generated, eventType: 'TokenRefreshed' }, generated], revoke ? { kind: 'refreshed_record', tokenId: session.id, revokedBy: user.id } : undefined);
    if (!stored) {
      // Another request rotated this refresh token first (a reuse as well, only a concurrent one),
      // or the session was revoked meanwhile (then this revokes nothing more).
      await this.endReusedSession({ membershipId: user.membershipId, sessionId: family.id, userId: user.id });
      throw new DomainError('RefreshTokenWasRevoked', 'The refresh token has already been used');
    }
    return issued.response;
  }

  private async verifyRefreshToken(token: string): Promise<VerifiedBearer> {
    try {
      return await this.verifier.verify(token, 'refresh');
    } catch (error) {
      if (error instanceof RefreshTokenReuse) await this.endReusedSession(error.reused);
      throw error;
    }
  }

  /** The reused token's owner is recorded as the one who revoked: the service acts on its behalf. */
  private async endReusedSession(reused: { membershipId: string; sessionId: string; userId: string }): Promise<void> {
    await this.recorder.transaction((record) =>
      this.revoker.revokeSession(record, reused.membershipId, reused.sessionId, reused.userId, REFRESH_TOKEN_REUSE),
    );
  }

  async verify(credentials: Credentials, presented: string): Promise<VerificationResponse> {
    if (credentials.scheme === 'basic') {
      const application = await this.applications.verifyBasic(credentials.applicationId, credentials.secret);
      await this.recorder.recordRead({
        membershipId: application.membershipId,
        eventType: 'TokenVerified',
        utilizerId: application.id,
        document: { token_type: 'Basic', application_id: application.id },
      });
      return { verified: true, token: presented };
    }
    const verified = await this.verifier.verifyCaller(credentials.token, 'any');
    const expiresAt = new Date(verified.claims.exp * 1000);
    // Written just after the answer, with the verifications of the same few milliseconds (recordRead).
    await this.recorder.recordRead({
      membershipId: verified.claims.prn,
      eventType: 'TokenVerified',
      utilizerId: verified.claims.sub,
      document: { token_type: 'Bearer', is_refresh_token: verified.isRefreshToken, expires_at: expiresAt.toISOString() },
    });
    return {
      verified: true,
      token: presented,
      token_kind: verified.isRefreshToken ? 'refresh_token' : 'access_token',
      remaining_time: Math.max(0, verified.claims.exp - Math.floor(Date.now() / 1000)),
      ...(verified.claims.amr?.length ? { amr: verified.claims.amr } : {}),
    };
  }

  /**
   * A pair's token revokes its whole session; a scoped token revokes itself only. `logoutAll`
   * revokes every session of the user and needs an unscoped token.
   */
  async revoke(token: string | undefined, logoutAll: boolean): Promise<void> {
    if (!token) throw new DomainError('InvalidToken', 'A token is required in the Authorization header or the body');
    const { user, session, family } = await this.verifier.verify(token, 'any');
    const scoped = session.kind === 'scoped';
    // Any token carrying scopes counts as scoped here, whatever made it (contract, "Decisions of the third review").
    if (logoutAll && (scoped || (session.scopes?.length ?? 0) > 0)) {
      throw new DomainError('AccessDenied', 'Signing out everywhere needs an unscoped token', undefined, 'insufficient_scope');
    }
    const revoked = await this.recorder.transaction(async (record) => {
      if (logoutAll) return this.revoker.revokeAllOfUser(record, user.membershipId, user.id, user.id, 'logout-all');
      if (scoped) return this.revoker.revokeTokenRecord(record, user.membershipId, session.id, user.id, 'revoked');
      return this.revoker.revokeSession(record, user.membershipId, family.id, user.id, 'revoked');
    });
    if (revoked === 0) throw new DomainError('TokenWasRevoked', 'The token has already been revoked');
  }
}

function parseScopes(scopes: unknown): { text: string; expression: PermissionExpression }[] {
  if (scopes === undefined || scopes === null || (Array.isArray(scopes) && scopes.length === 0)) {
    throw new DomainError('ScopeRequired', 'At least one scope is required');
  }
  if (!Array.isArray(scopes)) throw new DomainError('InvalidScope', 'scopes must be an array of permission expressions');
  if (scopes.length > MAX_SCOPES) throw new DomainError('InvalidScope', `At most ${MAX_SCOPES} scopes may be requested`);
  const parsed: { text: string; expression: PermissionExpression }[] = [];
  for (const scope of scopes) {
    const expression = PermissionExpression.tryParse(scope);
    if (!expression) throw new DomainError('InvalidScope', 'Each scope must be a valid permission expression such as "users.read"');
    if (!parsed.some((p) => p.text === scope)) parsed.push({ text: scope as string, expression });
  }
  return parsed;
}

