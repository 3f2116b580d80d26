import type { ApplicationRow } from '../database/schema';
import { toSys, type Sys } from './sys';

export interface ApplicationResponse {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  role: string | null;
  permissions: string[];
  forbidden: string[];
  is_active: boolean;
  membership_id: string;
  sys: Sys;
}

/** The secret digest has no path into a response; the secret itself is never stored. */
export function toApplicationResponse(row: ApplicationRow): ApplicationResponse {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    role: row.role,
    permissions: row.permissions,
    forbidden: row.forbidden,
    is_active: row.isActive,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
