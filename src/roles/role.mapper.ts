import type { RoleRow } from '../database/schema';
import { toSys, type Sys } from '../common/sys';

export interface RoleResponse {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  permissions: string[];
  forbidden: string[];
  membership_id: string;
  sys: Sys;
}

export function toRoleResponse(row: RoleRow): RoleResponse {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    permissions: row.permissions,
    forbidden: row.forbidden,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}

/** The resources of a membership an admin may act on. */
export const MEMBERSHIP_RESOURCES = [
  'users',
  'user-types',
  'roles',
  'applications',
  'webhooks',
  'providers',
  'mailhooks',
  'token-code-policies',
  'events',
  'tokens',
] as const;

/** Every resource of the service; any other resource in a permission belongs to a third-party API. */
export const SERVICE_RESOURCES: ReadonlySet<string> = new Set<string>([...MEMBERSHIP_RESOURCES, 'memberships']);

export const ADMIN_ROLE_SLUG = 'admin';

/** The admin role's permissions: everything inside the membership; system admins also manage memberships. */
export function adminPermissions(membershipId: string, isSystem: boolean): string[] {
  const own = MEMBERSHIP_RESOURCES.map((resource) => `${resource}.*`);
  return isSystem
    ? [...own, 'memberships.*']
    : [...own, `memberships.read.${membershipId}`, `memberships.update.${membershipId}`];
}
