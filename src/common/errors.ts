/**
 * The one domain error type. Services throw it with a code; the exception filter turns it into
 * the contract's error body. The status belongs to the code, so a code always answers the same.
 */
export const ERROR_STATUS = {
  // 400
  ModelValidationError: 400,
  MembershipIdRequired: 400,
  UserHasNoPermissionForThisScope: 400,
  InvalidScope: 400,
  ScopeRequired: 400,
  RefreshTokenRequired: 400,
  InvalidQuery: 400,
  InvalidPermission: 400,
  PermissionRequired: 400,
  MalformedJson: 400,
  InvalidCurrentPassword: 400,
  ProviderEmailNotVerified: 400,
  AuthorizationPending: 400,
  SlowDown: 400,
  AuthorizationDenied: 400,
  ExpiredToken: 400,
  InvalidDeviceCode: 400,
  MfaCodeInvalid: 400,
  /** What Node's HTTP parser refuses before any route sees it (express-adapter.ts). */
  MalformedRequest: 400,
  // 401
  InvalidCredentials: 401,
  UserInactive: 401,
  InvalidToken: 401,
  TokenWasExpired: 401,
  TokenWasRevoked: 401,
  TokenIsNotRefreshable: 401,
  RefreshTokenWasExpired: 401,
  RefreshTokenWasRevoked: 401,
  SetupRejected: 401,
  ProviderTokenInvalid: 401,
  OtpInvalid: 401,
  MfaRequired: 401,
  // 403
  AccessDenied: 403,
  ProviderDisabled: 403,
  // 404
  NotFound: 404,
  MembershipNotFound: 404,
  UserNotFound: 404,
  UserTypeNotFound: 404,
  RoleNotFound: 404,
  ApplicationNotFound: 404,
  WebhookNotFound: 404,
  DeliveryNotFound: 404,
  ProviderNotFound: 404,
  MailhookNotFound: 404,
  MailProviderNotFound: 404,
  EventNotFound: 404,
  TokenNotFound: 404,
  TokenCodeNotFound: 404,
  TokenCodePolicyNotFound: 404,
  // 405
  MethodNotAllowed: 405,
  // 408
  RequestTimeout: 408,
  // 409
  AlreadySetUp: 409,
  IdenticalDocumentError: 409,
  WebhookAlreadyExists: 409,
  ProviderAlreadyExists: 409,
  MailhookAlreadyExists: 409,
  MailProviderInUse: 409,
  UserAlreadyExists: 409,
  UserTypeAlreadyExists: 409,
  RoleAlreadyExists: 409,
  ApplicationAlreadyExists: 409,
  MembershipAlreadyExists: 409,
  MembershipNotEmpty: 409,
  ReservedRole: 409,
  SystemRolesCannotBeDeleted: 409,
  SystemMembershipCannotBeDeleted: 409,
  ProviderEmailNotTrusted: 409,
  TokenCodeAlreadyDecided: 409,
  TokenCodePolicyAlreadyExists: 409,
  TokenCodePolicyInUse: 409,
  // 413, 415
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  // 429, 431
  TooManySignInAttempts: 429,
  TooManyDeviceCodeRequests: 429,
  TooManyStreams: 429,
  HeadersTooLarge: 431,
  // 500, 502, 503
  UnhandledExceptionError: 500,
  ProviderUnavailable: 502,
  AuthenticationServiceUnavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorBody {
  statusCode: number;
  errorCode: ErrorCode;
  message: string;
  errors?: FieldError[];
}

/** Fields a few errors add to the body beside the contract's three (MfaRequired's `mfa_token`, ...). */
export type ErrorBodyFields = Readonly<Record<string, unknown>>;

/**
 * The WWW-Authenticate challenge of a 401, when the code alone does not decide it: `basic` for a
 * Basic token problem (RFC 7617), `bearer` for a request that carried no credentials at all (RFC
 * 6750 section 3.1: a challenge without an error code); and on a 403, `insufficient_scope` for a
 * token whose scopes leave out what its holder could otherwise do (RFC 6750 section 3.1).
 */
export type AuthChallenge = 'basic' | 'bearer' | 'insufficient_scope';

/** At most this many field errors in one answer (contract, "Decisions of the third review"). */
export const MAX_FIELD_ERRORS_ANSWERED = 20;

export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
    readonly challenge?: AuthChallenge,
    readonly fields?: ErrorBodyFields,
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    // The contract's own fields come last: added fields can never replace them.
    const body: ErrorBody = { ...this.fields, statusCode: this.status, errorCode: this.code, message: this.message };
    // However many fields failed (a body can hold a thousand), the answer stays small.
    if (this.errors?.length) body.errors = this.errors.slice(0, MAX_FIELD_ERRORS_ANSWERED);
    return body;
  }
}

/** A refusal the caller may try again later: the answer carries `Retry-After` (whole seconds, at least 1). */
export class RetryLaterError extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(code: ErrorCode, message: string, retryAfterSeconds: number) {
    super(code, message);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/** Shorthand for the most common validation failure: one field, one message. */
export function validationError(field: string, message: string): DomainError {
  return new DomainError('ModelValidationError', `${field}: ${message}`, [{ field, message }]);
}

/** 401 InvalidCredentials: one answer for an unknown login and a wrong password. */
export function invalidCredentials(): DomainError {
  return new DomainError('InvalidCredentials', 'The username or password is not correct');
}

/** 401 UserInactive: the user exists but is frozen or not activated. */
export function userInactive(): DomainError {
  return new DomainError('UserInactive', 'The user account is not active');
}

/** 404 UserNotFound: the user a route names does not exist in the membership (or cannot). */
export function userNotFound(): DomainError {
  return new DomainError('UserNotFound', 'The user does not exist');
}
