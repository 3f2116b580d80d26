import type { UserTypeRow } from '../database/schema';
import { toSys, type Sys } from '../common/sys';
import { storedDefinitions, type PropertyDefinitions } from './custom-fields';

export interface UserTypeResponse {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  properties: PropertyDefinitions;
  allow_additional_properties: boolean;
  membership_id: string;
  sys: Sys;
}

export function toUserTypeResponse(row: UserTypeRow): UserTypeResponse {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    properties: storedDefinitions(row.properties),
    allow_additional_properties: row.allowAdditionalProperties,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
