import { Body, Controller, Param } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ActionRoute, CreateRoute, DeleteRoute, GetRoute, ReplaceRoute } from '../common/crud/crud-routes';
import { type Listing, ListingRoutes } from '../common/crud/listing-routes';
import type { ListPage, ListRequest } from '../common/query';
import type { ProvisionedMembership } from './membership-provisioner';
import { CreateMembershipDto, UpdateMembershipDto } from '../memberships/membership.dto';
import type { MembershipResponse } from '../memberships/membership.mapper';
import { MembershipSchema, ProvisionedMembershipSchema } from '../memberships/membership.schemas';
import { MembershipsService } from './memberships.service';

const SORTABLE = '_id, name, slug, sys.created_at, sys.modified_at';

/**
 * Memberships are addressed by `{id}`, not `{membershipId}`: these routes are not scoped to the
 * caller's membership by the access guard; the service applies the tenancy rules instead.
 */
@Controller('memberships')
@ListingRoutes({
  tag: 'memberships',
  permission: 'memberships.read',
  sortable: SORTABLE,
  items: MembershipSchema,
  membershipScoped: false,
  list: { summary: 'List memberships (system membership callers only)', errors: [400, 403] },
  query: {
    summary: 'Query memberships with where/select (system membership callers only)',
    example: { where: { slug: { $in: ['acme', 'globex'] } }, select: { name: 1, slug: 1 } },
    errors: [400, 403],
  },
})
export class MembershipsController implements Listing {
  constructor(private readonly memberships: MembershipsService) {}

  listPage(caller: Caller, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return this.memberships.list(caller, request);
  }

  @GetRoute({ permission: 'memberships.read', summary: 'Get a membership (own; any for system membership callers)', answer: MembershipSchema })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MembershipResponse> {
    return this.memberships.get(caller, id);
  }

  @CreateRoute({
    permission: 'memberships.create',
    summary: 'Create a membership with its admin role, optional first admin user and optional application (system membership callers only)',
    answer: ProvisionedMembershipSchema,
    errors: [400, 403, 409],
  })
  create(@CurrentCaller() caller: Caller, @Body() body: CreateMembershipDto): Promise<ProvisionedMembership> {
    return this.memberships.create(caller, body);
  }

  @ReplaceRoute({
    permission: 'memberships.update',
    summary: 'Replace the settings of a membership (own; any for system membership callers)',
    description:
      'Omitted settings return to their defaults; an omitted slug is kept. A new name or slug changes the token issuer/audience, so earlier tokens of the membership stop verifying. Records MembershipUpdated (without the secret key) in the membership\'s event log.',
    answer: MembershipSchema,
  })
  update(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: UpdateMembershipDto): Promise<MembershipResponse> {
    return this.memberships.update(caller, id, body);
  }

  @ActionRoute({
    path: ':id/secret-key',
    permission: 'memberships.update',
    summary: 'Rotate the signing key; every earlier token of the membership becomes InvalidToken',
    description: "Records MembershipSecretKeyRotated in the membership's event log; the event never carries the key.",
    answer: MembershipSchema,
  })
  rotateSecretKey(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MembershipResponse> {
    return this.memberships.rotateSecretKey(caller, id);
  }

  @DeleteRoute({
    permission: 'memberships.delete',
    summary: 'Delete an empty membership (system membership callers only; not the system membership)',
    errors: [403, 404, 409],
  })
  delete(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<void> {
    return this.memberships.delete(caller, id);
  }
}
