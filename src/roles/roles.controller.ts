import { Controller, UseInterceptors } from '@nestjs/common';
import { SearchableMembershipResourceController } from '../common/crud/membership-resource.controller';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import { RoleBodyDto, RoleSchema } from './role.dto';
import type { RoleResponse } from './role.mapper';
import { ROLE_SORTABLE_FIELDS } from './role.repository';
import { RolesService } from './roles.service';

@Controller('memberships/:membershipId/roles')
@UseInterceptors(EventRecordingInterceptor)
export class RolesController extends SearchableMembershipResourceController<RoleBodyDto, RoleResponse>({
  resource: 'roles',
  names: { one: 'a role', many: 'roles' },
  item: RoleSchema,
  body: RoleBodyDto,
  sortable: ROLE_SORTABLE_FIELDS,
  query: { summary: 'Query roles with where/select', example: { where: { slug: { $ne: 'admin' } }, select: { name: 1, permissions: 1 } } },
  search: { summary: 'Roles whose name, slug or description contain the keyword (case-insensitive)' },
  create: { summary: 'Create a role (slug `admin` is reserved)' },
  // Operation ids from before the shared handlers (update, bulkDelete), kept for generated clients.
  replace: {
    summary: 'Replace a role (the slug cannot change; the admin role cannot be changed)',
    operationId: 'Roles_update',
    examples: {
      replace: { summary: 'New name and permissions (slug left out: it cannot change)', value: { name: 'Support agents', permissions: ['users.read'], forbidden: [] } },
    },
  },
  delete: { summary: 'Delete a role (not the admin role)', errors: [403, 404, 409] },
  deleteMany: {
    summary: 'Delete several roles: {"ids": [...]} (1..1000); the admin role among them refuses the request',
    errors: [400, 403, 404, 409],
    operationId: 'Roles_bulkDelete',
  },
}) {
  constructor(roles: RolesService) {
    super(roles);
  }
}
