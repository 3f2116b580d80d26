import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newSecret } from '../common/ids';
import type { ListPage, ListRequest } from '../common/query';
import type { MembershipRow } from '../database/schema';
import { EventWakeups } from '../event-log/event-wakeups';
import { EventRecorder } from '../events/event-recorder';
import { RequestTransaction } from '../common/request-transaction';
import { objectDecision } from '../permissions';
import { sameJson } from '../common/same-json';
import { duplicateSlugProblem, nextMailProviders, type MailProviderDto } from '../memberships/mail-provider';
import { DestinationPolicy, destinationNotAllowed } from '../outbound/destination-policy';
import type { StoredMailProvider } from '../database/schema';
import { otpSettingsFrom } from '../memberships/otp-settings';
import { signInPolicyFrom } from '../memberships/sign-in-policy';
import { MembershipCache } from '../memberships/membership-cache';
import { MembershipProvisioner, type ProvisionedMembership } from './membership-provisioner';
import { MEMBERSHIP_DEFAULTS, type CreateMembershipDto, type UpdateMembershipDto } from '../memberships/membership.dto';
import { toMembershipEventDocument, toMembershipResponse, type MembershipResponse } from '../memberships/membership.mapper';
import { MembershipRepository, type MembershipSettings } from '../memberships/membership.repository';

const notFound = (): DomainError => new DomainError('MembershipNotFound', 'The membership does not exist');

/**
 * Tenancy (contract, "Memberships and tenancy"): only callers of the system membership, holding
 * `memberships.<action>`, may list, create or delete memberships or touch another one; any
 * other caller reads and updates only its own membership.
 *
 * Events: an update records `MembershipUpdated` and a key rotation `MembershipSecretKeyRotated`,
 * in the membership's own event log, so that event streams end the tokens they invalidate and the
 * client library and the other instances drop what they cached. Neither event carries the key.
 * Creating and deleting a membership record none: a new membership's log starts empty, and a
 * deleted one's log disappears from the API with it (so a deletion tells the other instances to
 * drop their cached row itself).
 */
@Injectable()
export class MembershipsService {
  constructor(
    private readonly memberships: MembershipRepository,
    private readonly cache: MembershipCache,
    private readonly provisioner: MembershipProvisioner,
    private readonly recorder: EventRecorder,
    private readonly transaction: RequestTransaction,
    private readonly permissions: CallerPermissions,
    private readonly destinations: DestinationPolicy,
    private readonly wakeups: EventWakeups,
  ) {}

  async get(caller: Caller, id: string): Promise<MembershipResponse> {
    await this.assertMayTouch(caller, id);
    const row = await this.memberships.findById(id);
    if (!row) throw notFound();
    return this.respond(caller, row);
  }

  async list(caller: Caller, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    await this.assertSystemCaller(caller, 'list memberships');
    const holder = await this.permissions.holderOf(caller);
    // Without the memberships a forbidden entry denies the caller reading (contract "Bounded work and per-object rules").
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'memberships');
    return this.memberships.list({ ...request, hiddenIds }, (row) =>
      toMembershipResponse(row, { includeSecretKey: objectDecision(holder, 'memberships', 'read', row.id).allowed }),
    );
  }

  /** Same shape as setup: the membership, its admin role, and the optional first user and application. */
  async create(caller: Caller, input: CreateMembershipDto): Promise<ProvisionedMembership> {
    await this.assertSystemCaller(caller, 'create memberships');
    const passwordHash = await this.provisioner.hashPassword(input);
    const created = await this.recorder.transaction((record) =>
      this.provisioner.provision(record, input, passwordHash, { isSystem: false, utilizerId: caller.id }),
    );
    if (!(await this.maySeeSecretKey(caller, created.membership._id))) delete created.membership.secret_key;
    return created;
  }

  /**
   * Replaces the mutable settings; an omitted setting returns to its default, except the slug,
   * which is kept (it is the token audience), and `mail_providers`, `otp_settings`, `code_policy`, `sign_in_policy` and `mfa_policy`, kept when omitted. A new name or slug changes the token issuer or
   * audience, so the membership's earlier tokens stop verifying.
   */
  async update(caller: Caller, id: string, input: UpdateMembershipDto): Promise<MembershipResponse> {
    await this.assertMayTouch(caller, id);
    if (input.mail_providers !== undefined) this.checkMailProviders(input.mail_providers);
    const otpSettings = input.otp_settings === undefined ? undefined : otpSettingsFrom(input.otp_settings);
    if (otpSettings === null) throw validationError('otp_settings', 'contains_letters and contains_digits cannot both be false');
    const row = await this.recorder.transaction(async (record) => {
      const current = await this.memberships.lockById(id);
      if (!current) throw notFound();
      const mailProviders =
        input.mail_providers === undefined ? current.mailProviders : nextMailProviders(current.mailProviders, input.mail_providers);
      await this.assertNoRemovedProviderInUse(id, mailProviders);
      const next: MembershipSettings = {
        name: input.name,
        slug: input.slug ?? current.slug,
        expiresIn: input.expires_in ?? MEMBERSHIP_DEFAULTS.expiresIn,
        refreshTokenExpiresIn: input.refresh_token_expires_in ?? MEMBERSHIP_DEFAULTS.refreshTokenExpiresIn,
        scopedTokenExpiresIn: input.scoped_token_expires_in ?? MEMBERSHIP_DEFAULTS.scopedTokenExpiresIn,
        userActivation: input.user_activation ?? MEMBERSHIP_DEFAULTS.userActivation,
        mfaPolicy: input.mfa_policy ?? current.mfaPolicy,
        hashAlgorithm: input.hash_algorithm ?? MEMBERSHIP_DEFAULTS.hashAlgorithm,
        mailProviders,
        otpSettings: otpSettings ?? current.otpSettings,
        signInPolicy: input.sign_in_policy === undefined ? current.signInPolicy : signInPolicyFrom(input.sign_in_policy),
        codePolicy: input.code_policy === undefined ? current.codePolicy : input.code_policy,
      };
      if (next.codePolicy !== null && !(await this.memberships.hasCodePolicy(id, next.codePolicy))) {
        throw validationError('code_policy', 'names no token code policy of this membership');
      }
      if (sameSettings(current, next)) throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
      const updated = await this.memberships.updateSettings(id, next, caller.id);
      record({
        membershipId: id,
        eventType: 'MembershipUpdated',
        utilizerId: caller.id,
        document: toMembershipEventDocument(updated),
        prior: toMembershipEventDocument(current),
      });
      return updated;
    });
    this.cache.invalidate(id);
    return this.respond(caller, row);
  }

  /** A new signing key: every token issued before it answers InvalidToken from now on. */
  async rotateSecretKey(caller: Caller, id: string): Promise<MembershipResponse> {
    await this.assertMayTouch(caller, id);
    const row = await this.recorder.transaction(async (record) => {
      const current = await this.memberships.lockById(id);
      if (!current) throw notFound();
      const rotated = await this.memberships.replaceSecretKey(id, newSecret(32), caller.id);
      // The membership without its key: that a rotation happened, and when, is all an event may say.
      record({ membershipId: id, eventType: 'MembershipSecretKeyRotated', utilizerId: caller.id, document: toMembershipEventDocument(rotated) });
      return rotated;
    });
    this.cache.invalidate(id);
    return this.respond(caller, row);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    await this.assertSystemCaller(caller, 'delete memberships');
    await this.transaction.run(async () => {
      // The lock makes a concurrent user insert (whose foreign key check shares the row) wait, or be waited for.
      const current = await this.memberships.lockById(id);
      if (!current) throw notFound();
      if (current.isSystem) throw new DomainError('SystemMembershipCannotBeDeleted', 'The system membership cannot be deleted');
      if (await this.memberships.hasUsers(id)) {
        throw new DomainError('MembershipNotEmpty', 'The membership still holds users; delete them first');
      }
      await this.memberships.deleteById(id);
    });
    this.cache.invalidate(id);
    // No event commits for a deletion: without this the other instances would go on answering
    // for the membership from their cached row (discovery 200, device codes 500) for an hour,
    // and the membership's event streams, whose credentials are gone, would stay open.
    this.wakeups.membershipDeleted(id);
  }

  /** Unique slugs, and hosts the outbound policy does not refuse outright (contract "Outbound calls"). */
  private checkMailProviders(providers: readonly MailProviderDto[]): void {
    const duplicate = duplicateSlugProblem(providers);
    if (duplicate) throw validationError(`mail_providers.${duplicate.index}.slug`, duplicate.message);
    for (const [index, provider] of providers.entries()) {
      const refused = this.destinations.configuredHostProblem(provider.host);
      if (refused !== undefined) throw validationError(`mail_providers.${index}.host`, destinationNotAllowed(refused));
    }
  }

  /** Runs under the membership row lock, which mail hook writes also take, so no hook can slip in. */
  private async assertNoRemovedProviderInUse(id: string, next: readonly StoredMailProvider[]): Promise<void> {
    const kept = new Set(next.map((provider) => provider.slug));
    const removedInUse = [...(await this.memberships.mailProvidersInUse(id))].filter((slug) => !kept.has(slug));
    if (removedInUse.length > 0) {
      throw new DomainError('MailProviderInUse', `A mail hook still uses the mail provider ${JSON.stringify(removedInUse[0])}`);
    }
  }

  // ----- tenancy ----------------------------------------------------------------------------

  private async isSystemCaller(caller: Caller): Promise<boolean> {
    // is_system never changes, so the cached membership is good enough.
    const own = await this.cache.get(caller.membershipId);
    return own?.isSystem === true;
  }

  private async assertSystemCaller(caller: Caller, what: string): Promise<void> {
    if (!(await this.isSystemCaller(caller))) {
      throw new DomainError('AccessDenied', `Only callers of the system membership may ${what}`);
    }
  }

  /** Own membership: always (the route's permission was checked); another: system callers only. */
  private async assertMayTouch(caller: Caller, id: string): Promise<void> {
    if (id === caller.membershipId) return;
    if (!(await this.isSystemCaller(caller))) {
      throw new DomainError('AccessDenied', 'A caller may read and update only its own membership');
    }
  }

  private async maySeeSecretKey(caller: Caller, id: string): Promise<boolean> {
    const holder = await this.permissions.holderOf(caller);
    return objectDecision(holder, 'memberships', 'read', id).allowed;
  }

  private async respond(caller: Caller, row: MembershipRow): Promise<MembershipResponse> {
    return toMembershipResponse(row, { includeSecretKey: await this.maySeeSecretKey(caller, row.id) });
  }
}

function sameSettings(current: MembershipRow, next: MembershipSettings): boolean {
  return (Object.keys(next) as (keyof MembershipSettings)[]).every((key) => sameJson(current[key], next[key]));
}
