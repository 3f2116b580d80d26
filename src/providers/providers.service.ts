import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { ProviderRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf, type EventType } from '../events/event-types';
import { DestinationPolicy, destinationNotAllowed, parseIpLiteral, refusedRange } from '../outbound/destination-policy';
import { assertHoldsGrants, type Granter, grantedByAssignment, holdsGrant, PermissionExpression } from '../permissions';
import { ADMIN_ROLE_SLUG } from '../roles/role.mapper';
import { loadAssignment } from '../roles/assignment';
import { RoleRepository } from '../roles/role.repository';
import { requiredWithoutDefault, storedDefinitions } from '../user-types/custom-fields';
import { UserTypeRepository } from '../user-types/user-type.repository';
import type { ProviderBodyDto } from './provider.dto';
import { toProviderResponse, type ProviderResponse } from './provider.mapper';
import { ProviderCache } from './provider-cache';
import { ProviderIdentityRepository } from './provider-identity.repository';
import { ProviderRepository, type ProviderChanges } from './provider.repository';

/** The stored form of a create/replace body (the slug and the secret aside); equal bodies give equal values. */
type ProviderFields = Omit<ProviderChanges, 'clientSecret' | 'modifiedAt' | 'modifiedBy'>;

function toFields(body: ProviderBodyDto): Required<ProviderFields> {
  return {
    name: body.name.trim(),
    description: body.description ?? null,
    type: body.type,
    issuer: body.issuer,
    clientId: body.client_id,
    defaultRole: body.default_role ?? null,
    defaultUserType: body.default_user_type ?? null,
    isActive: body.is_active ?? true,
    trustEmail: body.trust_email ?? false,
  };
}

/** Omitted keeps the stored secret (it cannot be read back, so a GET-then-PUT must not erase it); null removes it. */
function nextSecret(current: string | null, requested: string | null | undefined): string | null {
  return requested === undefined ? current : requested;
}

/** What a provider grants: users it signs up get its default role (contract "Grants"). */
const grantsOf = (role: string | null): { role: string | null; permissions: string[]; forbidden: string[] } => ({ role, permissions: [], forbidden: [] });

/**
 * External identity providers of a membership (contract "External identity providers"). The
 * client secret is write-only: responses and events carry only `has_client_secret`.
 */
@Injectable()
export class ProvidersService extends MembershipResourceService<ProviderRow, ProviderBodyDto, ProviderResponse, EventType> {
  constructor(
    private readonly providers: ProviderRepository,
    private readonly roles: RoleRepository,
    private readonly userTypes: UserTypeRepository,
    recorder: EventRecorder,
    private readonly destinations: DestinationPolicy,
    private readonly permissions: CallerPermissions,
    private readonly cache: ProviderCache,
    private readonly identities: ProviderIdentityRepository,
  ) {
    super({ resource: 'providers', entity: 'Provider', noun: 'provider', toResponse: toProviderResponse }, providers, recorder, permissions);
  }

  async create(caller: Caller, membershipId: string, body: ProviderBodyDto): Promise<ProviderResponse> {
    const fields = toFields(body);
    this.checkIssuer(fields.issuer);
    const utilizerId = utilizerIdOf(caller);
    // Read before the transaction: the role cache may query the database.
    const granter = await this.permissions.granterOf(caller);
    const created = await this.changes.transaction(async (record) => {
      await this.assertReferencesExist(membershipId, fields);
      assertHoldsGrants(granter, grantedByAssignment(null, await loadAssignment(this.roles, membershipId, grantsOf(fields.defaultRole))));
      if (fields.trustEmail) await this.assertMayTrust(granter, membershipId);
      const row = await this.providers.insert(
        membershipId,
        { id: newId(), slug: body.slug ?? slugify(fields.name), ...fields, clientSecret: body.client_secret ?? null, createdBy: utilizerId },
      );
      record(this.createdEvent(membershipId, utilizerId, row));
      return toProviderResponse(row);
    });
    // A sign-in tried before may have left "no such provider" in this instance's cache.
    this.cache.forget(membershipId, created.slug);
    return created;
  }

  async replace(caller: Caller, membershipId: string, id: string, body: ProviderBodyDto): Promise<ProviderResponse> {
    const fields = toFields(body);
    this.checkIssuer(fields.issuer);
    const utilizerId = utilizerIdOf(caller);
    const granter = await this.permissions.granterOf(caller);
    const replaced = await this.changes.transaction(async (record) => {
      const current = await this.lockCurrent(membershipId, id);
      if (body.slug !== undefined && body.slug !== current.slug) throw validationError('slug', 'is immutable');
      const repointed = fields.issuer !== current.issuer || fields.clientId !== current.clientId;
      // A stored secret goes only to the token endpoint it was given for (contract, "Decisions of
      // the third review"): whoever points the provider elsewhere must know it, or clear it.
      if (repointed && current.clientSecret !== null && body.client_secret === undefined) {
        throw validationError('client_secret', 'must be sent again (or null) when issuer or client_id changes');
      }
      const clientSecret = nextSecret(current.clientSecret, body.client_secret);
      this.assertChanges(current, { ...fields, clientSecret });
      await this.assertReferencesExist(membershipId, fields);
      // A re-pointed provider is a new source of sign-ups: its default role is granted anew.
      const before = repointed ? null : await loadAssignment(this.roles, membershipId, grantsOf(current.defaultRole));
      assertHoldsGrants(granter, grantedByAssignment(before, await loadAssignment(this.roles, membershipId, grantsOf(fields.defaultRole))));
      if (fields.trustEmail && (!current.trustEmail || repointed)) await this.assertMayTrust(granter, membershipId);
      const updated = await this.providers.replace(membershipId, id, { ...fields, clientSecret, modifiedAt: new Date(), modifiedBy: utilizerId });
      // A subject (`sub`) means a user only to the issuer, and with pairwise subjects to the client,
      // that issued it: a re-pointed provider's links would let the new issuer sign in as every
      // linked user. They go; each user links again by the rules of a first sign-in.
      if (repointed) await this.identities.unlinkAll(membershipId, id);
      record(this.updatedEvent(membershipId, utilizerId, updated, current));
      return toProviderResponse(updated);
    });
    this.cache.forget(membershipId, replaced.slug);
    return replaced;
  }

  /**
   * A trusting provider signs in as any user whose e-mail its issuer vouches for, the admins
   * included, so trusting one counts as granting `*` (contract, "Decisions of the third review").
   * No role holds `*` itself: the membership's admin role is its "everything", so the caller must
   * hold every permission that role holds (a caller holding `*` does).
   */
  private async assertMayTrust(granter: Granter, membershipId: string): Promise<void> {
    const adminGrants = grantedByAssignment(null, await loadAssignment(this.roles, membershipId, grantsOf(ADMIN_ROLE_SLUG)));
    // The admin role cannot be deleted; were it ever missing, `*` itself is what must be held.
    const everything = adminGrants.length ? adminGrants : [PermissionExpression.parse('*')];
    if (!everything.every((expression) => holdsGrant(granter, expression))) {
      throw new DomainError('AccessDenied', 'Trusting a provider\'s e-mail addresses (trust_email) counts as granting *: it needs every permission of the membership\'s admin role');
    }
  }

  /** This instance's cache forgets them once the deletes have committed. */
  protected override afterDelete(membershipId: string, deleted: readonly ProviderRow[]): void {
    for (const row of deleted) this.cache.forget(membershipId, row.slug);
  }

  /**
   * https, or http to an IP literal OUTBOUND_ALLOW permits (a local test provider); an IP literal
   * or localhost name in a refused range is not stored. Nothing is fetched here.
   */
  private checkIssuer(issuer: string): void {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw validationError('issuer', 'must be an absolute https URL');
    }
    const refused = this.destinations.configuredUrlProblem(issuer);
    if (refused !== undefined) throw validationError('issuer', destinationNotAllowed(refused));
    if (url.protocol === 'https:') return;
    const literal = url.protocol === 'http:' ? parseIpLiteral(url.hostname) : undefined;
    // Permitted by OUTBOUND_ALLOW: an internal address the policy would otherwise refuse.
    const permittedByAllowList = literal !== undefined && refusedRange(literal) !== undefined && this.destinations.isAllowedAddress(literal);
    if (!permittedByAllowList) {
      throw validationError('issuer', 'must be an absolute https URL (http only for an IP address OUTBOUND_ALLOW permits)');
    }
  }

  private async assertReferencesExist(membershipId: string, fields: ProviderFields): Promise<void> {
    if (fields.defaultRole && !(await this.roles.findBySlug(membershipId, fields.defaultRole))) {
      throw validationError('default_role', `no role with the slug ${JSON.stringify(fields.defaultRole.slice(0, 64))} exists in this membership`);
    }
    if (!fields.defaultUserType) return;
    const shownSlug = JSON.stringify(fields.defaultUserType.slice(0, 64));
    const userType = await this.userTypes.findBySlug(membershipId, fields.defaultUserType);
    if (!userType) throw validationError('default_user_type', `no user type with the slug ${shownSlug} exists in this membership`);
    // A provider's sign-up creates the user with no custom fields: refused here, not at every sign-in.
    const lacking = requiredWithoutDefault(storedDefinitions(userType.properties));
    if (lacking.length) {
      throw validationError(
        'default_user_type',
        `the user type ${shownSlug} requires custom fields without a default (${lacking.slice(0, 10).join(', ')}), which a user signing up through a provider has none of`,
      );
    }
  }
}
