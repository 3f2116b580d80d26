import { startTestApp, TEST_SETUP_TOKEN, type TestApp } from '../support/app';
import { type Installation, setupInstallation, unique } from '../support/api';

/** The parts of the OpenAPI document these tests read. */
interface Schema {
  $ref?: string;
  type?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
}
interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  requestBody?: { content?: Record<string, MediaType> };
  parameters?: { in: string; name: string; schema?: Schema }[];
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
interface ApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * A schema Swagger UI cannot build a value for: no type, reference or composition, or a bare
 * `type: object` with neither properties nor additionalProperties (what a `string | null` field
 * without an explicit type becomes, so that "Try it out" prefills `{}`).
 */
function untypedProblem(schema: Schema): string | undefined {
  if (!schema.type && !schema.$ref && !schema.oneOf && !schema.anyOf && !schema.allOf) return 'has no type';
  // A nullable reference is `type: object` beside `allOf` (OpenAPI 3.0 wants a type beside `nullable`).
  if (schema.type === 'object' && !schema.properties && schema.additionalProperties === undefined && !schema.allOf) return 'is a bare object';
  if (schema.type === 'array' && !schema.items) return 'is an array without items';
  return undefined;
}

/** Every schema under this one, with where it is, the root included. */
function* schemasUnder(schema: Schema, at: string): Generator<[string, Schema]> {
  yield [at, schema];
  for (const [name, property] of Object.entries(schema.properties ?? {})) yield* schemasUnder(property, `${at}.${name}`);
  if (schema.items) yield* schemasUnder(schema.items, `${at}[]`);
  if (typeof schema.additionalProperties === 'object') yield* schemasUnder(schema.additionalProperties, `${at}{}`);
  for (const [key, list] of [['oneOf', schema.oneOf], ['anyOf', schema.anyOf], ['allOf', schema.allOf]] as const) {
    for (const [index, part] of (list ?? []).entries()) yield* schemasUnder(part, `${at}.${key}[${index}]`);
  }
}

/** Every schema the document holds: components, request bodies, responses and parameters. */
function* documentSchemas(document: ApiDocument): Generator<[string, Schema]> {
  for (const [name, schema] of Object.entries(document.components.schemas)) yield* schemasUnder(schema, name);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (media.schema) yield* schemasUnder(media.schema, `${at} body ${type}`);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (media.schema) yield* schemasUnder(media.schema, `${at} ${status} ${type}`);
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema) yield* schemasUnder(parameter.schema, `${at} ${parameter.in} ${parameter.name}`);
      }
    }
  }
}

describe('the OpenAPI document drives Swagger UI', () => {
  let t: TestApp;
  let install: Installation;
  let document: ApiDocument;

  beforeAll(async () => {
    t = await startTestApp({ env: { NODE_ENV: 'development' } });
    install = await setupInstallation(t);
    const res = await t.http().get('/openapi/v1.json').expect(200);
    document = res.body as ApiDocument;
  });
  afterAll(() => t?.close());

  it('gives every property a type (or a reference or composition): no bare objects, nothing untyped', () => {
    const problems: string[] = [];
    let walked = 0;
    for (const [at, schema] of documentSchemas(document)) {
      walked++;
      const problem = untypedProblem(schema);
      if (problem) problems.push(`${at} ${problem}: ${JSON.stringify(schema)}`);
    }
    expect(walked).toBeGreaterThan(300);
    expect(problems).toEqual([]);
  });

  it('shows the event types, HTTP methods and statuses of webhooks as enums (a dropdown in the UI)', () => {
    const { WebhookBodyDto, WebhookRequestDto, WebhookResponseDto } = document.components.schemas;
    const enumOf = (schema: Schema | undefined) => (schema as { enum?: string[] } | undefined)?.enum;
    expect(enumOf(WebhookBodyDto.properties?.event)).toEqual(expect.arrayContaining(['UserCreated', 'TokenGenerated']));
    expect(enumOf(WebhookBodyDto.properties?.event)).not.toContain('WebhookRequestSent');
    expect(enumOf(WebhookBodyDto.properties?.status)).toEqual(['active', 'passive']);
    expect(enumOf(WebhookRequestDto.properties?.method)).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']));
    expect(enumOf(WebhookResponseDto.properties?.event)).toEqual(enumOf(WebhookBodyDto.properties?.event));
  });

  it('gives each error status its own example body, with that status and a code of its own', () => {
    const codesByStatus = new Map<string, Set<string>>();
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const media = response.content?.['application/json'];
          // Error answers in the error body (a 500 of /healthcheck has its own shape).
          if (!/^[45]\d\d$/.test(status) || media?.schema?.$ref !== '#/components/schemas/ErrorBodySchema') continue;
          const example = media.example as { statusCode?: number; errorCode?: string } | undefined;
          expect({ status, example }).toEqual({ status, example: expect.objectContaining({ statusCode: Number(status), errorCode: expect.any(String) }) });
          const codes = codesByStatus.get(status) ?? new Set<string>();
          codes.add(example?.errorCode ?? '');
          codesByStatus.set(status, codes);
        }
      }
    }
    expect(codesByStatus.get('400')).toContain('ModelValidationError');
    expect(codesByStatus.get('403')).toContain('AccessDenied');
    expect(codesByStatus.get('404')).toContain('NotFound');
    expect(codesByStatus.get('401')).toEqual(new Set(['InvalidToken', 'SetupRejected', 'ProviderTokenInvalid']));
  });

  it('requires every field an application answer always carries (role is null without one, never left out)', async () => {
    // GET /me with the setup's Basic token answers the application, as every application route does.
    const res = await t.http().get('/me').set('Authorization', install.application.basic).expect(200);
    const schema = document.components.schemas.ApplicationSchema as Schema & { required?: string[] };
    expect(Object.keys(res.body as object).sort()).toEqual([...(schema.required ?? [])].sort());
  });

  it('requires every field a membership answer always carries, its settings objects and the setup answer\'s user included', async () => {
    const schemas = document.components.schemas as Record<string, Schema & { required?: string[] }>;
    const keysOf = (value: unknown): string[] => Object.keys(value as object).sort();
    const required = (name: string): string[] => [...(schemas[name]?.required ?? [])].sort();
    const res = await t.http().get(`/memberships/${install.admin.membershipId}`).set('Authorization', install.admin.auth).expect(200);
    expect(keysOf(res.body.otp_settings)).toEqual(required('OtpSettingsSchema'));
    expect(keysOf(res.body.sign_in_policy)).toEqual(required('SignInPolicySchema'));
    // Setup always has its first admin user (and here an application, which stays optional).
    expect(required('SetUpInstallationSchema')).toEqual(keysOf(install.setupResponse).filter((key) => key !== 'application'));
  });

  it('accepts every request-body example of the document (no 400, no 500) when sent as it is', async () => {
    const http = t.http;
    const m = install.admin.membershipId;
    const auth = install.admin.auth;
    const created = async (path: string, body: object): Promise<string> => {
      const res = await http().post(path).set('Authorization', auth).send(body);
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body._id as string;
    };
    // The mail provider the mail hook example names (a host name: judged only when mail is sent, and none is).
    const own = (await http().get(`/memberships/${m}`).set('Authorization', auth).expect(200)).body as { name: string };
    await http()
      .put(`/memberships/${m}`)
      .set('Authorization', auth)
      .send({ name: own.name, mail_providers: [{ slug: 'relay', name: 'Relay', type: 'smtp', host: 'smtp.example.com' }] })
      .expect(200);
    // Real ids for the path parameters, made for this test.
    const ids: Record<string, string> = {
      memberships: (
        await http()
          .post('/memberships')
          .set('Authorization', auth)
          .send({ membership: { name: unique('Other') } })
          .expect(201)
      ).body.membership._id,
      users: await created(`/memberships/${m}/users`, { username: unique('user'), email_address: `${unique('u')}@example.com`, password: 'long enough pw' }),
      roles: await created(`/memberships/${m}/roles`, { name: unique('Role') }),
      'user-types': await created(`/memberships/${m}/user-types`, { name: unique('Type') }),
      applications: await created(`/memberships/${m}/applications`, { name: unique('App') }),
      // The slug of the document's example, which a PUT may repeat but never change (so POST's example meets 409).
      providers: await created(`/memberships/${m}/providers`, { name: unique('Provider'), slug: 'google', type: 'oidc', issuer: 'https://accounts.google.com', client_id: 'example-client' }),
      'token-code-policies': await created(`/memberships/${m}/token-code-policies`, { name: unique('Policy') }),
      // Passive: never called. The outbound policy accepts a public-looking host at create.
      webhooks: await created(`/memberships/${m}/webhooks`, {
        name: unique('hook'),
        event: 'RoleCreated',
        status: 'passive',
        try_count: 1,
        request: { method: 'POST', url: 'https://receiver.example.com/hook' },
      }),
      mailhooks: await created(`/memberships/${m}/mailhooks`, {
        name: unique('mail'),
        event: 'RoleCreated',
        is_active: false,
        mail_provider: 'relay',
        from_address: 'no-reply@example.com',
        mail_subject: 'Role created',
        mail_template: 'A role was created',
        recipients: [{ email_address: 'ops@example.com' }],
      }),
    };
    const pathFor = (template: string) =>
      template.replace('{membershipId}', m).replace(/^\/memberships\/\{id\}/, `/memberships/${ids.memberships}`).replace(/\/([a-z-]+)\/\{id\}/, (_, resource: string) => {
        if (!ids[resource]) throw new Error(`no id for ${template}`);
        return `/${resource}/${ids[resource]}`;
      });

    const sent: string[] = [];
    const refused: string[] = [];
    // Token routes last: /revoke-token must not touch the admin's token before the others ran.
    const operations = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })))
      .sort((a, b) => Number(a.path.endsWith('-token')) - Number(b.path.endsWith('-token')));
    for (const { path, method, operation } of operations) {
      const media = operation.requestBody?.content?.['application/json'];
      if (!media) continue;
      const examples: [string, unknown][] =
        media.example !== undefined ? [['example', media.example]] : Object.entries(media.examples ?? {}).map(([name, example]) => [name, example.value]);
      if (examples.length === 0) refused.push(`${method.toUpperCase()} ${path}: no example`);
      for (const [name, body] of examples) {
        let call = http()[method as 'post' | 'put' | 'delete'](pathFor(path)).set('Content-Type', 'application/json');
        if (path === '/setup') call = call.set('X-Setup-Token', TEST_SETUP_TOKEN);
        // Sign-in takes the membership and no token; everything else goes as the admin.
        else if (path === '/generate-token' && name === 'signIn') call = call.set('X-Service-Alias', m);
        else call = call.set('Authorization', auth);
        const res = await call.send(JSON.stringify(body));
        sent.push(`${method.toUpperCase()} ${path} ${name} -> ${res.status}`);
        // A device code is shown once, to the device: no document can hold a live one, so the
        // poll example can only be refused as unknown (never as malformed).
        const unknownDeviceCode = path.endsWith('/codes/token') && res.body?.errorCode === 'InvalidDeviceCode';
        if ((res.status === 400 && !unknownDeviceCode) || res.status >= 500) refused.push(`${method.toUpperCase()} ${path} ${name}: ${res.status} ${JSON.stringify(res.body)}`);
        // A webhook the example created is deleted at once (it is passive too: never called).
        if (res.status === 201 && path.endsWith('/webhooks')) {
          await http().delete(`/memberships/${m}/webhooks/${res.body._id}`).set('Authorization', auth).expect(204);
        }
      }
    }
    expect(refused).toEqual([]);
    expect(sent.length).toBeGreaterThanOrEqual(30);
    // The examples that create something really create it (where nothing collides).
    expect(sent).toEqual(
      expect.arrayContaining([
        'POST /memberships/{membershipId}/webhooks example -> 201',
        'POST /memberships/{membershipId}/mailhooks example -> 201',
        'POST /memberships/{membershipId}/users example -> 201',
        'POST /memberships/{membershipId}/roles example -> 201',
        'POST /generate-token signIn -> 401',
        'POST /generate-token scoped -> 201',
      ]),
    );
  });
});
