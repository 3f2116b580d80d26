import type { NewEvent } from '../events/event-recorder';

/** What a second-factor event says: the user and the method, never a secret, code or challenge. */
export type MfaMethod = 'totp' | 'webauthn' | 'recovery_codes' | 'all';

export function mfaEvent(
  eventType: 'UserMfaEnabled' | 'UserMfaDisabled' | 'UserMfaRecoveryCodeUsed',
  membershipId: string,
  userId: string,
  method: MfaMethod,
  utilizerId: string,
): NewEvent {
  return { membershipId, eventType, utilizerId, document: { user_id: userId, method } };
}
