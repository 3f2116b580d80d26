import type { MembershipRow } from '../database/schema';
import { toSys, type Sys } from '../common/sys';
import { storedOtpSettings, type OtpSettings } from './otp-settings';
import { storedSignInPolicy, type SignInPolicy } from './sign-in-policy';
import { toMailProviderResponse, type MailProviderResponse } from './mail-provider';

export interface MembershipResponse {
  _id: string;
  name: string;
  slug: string;
  secret_key?: string;
  expires_in: number;
  refresh_token_expires_in: number;
  scoped_token_expires_in: number | null;
  hash_algorithm: string;
  user_activation: string;
  mfa_policy: string;
  mail_providers: MailProviderResponse[];
  otp_settings: OtpSettings;
  sign_in_policy: SignInPolicy;
  code_policy: string | null;
  is_system: boolean;
  sys: Sys;
}

/** `secret_key` only for holders of memberships.read: the caller decides and says so. */
export function toMembershipResponse(row: MembershipRow, options: { includeSecretKey: boolean }): MembershipResponse {
  const response: MembershipResponse = {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    expires_in: row.expiresIn,
    refresh_token_expires_in: row.refreshTokenExpiresIn,
    scoped_token_expires_in: row.scopedTokenExpiresIn,
    hash_algorithm: row.hashAlgorithm,
    user_activation: row.userActivation,
    mfa_policy: row.mfaPolicy,
    mail_providers: row.mailProviders.map(toMailProviderResponse),
    otp_settings: storedOtpSettings(row.otpSettings),
    sign_in_policy: storedSignInPolicy(row.signInPolicy),
    code_policy: row.codePolicy,
    is_system: row.isSystem,
    sys: toSys(row),
  };
  if (options.includeSecretKey) response.secret_key = row.secretKey;
  return response;
}

/**
 * The membership as its events show it: never the signing key, whoever caused the event (the
 * membership's event log is read with events.read, which does not disclose secret keys).
 */
export function toMembershipEventDocument(row: MembershipRow): MembershipResponse {
  return toMembershipResponse(row, { includeSecretKey: false });
}
