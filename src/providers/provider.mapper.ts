import type { ProviderRow } from '../database/schema';
import { toSys, type Sys } from '../common/sys';

export interface ProviderResponse {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  type: 'oidc';
  issuer: string;
  client_id: string;
  /** The client secret is write-only; this says whether one is set. */
  has_client_secret: boolean;
  default_role: string | null;
  default_user_type: string | null;
  is_active: boolean;
  trust_email: boolean;
  membership_id: string;
  sys: Sys;
}

/** Built field by field: the client secret has no path into a response or an event. */
export function toProviderResponse(row: ProviderRow): ProviderResponse {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    type: row.type,
    issuer: row.issuer,
    client_id: row.clientId,
    has_client_secret: row.clientSecret !== null,
    default_role: row.defaultRole,
    default_user_type: row.defaultUserType,
    is_active: row.isActive,
    trust_email: row.trustEmail,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
