import { Injectable } from '@nestjs/common';
import { ApplicationCredentials, toApplicationCaller } from '../applications/application-credentials';
import { parseAuthorization } from '../common/authorization-header';
import type { Caller } from '../common/caller';
import { DomainError } from '../common/errors';
import { toUserCaller } from '../tokens/token-caller';
import { TokenVerifier } from '../tokens/token-verifier';

const invalidToken = (message = 'The token is not valid'): DomainError => new DomainError('InvalidToken', message);

/** The Bearer and Basic authenticators: an Authorization header in, a caller out. */
@Injectable()
export class Authenticator {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly applications: ApplicationCredentials,
  ) {}

  /**
   * Resolves the caller of a request from its Authorization header, or throws a 401 error. With
   * `profile`, the caller carries its own document (a user's costs a wider query).
   */
  async authenticate(authorization: unknown, options: { profile?: boolean } = {}): Promise<Caller> {
    if (authorization === undefined || authorization === '') {
      throw new DomainError('InvalidToken', 'An Authorization header with a Bearer or Basic token is required', undefined, 'bearer');
    }
    const credentials = parseAuthorization(authorization);
    if (!credentials) throw invalidToken('The Authorization header must be "Bearer <token>" or "Basic <id>:<secret>"');
    if (credentials.scheme === 'basic') {
      return toApplicationCaller(await this.applications.verifyBasic(credentials.applicationId, credentials.secret), options.profile);
    }
    if (!options.profile) return toUserCaller(await this.verifier.verifyCaller(credentials.token, 'access'));
    const verified = await this.verifier.verifyWithUser(credentials.token, 'access');
    return toUserCaller(verified, verified.user);
  }
}
