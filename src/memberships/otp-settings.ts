import { DocumentedOptionalIntField, OptionalBooleanField } from '../common/dto-fields';

/** Membership field `otp_settings` (contract "Account recovery, activation and password checks"), in API names. */
export type OtpSettings = {
  enabled: boolean;
  length: number;
  contains_letters: boolean;
  contains_digits: boolean;
  /** Seconds an OTP lives. */
  expires_in: number;
};

export const OTP_LIMITS = { minLength: 4, maxLength: 12, minExpiresIn: 60, maxExpiresIn: 3600 } as const;

export const DEFAULT_OTP_SETTINGS: OtpSettings = { enabled: false, length: 6, contains_letters: false, contains_digits: true, expires_in: 600 };

/** Body of `otp_settings` in PUT /memberships/{id}: each field optional, defaults fill the rest. */
export class OtpSettingsDto {
  @OptionalBooleanField({ example: true, description: 'Reset mails carry a one-time password too (default false)' })
  enabled?: boolean;

  @DocumentedOptionalIntField(OTP_LIMITS.minLength, OTP_LIMITS.maxLength, { example: 6, description: 'Characters (default 6)' })
  length?: number;

  @OptionalBooleanField({ example: false, description: 'Letters BCDFGHJKLMNPQRSTVWXZ (default false)' })
  contains_letters?: boolean;

  @OptionalBooleanField({ example: true, description: 'Digits (default true); with letters: 23456789 and the letters' })
  contains_digits?: boolean;

  @DocumentedOptionalIntField(OTP_LIMITS.minExpiresIn, OTP_LIMITS.maxExpiresIn, { example: 600, description: 'Lifetime, seconds (default 600)' })
  expires_in?: number;
}

/** The settings a body asks for, defaults filled in; null when it asks for an empty alphabet. */
export function otpSettingsFrom(input: OtpSettingsDto): OtpSettings | null {
  const settings: OtpSettings = {
    enabled: input.enabled ?? DEFAULT_OTP_SETTINGS.enabled,
    length: input.length ?? DEFAULT_OTP_SETTINGS.length,
    contains_letters: input.contains_letters ?? DEFAULT_OTP_SETTINGS.contains_letters,
    contains_digits: input.contains_digits ?? DEFAULT_OTP_SETTINGS.contains_digits,
    expires_in: input.expires_in ?? DEFAULT_OTP_SETTINGS.expires_in,
  };
  return settings.contains_letters || settings.contains_digits ? settings : null;
}

/** A membership's stored settings; memberships from before the field hold `{}` and get the defaults. */
export function storedOtpSettings(stored: Record<string, unknown>): OtpSettings {
  return { ...DEFAULT_OTP_SETTINGS, ...(stored as Partial<OtpSettings>) };
}
