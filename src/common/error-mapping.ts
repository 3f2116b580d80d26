import { HttpException } from '@nestjs/common';
import { DomainError, type ErrorBody, type ErrorCode } from './errors';

/** Unique constraints (by name) and the conflict each one means to an API user. */
const UNIQUE_CONSTRAINT_CODES: Record<string, { code: ErrorCode; message: string }> = {
  memberships_slug_unique: { code: 'MembershipAlreadyExists', message: 'A membership with this slug already exists' },
  memberships_single_system: { code: 'AlreadySetUp', message: 'The installation is already set up' },
  roles_slug_unique: { code: 'RoleAlreadyExists', message: 'A role with this slug already exists' },
  user_types_slug_unique: { code: 'UserTypeAlreadyExists', message: 'A user type with this name already exists' },
  users_username_unique: { code: 'UserAlreadyExists', message: 'A user with this username already exists' },
  users_email_unique: { code: 'UserAlreadyExists', message: 'A user with this e-mail address already exists' },
  applications_slug_unique: { code: 'ApplicationAlreadyExists', message: 'An application with this slug already exists' },
  webhooks_slug_unique: { code: 'WebhookAlreadyExists', message: 'A webhook with this slug already exists' },
  providers_slug_unique: { code: 'ProviderAlreadyExists', message: 'A provider with this slug already exists' },
  mailhooks_slug_unique: { code: 'MailhookAlreadyExists', message: 'A mail hook with this slug already exists' },
  token_code_policies_slug_unique: { code: 'TokenCodePolicyAlreadyExists', message: 'A token code policy with this slug already exists' },
};

/** body-parser's error types and what they mean to the caller. */
const BODY_PARSER_CODES: Record<string, { code: ErrorCode; message: string }> = {
  'entity.parse.failed': { code: 'MalformedJson', message: 'The request body is not valid JSON' },
  'entity.too.large': { code: 'PayloadTooLarge', message: 'The request body is too large' },
  'encoding.unsupported': { code: 'UnsupportedMediaType', message: 'The request body encoding is not supported' },
  'charset.unsupported': { code: 'UnsupportedMediaType', message: 'The request body charset is not supported' },
  'request.aborted': { code: 'MalformedJson', message: 'The request body was not received in full' },
  'request.size.invalid': { code: 'MalformedJson', message: 'The request body size does not match its Content-Length' },
  // express.urlencoded past its field limit (the OpenID Provider's forms).
  'parameters.too.many': { code: 'PayloadTooLarge', message: 'The form has too many fields' },
};

/**
 * A body sent with Content-Encoding gzip, deflate or br that does not decompress: body-parser passes
 * zlib's error on with status 400 and no `type` (zlib's codes are `Z_*`, brotli's `ERR__ERROR_*`).
 */
function isUndecompressableBody(error: unknown): boolean {
  const candidate = error as { status?: unknown; errno?: unknown; code?: unknown } | null;
  return (
    candidate?.status === 400 &&
    typeof candidate.errno === 'number' &&
    typeof candidate.code === 'string' &&
    (candidate.code.startsWith('Z_') || candidate.code.startsWith('ERR__ERROR_'))
  );
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** Set when the error is unexpected: it goes to the log with its stack, never to the caller. */
  unexpected?: unknown;
}

function findDatabaseError(error: unknown): { code?: string; constraint?: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const candidate = current as { code?: unknown; constraint?: unknown; cause?: unknown };
    if (typeof candidate.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code)) {
      return {
        code: candidate.code,
        constraint: typeof candidate.constraint === 'string' ? candidate.constraint : undefined,
      };
    }
    current = candidate.cause;
  }
  return undefined;
}

function httpExceptionCode(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'ModelValidationError';
    case 401:
      return 'InvalidToken';
    case 403:
      return 'AccessDenied';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 413:
      return 'PayloadTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    default:
      return 'UnhandledExceptionError';
  }
}

/** The one mapping from anything thrown to the contract's error body. */
export function mapError(error: unknown): MappedError {
  if (error instanceof DomainError) return { status: error.status, body: error.toBody() };

  const parserType = (error as { type?: unknown } | null)?.type;
  if (typeof parserType === 'string' && parserType in BODY_PARSER_CODES) {
    const { code, message } = BODY_PARSER_CODES[parserType];
    const mapped = new DomainError(code, message);
    return { status: mapped.status, body: mapped.toBody() };
  }
  if (isUndecompressableBody(error)) {
    const mapped = new DomainError('MalformedJson', 'The request body does not decompress as its Content-Encoding says');
    return { status: mapped.status, body: mapped.toBody() };
  }

  const dbError = findDatabaseError(error);
  if (dbError?.code === '23505' && dbError.constraint && dbError.constraint in UNIQUE_CONSTRAINT_CODES) {
    const { code, message } = UNIQUE_CONSTRAINT_CODES[dbError.constraint];
    const mapped = new DomainError(code, message);
    return { status: mapped.status, body: mapped.toBody() };
  }

  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = httpExceptionCode(status);
    if (code !== 'UnhandledExceptionError') {
      const message = status === 404 ? 'The requested resource does not exist' : error.message;
      return { status, body: { statusCode: status, errorCode: code, message } };
    }
  }

  return {
    status: 500,
    body: { statusCode: 500, errorCode: 'UnhandledExceptionError', message: 'An unexpected error occurred' },
    unexpected: error,
  };
}
