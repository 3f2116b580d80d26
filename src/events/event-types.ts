/** Every event type of the specification, by group. */
export const EVENT_TYPES = [
  'TokenGenerated',
  'TokenRefreshed',
  'TokenVerified',
  'TokenRevoked',
  'UserCreated',
  'UserUpdated',
  'UserDeleted',
  'UserPasswordChanged',
  'UserPasswordReset',
  'UserSignInLocked',
  'UserTypeCreated',
  'UserTypeUpdated',
  'UserTypeDeleted',
  'ApplicationCreated',
  'ApplicationUpdated',
  'ApplicationDeleted',
  'RoleCreated',
  'RoleUpdated',
  'RoleDeleted',
  'ProviderCreated',
  'ProviderUpdated',
  'ProviderDeleted',
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
  'MailhookCreated',
  'MailhookUpdated',
  'MailhookDeleted',
  'TokenCodePolicyCreated',
  'TokenCodePolicyUpdated',
  'TokenCodePolicyDeleted',
  'TokenCodeApproved',
  'TokenCodeDenied',
  'UserMfaEnabled',
  'UserMfaDisabled',
  'UserMfaRecoveryCodeUsed',
  'SigningKeyRotated',
  'MembershipUpdated',
  'MembershipSecretKeyRotated',
  'OidcConsentGranted',
  'OidcConsentRevoked',
  'WebhookRequestSent',
  'WebhookRequestFailed',
  'MailhookMailSent',
  'MailhookMailFailed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Hook results: a hook triggered by one of these would trigger itself again. */
export const RESULT_EVENT_TYPES: readonly EventType[] = [
  'WebhookRequestSent',
  'WebhookRequestFailed',
  'MailhookMailSent',
  'MailhookMailFailed',
];

export const isEventType = (value: unknown): value is EventType =>
  typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

/** The word the specification uses for changes made by the service itself. */
export const SYSTEM_UTILIZER = 'system';

export const isResultEventType = (value: string): boolean => (RESULT_EVENT_TYPES as readonly string[]).includes(value);

/** The `utilizer_id` of an event: the caller's id, or `system` when the service acts by itself. */
export function utilizerIdOf(caller: { id: string } | null | undefined): string {
  return caller?.id || SYSTEM_UTILIZER;
}
