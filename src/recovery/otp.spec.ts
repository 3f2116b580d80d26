import { drawOtp, otpDigest, sameDigest } from './otp';
import { DEFAULT_OTP_SETTINGS, otpSettingsFrom, storedOtpSettings } from '../memberships/otp-settings';

describe('one-time passwords', () => {
  it.each([
    [{ contains_letters: false, contains_digits: true }, /^[0-9]{6}$/],
    [{ contains_letters: true, contains_digits: false }, /^[BCDFGHJKLMNPQRSTVWXZ]{6}$/],
    [{ contains_letters: true, contains_digits: true }, /^[23456789BCDFGHJKLMNPQRSTVWXZ]{6}$/],
  ])('draws from the contract alphabet for %j', (shape, pattern) => {
    const settings = { ...DEFAULT_OTP_SETTINGS, ...shape };
    for (let i = 0; i < 50; i++) expect(drawOtp(settings)).toMatch(pattern);
  });

  it('digests the OTP as typed people type it (case, spaces, dashes), bound to its challenge', () => {
    const digest = otpDigest('key', 'chl_1', 'BCD234');
    expect(sameDigest(otpDigest('key', 'chl_1', 'bcd-234'), digest)).toBe(true);
    expect(sameDigest(otpDigest('key', 'chl_1', ' bcd 234 '), digest)).toBe(true);
    expect(sameDigest(otpDigest('key', 'chl_2', 'BCD234'), digest)).toBe(false);
    expect(sameDigest(otpDigest('other key', 'chl_1', 'BCD234'), digest)).toBe(false);
    expect(sameDigest('abcd', digest)).toBe(false);
  });

  it('fills settings with the defaults and refuses an empty alphabet', () => {
    expect(otpSettingsFrom({ enabled: true })).toEqual({ ...DEFAULT_OTP_SETTINGS, enabled: true });
    expect(otpSettingsFrom({ contains_digits: false })).toBeNull();
    expect(storedOtpSettings({})).toEqual(DEFAULT_OTP_SETTINGS);
  });
});
