import { Injectable } from '@nestjs/common';
import type { ApplicationCaller } from '../common/caller';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import type { ApplicationRow } from '../database/schema';
import { digestSecret, secretMatches } from './application-secret';
import { toApplicationResponse } from './application.mapper';
import { ApplicationRepository } from './application.repository';

/** Compared against when the application does not exist, so a miss costs what a hit costs. */
const DECOY_DIGEST = digestSecret('decoy-secret-for-unknown-applications');

/** The one answer to every Basic problem (the contract: identical, byte for byte). */
const invalidBasicToken = (): DomainError => new DomainError('InvalidToken', 'The token is not valid', undefined, 'basic');

/** Checks an application's Basic credentials (`<application id>:<secret>`). */
@Injectable()
export class ApplicationCredentials {
  constructor(private readonly applications: ApplicationRepository) {}

  /**
   * Every Basic problem is the same InvalidToken, in about the same time. An id that cannot exist
   * (empty for an unreadable value) is not looked up, but its secret is still compared.
   */
  async verifyBasic(applicationId: string, secret: string): Promise<ApplicationRow> {
    const application = await this.withSecret(applicationId, secret);
    if (!application || !application.isActive) throw invalidBasicToken();
    return application;
  }

  /**
   * The application whose id and secret these are, active or not; undefined for an unknown id or a
   * wrong secret, which take the same path (a digest is compared either way).
   */
  async withSecret(applicationId: string, secret: string): Promise<ApplicationRow | undefined> {
    const application = isPossibleId(applicationId) ? await this.applications.findAnyById(applicationId) : undefined;
    return ownedBy(application, secret);
  }
}

/**
 * `application` when `secret` is its secret, else undefined; a digest is compared either way, so
 * an unknown application (undefined, as read by whoever looked it up) costs what a known one does.
 */
export function ownedBy(application: ApplicationRow | undefined, secret: string): ApplicationRow | undefined {
  const matches = secretMatches(secret, application?.secretDigest ?? DECOY_DIGEST);
  return application && matches ? application : undefined;
}

/** The caller of a request made with an application's verified Basic credentials; `profile` adds its document. */
export function toApplicationCaller(application: ApplicationRow, profile = false): ApplicationCaller {
  return {
    kind: 'application',
    id: application.id,
    membershipId: application.membershipId,
    roleSlug: application.role,
    ownPermissions: application.permissions,
    ownForbidden: application.forbidden,
    profile: profile ? toApplicationResponse(application) : undefined,
  };
}
