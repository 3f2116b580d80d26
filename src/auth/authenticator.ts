import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { ApplicationRepository } from '../applications/application.repository';
import { digestSecret, secretMatches } from '../applications/application-secret';
import type { ApplicationRow, UserRecord } from '../database/schema';
import { TokenVerifier, type VerifiedBearer, type VerifiedCaller, type VerifiedWithUser } from '../tokens/token-verifier';
import type { ApplicationCaller, Caller, UserCaller } from './caller';
import { parseAuthorization } from './authorization-header';

/** Compared against when the application does not exist, so a miss costs what a hit costs. */
const DECOY_DIGEST = digestSecret('decoy-secret-for-unknown-applications');

const invalidToken = (message = 'The token is not valid'): DomainError => new DomainError('InvalidToken', message);

/** The one answer to every Basic problem (the contract: identical, byte for byte). */
const invalidBasicToken = (): DomainError => new DomainError('InvalidToken', 'The token is not valid', undefined, 'basic');

@Injectable()
export class Authenticator {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly applications: ApplicationRepository,
  ) {}

  /**
   * Resolves the caller of a request from its Authorization header, or throws a 401 error. With
   * `userRecord`, a user caller carries the whole user row.
   */
  async authenticate(authorization: unknown, options: { userRecord?: boolean } = {}): Promise<Caller> {
    if (authorization === undefined || authorization === '') {
      throw new DomainError('InvalidToken', 'An Authorization header with a Bearer or Basic token is required', undefined, 'bearer');
    }
    const credentials = parseAuthorization(authorization);
    if (!credentials) throw invalidToken('The Authorization header must be "Bearer <token>" or "Basic <id>:<secret>"');
    if (credentials.scheme === 'basic') {
      return toApplicationCaller(await this.verifyBasic(credentials.applicationId, credentials.secret));
    }
    if (!options.userRecord) return toUserCaller(await this.verifier.verifyCaller(credentials.token, 'access'));
    const verified = await this.verifier.verifyWithUser(credentials.token, 'access');
    return toUserCaller(verified, verified.user);
  }

  /**
   * Every Basic problem is the same InvalidToken, in about the same time. An id that cannot exist
   * (empty for an unreadable value) is not looked up, but its secret is still compared.
   */
  async verifyBasic(applicationId: string, secret: string): Promise<ApplicationRow> {
    const application = isPossibleId(applicationId) ? await this.applications.findAnyById(applicationId) : undefined;
    const matches = secretMatches(secret, application?.secretDigest ?? DECOY_DIGEST);
    if (!application || !matches || !application.isActive) throw invalidBasicToken();
    return application;
  }
}

/** The caller of a verified token, with the whole user row when it was loaded. */
export function toUserCaller(verified: VerifiedCaller | VerifiedWithUser | VerifiedBearer, record?: UserRecord): UserCaller {
  const { claims, user, session, family } = verified;
  return {
    kind: 'user',
    // Checked equal to the session's user and the membership whose key signed the token.
    id: claims.sub,
    membershipId: claims.prn,
    roleSlug: user.role,
    ownPermissions: user.permissions,
    ownForbidden: user.forbidden,
    user: record,
    sessionId: family.id,
    scopes: session.scopes ?? null,
  };
}

export function toApplicationCaller(application: ApplicationRow): ApplicationCaller {
  return {
    kind: 'application',
    id: application.id,
    membershipId: application.membershipId,
    roleSlug: application.role,
    ownPermissions: application.permissions,
    ownForbidden: application.forbidden,
    application,
  };
}
