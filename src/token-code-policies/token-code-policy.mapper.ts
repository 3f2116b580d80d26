import { toSys, type Sys } from '../common/sys';
import type { TokenCodePolicyRow } from '../database/schema';

export interface TokenCodePolicyResponse {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  length: number;
  contains_letters: boolean;
  contains_digits: boolean;
  expires_in: number;
  membership_id: string;
  sys: Sys;
}

/** The policy as answers and its events (document, prior) show it: it holds no secret. */
export function toTokenCodePolicyResponse(row: TokenCodePolicyRow): TokenCodePolicyResponse {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    length: row.length,
    contains_letters: row.containsLetters,
    contains_digits: row.containsDigits,
    expires_in: row.expiresIn,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
