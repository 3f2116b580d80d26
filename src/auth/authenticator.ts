import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { ApplicationRepository } from '../applications/application.repository';
import { digestSecret, secretMatches } from '../applications/application-secret';
import type { ApplicationRow } from '../database/schema';
import { TokenVerifier, type VerifiedBearer } from '../tokens/token-verifier';
import type { ApplicationCaller, Caller, UserCaller } from './caller';
import { parseAuthorization, type Credentials } from './authorization-header';

/** Compared against when the application does not exist, so a miss costs what a hit costs. */
const DECOY_DIGEST = digestSecret('decoy-secret-for-unknown-applications');

const invalidToken = (message = 'The token is not valid'): DomainError => new DomainError('InvalidToken', message);

@Injectable()
export class Authenticator {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly applications: ApplicationRepository,
  ) {}

  /** Resolves the caller of a request from its Authorization header, or throws a 401 error. */
  async authenticate(authorization: unknown): Promise<Caller> {
    if (authorization === undefined || authorization === '') {
      throw invalidToken('An Authorization header with a Bearer or Basic token is required');
    }
    const credentials = parseAuthorization(authorization);
    if (!credentials) throw invalidToken('The Authorization header must be "Bearer <token>" or "Basic <id>:<secret>"');
    return this.authenticateCredentials(credentials);
  }

  async authenticateCredentials(credentials: Credentials): Promise<Caller> {
    if (credentials.scheme === 'basic') {
      return toApplicationCaller(await this.verifyBasic(credentials.applicationId, credentials.secret));
    }
    return toUserCaller(await this.verifier.verify(credentials.token, 'access'));
  }

  /** Every Basic problem is the same InvalidToken, in about the same time. */
  async verifyBasic(applicationId: string, secret: string): Promise<ApplicationRow> {
    const application = await this.applications.findAnyById(applicationId);
    const matches = secretMatches(secret, application?.secretDigest ?? DECOY_DIGEST);
    if (!application || !matches || !application.isActive) throw invalidToken();
    return application;
  }
}

export function toUserCaller(verified: VerifiedBearer): UserCaller {
  const { user, session } = verified;
  return {
    kind: 'user',
    id: user.id,
    membershipId: user.membershipId,
    roleSlug: user.role,
    ownPermissions: user.permissions,
    ownForbidden: user.forbidden,
    user,
    sessionId: session.id,
    scopes: session.scopes ?? null,
    accessExpiresAt: session.accessExpiresAt,
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
