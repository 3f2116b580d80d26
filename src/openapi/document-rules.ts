import { STATUS_CODES } from 'node:http';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Rules the whole document follows, applied once after Nest has built it, so that a route added
 * anywhere complies without per-route work (Redocly's recommended rules, `npm run lint:openapi`):
 * every operation states its security, has a 4xx answer and described answers, and an operationId
 * a code generator accepts; tags come in the order a newcomer needs.
 */

/** Tags in the order one meets them: set up, sign in, then the resources, then operations. */
export const TAG_ORDER: [string, string][] = [
  ['setup', 'First run: create the system membership, its admin and an application (header X-Setup-Token)'],
  ['tokens', 'Sign-in, scoped tokens, refresh, verification, revocation and the current caller'],
  ['users', 'Users of a membership: create, read, update, activate, freeze, delete'],
  ['roles', 'Roles and the permissions they grant'],
  ['permissions', 'Permission checks used by client libraries'],
  ['applications', 'Applications: machine callers with an id and a secret (Basic)'],
  ['user-types', 'User types: the custom fields a user may carry'],
  ['memberships', 'Memberships (tenants) and their settings'],
  ['events', 'The event log of a membership'],
  ['webhooks', 'Webhooks: HTTP calls on events'],
  ['mail providers', 'Mail servers a membership sends through'],
  ['mailhooks', 'Mail hooks: mails sent on events'],
  ['account recovery', 'Password reset, one-time passwords, activation and password checks'],
  ['device codes', 'Device code flow: codes, approval, polling'],
  ['token code policies', 'How device codes look and how long they live'],
  ['providers', 'External identity providers (OpenID Connect) and sign-in through them'],
  ['operations', 'Health, liveness and metrics'],
];

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** What every route may answer before its own code runs (contract, "Hostile input"). */
const HOSTILE_INPUT_ANSWER = {
  description: 'ModelValidationError: a NUL character, an invalid UTF-8 sequence or an over-long value in the path or query',
  errorCode: 'ModelValidationError',
  message: 'request.url: must not contain NUL characters',
};

const OPERATION_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface ResponseNode {
  description?: string;
  content?: Record<string, { schema?: unknown; example?: unknown }>;
}

interface OperationNode {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  responses?: Record<string, ResponseNode>;
}

function* operationsOf(document: OpenAPIObject): Generator<{ path: string; operation: OperationNode }> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (HTTP_METHODS.has(method) && operation && typeof operation === 'object') yield { path, operation };
    }
  }
}

/** Applies every rule below to a document Nest built. */
export function applyDocumentRules(document: OpenAPIObject): void {
  for (const { path, operation } of operationsOf(document)) {
    declarePublicSecurity(operation);
    addHostileInputAnswer(operation);
    describeResponses(operation);
    operation.operationId = validOperationId(operation.operationId, path);
  }
  assertUniqueOperationIds(document);
  orderTags(document);
}

/**
 * An operation that declares no scheme is public (the access guard's @Public()): `security: [{}]`
 * says so explicitly. Identical requirements (a route that stated `{}` itself) appear once.
 * test/e2e/routes.e2e-spec.ts checks the result against each route's access declaration.
 */
function declarePublicSecurity(operation: OperationNode): void {
  const requirements = operation.security ?? [{}];
  const seen = new Set<string>();
  operation.security = requirements.filter((requirement) => {
    const key = JSON.stringify(requirement);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function addHostileInputAnswer(operation: OperationNode): void {
  const responses = (operation.responses ??= {});
  if (Object.keys(responses).some((status) => /^4/.test(status))) return;
  const { description, ...body } = HOSTILE_INPUT_ANSWER;
  responses['400'] = {
    description,
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/ErrorBodySchema' }, example: { statusCode: 400, ...body } },
    },
  };
}

/** An answer without a description gets its status's reason phrase ("OK", "Created", ...). */
function describeResponses(operation: OperationNode): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!response.description) response.description = STATUS_CODES[Number(status)] ?? 'Answer';
  }
}

/**
 * Nest names a handler bound to several paths `Controller_method[0]`, `[1]`, ...: not an
 * identifier, so generated clients fail on it. Such an operation takes its name from its path
 * instead (`Token_me` for /me, `Token_whoami` for /whoami).
 */
export function validOperationId(operationId: string | undefined, path: string): string | undefined {
  if (operationId === undefined || OPERATION_ID.test(operationId)) return operationId;
  const controller = operationId.split('_')[0] ?? 'Operation';
  const words = path
    .split('/')
    .filter((segment) => segment !== '' && !segment.startsWith('{'))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '');
  const name = words.map((word, index) => (index === 0 ? word : word[0].toUpperCase() + word.slice(1))).join('');
  return `${controller}_${name || 'root'}`;
}

function assertUniqueOperationIds(document: OpenAPIObject): void {
  const seen = new Set<string>();
  for (const { path, operation } of operationsOf(document)) {
    if (operation.operationId === undefined) continue;
    if (seen.has(operation.operationId)) throw new Error(`OpenAPI: operationId ${operation.operationId} (at ${path}) is not unique`);
    seen.add(operation.operationId);
  }
}

/** Declared tags in TAG_ORDER; a tag a route uses that the list does not know comes after them, by name. */
function orderTags(document: OpenAPIObject): void {
  const used = new Set<string>();
  for (const { operation } of operationsOf(document)) for (const tag of operation.tags ?? []) used.add(tag);
  const known = new Set(TAG_ORDER.map(([name]) => name));
  const described = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
  document.tags = [
    ...TAG_ORDER.filter(([name]) => used.has(name)).map(([name, description]) => ({ name, description })),
    ...[...used]
      .filter((name) => !known.has(name))
      .sort()
      .map((name) => ({ name, description: described.get(name) ?? `Routes of ${name}` })),
  ];
}
