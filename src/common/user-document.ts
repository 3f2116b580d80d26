import type { UserRecord } from '../database/schema';
import { toSys, type Sys } from './sys';

export interface UserResponse {
  _id: string;
  username: string;
  firstname: string | null;
  lastname: string | null;
  email_address: string;
  role: string | null;
  user_type: string | null;
  permissions: string[];
  forbidden: string[];
  is_active: boolean;
  source_provider: string | null;
  membership_id: string;
  sys: Sys;
  [customField: string]: unknown;
}

/** Built field by field: the password hash has no path into a response. */
export function toUserResponse(row: UserRecord): UserResponse {
  return {
    // Custom fields first, so a custom field can never shadow a built-in one.
    ...row.customFields,
    _id: row.id,
    username: row.username,
    firstname: row.firstname,
    lastname: row.lastname,
    email_address: row.emailAddress,
    role: row.role,
    user_type: row.userType,
    permissions: row.permissions,
    forbidden: row.forbidden,
    is_active: row.isActive,
    source_provider: row.sourceProvider,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
