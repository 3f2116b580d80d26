import { Injectable } from '@nestjs/common';
import { DomainError, userNotFound } from '../common/errors';
import { isPossibleId } from '../common/ids';
import type { OidcConsentRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { TokenRevoker } from '../sessions/token-revoker';
import { UserRepository } from '../users/user.repository';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import { ConsentRepository } from './consent.repository';
import type { OidcClient } from './oidc-clients';

/** A remembered consent as the API answers it. */
export interface ConsentView {
  client_id: string;
  scopes: string[];
  created_at: string;
  updated_at: string;
}

/** TokenRevoked's reason for the grants a withdrawn consent ends. */
const CONSENT_REVOKED = 'consent_revoked';

const toView = (row: OidcConsentRow): ConsentView => ({
  client_id: row.clientId,
  scopes: [...row.scopes],
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

/**
 * Consent remembered per user and client (contract "Single sign-on"): the consent page is skipped
 * when what the user gave covers the scopes asked, or when the client does not require consent
 * (first-party applications). `OidcConsentGranted` / `OidcConsentRevoked` record the changes.
 */
@Injectable()
export class Consents {
  constructor(
    private readonly consents: ConsentRepository,
    private readonly users: UserRepository,
    private readonly recorder: EventRecorder,
    private readonly revoker: TokenRevoker,
    private readonly codes: AuthorizationCodeRepository,
  ) {}

  /** Whether the user must be asked: `prompt=consent`, or a client that requires consent and no consent covering `scopes`. */
  async needed(membershipId: string, userId: string, client: OidcClient, scopes: readonly string[], forced: boolean): Promise<boolean> {
    if (forced) return true;
    if (!client.oidc.require_consent) return false;
    const given = await this.consents.find(membershipId, userId, client.id);
    return !given || !scopes.every((scope) => given.scopes.includes(scope));
  }

  /** Remembers consent to `scopes` (added to what the user gave the client before). */
  async grant(membershipId: string, userId: string, clientId: string, scopes: readonly string[]): Promise<void> {
    await this.recorder.transaction(async (record) => {
      const before = await this.consents.find(membershipId, userId, clientId);
      const all = [...new Set([...(before?.scopes ?? []), ...scopes])];
      await this.consents.upsert(membershipId, userId, clientId, all);
      record({ membershipId, eventType: 'OidcConsentGranted', utilizerId: userId, document: { user_id: userId, client_id: clientId, scopes: all } });
    });
  }

  async list(membershipId: string, userId: string): Promise<ConsentView[]> {
    await this.requireUser(membershipId, userId);
    return (await this.consents.listOfUser(membershipId, userId)).map(toView);
  }

  async get(membershipId: string, userId: string, clientId: string): Promise<ConsentView> {
    await this.requireUser(membershipId, userId);
    const row = isPossibleId(clientId) ? await this.consents.find(membershipId, userId, clientId) : undefined;
    if (!row) throw new DomainError('NotFound', 'The user has given that client no consent');
    return toView(row);
  }

  /**
   * Forgets one client's consent (404 when there is none) or all of them, and ends what the
   * consent let the client hold: its grants to the user (every token issued to it in any of the
   * user's sessions, TokenRevoked with reason `consent_revoked`) and its codes not yet exchanged.
   * As users expect of "remove this app's access": the next authorization asks again, and the
   * client keeps nothing it could refresh. The user's sessions and other clients' grants go on.
   */
  async revoke(membershipId: string, userId: string, utilizerId: string, clientId?: string): Promise<void> {
    await this.requireUser(membershipId, userId);
    if (clientId !== undefined && !isPossibleId(clientId)) throw new DomainError('NotFound', 'The user has given that client no consent');
    const deleted = await this.recorder.transaction(async (record) => {
      const rows = await this.consents.delete(membershipId, userId, clientId);
      for (const row of rows) {
        record({ membershipId, eventType: 'OidcConsentRevoked', utilizerId, document: { user_id: userId, client_id: row.clientId, scopes: row.scopes } });
      }
      const clientIds = rows.map((row) => row.clientId);
      await this.revoker.revokeClientGrants(record, membershipId, userId, clientIds, utilizerId, CONSENT_REVOKED);
      await this.codes.useUpOfClients(membershipId, userId, clientIds);
      return rows.length;
    });
    if (clientId !== undefined && deleted === 0) throw new DomainError('NotFound', 'The user has given that client no consent');
  }

  private async requireUser(membershipId: string, userId: string): Promise<void> {
    if (!isPossibleId(userId) || !(await this.users.findById(membershipId, userId))) throw userNotFound();
  }
}
