import type { ApplicationOidcRecord, ApplicationRow } from '../database/schema';
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
  /** The application as a client of its membership's OpenID Provider; null: not one. */
  oidc: ApplicationOidcRecord | null;
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
    oidc: row.oidc ?? null,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
