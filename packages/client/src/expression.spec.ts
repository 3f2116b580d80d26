import {
  buildExpression,
  compilePermission,
  type ExpressionContext,
  type PermissionTemplate,
  rejectValue,
  resourceFromRouteTemplate,
} from './expression';
import { PortcullisConfigError } from './errors';

const base: ExpressionContext = {
  callerId: 'user-1',
  routeTemplate: '/api/orders/:orderId',
  params: { orderId: 'o-42' },
  query: { tenant: 't1' },
  headers: { 'x-tenant': 'h1' },
  env: { REGION: 'eu-west' },
};

function build(template: PermissionTemplate, ctx: Partial<ExpressionContext> = {}) {
  return buildExpression(compilePermission(template), { ...base, ...ctx });
}

function expression(template: PermissionTemplate, ctx: Partial<ExpressionContext> = {}): string {
  const result = build(template, ctx);
  if (!result.ok) throw new Error(`denied: ${result.detail}`);
  return result.expression;
}

/** Values a caller could send that must never reach an expression. */
const HOSTILE: Array<[string, string]> = [
  ['a wildcard', '*'],
  ['a partial wildcard', 'ab*'],
  ['a dot', 'a.b'],
  ['a space', 'a b'],
  ['a tab', 'a\tb'],
  ['a newline', 'a\nb'],
  ['a NUL', 'a\u0000b'],
  ['a DEL', 'a\u007fb'],
  ['an encoded NUL', 'a%00b'],
  ['an encoded dot', 'a%2Eb'],
  ['an encoded wildcard', '%2A'],
  ['an encoded space', 'a%20b'],
  ['a double-encoded dot', 'a%252Eb'],
  ['a malformed encoding', 'a%E0%A4%A'],
  ['unicode letters', 'café'],
  ['a fullwidth dot', 'a\uFF0Eb'],
  ['a zero-width space', 'a\u200Bb'],
  ['a right-to-left override', 'a\u202Eb'],
  ['a line separator', 'a\u2028b'],
  ['a non-breaking space', 'a\u00A0b'],
  ['braces', '{id}'],
  ['a slash', 'a/b'],
  ['a quote', 'a"b'],
  ['the empty string', ''],
];

describe('expression defaults', () => {
  it('uses the caller id, the last static route segment, * and *', () => {
    expect(expression({})).toBe('user-1.orders.*.*');
  });

  it('derives the resource from the last static segment of the template', () => {
    expect(resourceFromRouteTemplate('/api/orders/:id')).toBe('orders');
    expect(resourceFromRouteTemplate('/orders')).toBe('orders');
    expect(resourceFromRouteTemplate('/api/v1/order-items/:id/lines/:line')).toBe('lines');
    expect(resourceFromRouteTemplate('/files/*path')).toBe('files');
    expect(resourceFromRouteTemplate('/reports{/:year}')).toBe('reports');
    expect(resourceFromRouteTemplate('/')).toBeUndefined();
    expect(resourceFromRouteTemplate('/:id')).toBeUndefined();
    expect(resourceFromRouteTemplate(undefined)).toBeUndefined();
  });

  it('denies when no resource can be derived and none is set', () => {
    const result = build({}, { routeTemplate: '/:id' });
    expect(result).toMatchObject({ ok: false });
    expect(build({}, { routeTemplate: undefined })).toMatchObject({ ok: false });
    expect(build({}, { routeTemplate: '/orders.json' })).toMatchObject({ ok: false });
    expect(expression({ resource: 'orders' }, { routeTemplate: undefined })).toBe('user-1.orders.*.*');
  });

  it('denies when the caller id itself cannot be a segment', () => {
    expect(build({}, { callerId: 'a.b' })).toMatchObject({ ok: false });
    expect(build({}, { callerId: '' })).toMatchObject({ ok: false });
    expect(expression({ subject: '*' }, { callerId: 'a.b' })).toBe('*.orders.*.*');
  });

  it('keeps literal segments and * as written', () => {
    expect(expression({ subject: '*', resource: 'Orders', action: 'read', object: 'a%2Eb' }))
      .toBe('*.Orders.read.a%2Eb');
  });
});

describe('placeholders', () => {
  it('resolves {name} and {route::name} from route params', () => {
    expect(expression({ action: 'read', object: '{orderId}' })).toBe('user-1.orders.read.o-42');
    expect(expression({ object: '{route::orderId}' })).toBe('user-1.orders.*.o-42');
    expect(expression({ object: 'order-{orderId}-x' })).toBe('user-1.orders.*.order-o-42-x');
  });

  it('resolves query, header (case-insensitive) and env values', () => {
    expect(expression({ object: '{query::tenant}' })).toBe('user-1.orders.*.t1');
    expect(expression({ object: '{header::X-Tenant}' })).toBe('user-1.orders.*.h1');
    expect(expression({ object: '{header::x-tenant}' }, { headers: { 'X-TENANT': 'h2' } })).toBe('user-1.orders.*.h2');
    expect(expression({ resource: '{env::REGION}' })).toBe('user-1.eu-west.*.*');
    expect(expression({ subject: '{env::REGION}' })).toBe('eu-west.orders.*.*');
    expect(expression({ object: '{query::tenant}:{header::x-tenant}' })).toBe('user-1.orders.*.t1:h1');
  });

  it('keeps a route placeholder without a value as written, percent-encoded', () => {
    expect(expression({ object: '{missing}' })).toBe('user-1.orders.*.%7Bmissing%7D');
    expect(expression({ object: '{route::missing}' })).toBe('user-1.orders.*.%7Broute::missing%7D');
    expect(expression({ object: '{orderId}' }, { params: {} })).toBe('user-1.orders.*.%7BorderId%7D');
    expect(expression({ object: '{orderId}' }, { params: undefined })).toBe('user-1.orders.*.%7BorderId%7D');
  });

  it.each([
    ['query', '{query::absent}'],
    ['header', '{header::x-absent}'],
    ['env', '{env::ABSENT_VARIABLE}'],
  ])('denies an unresolvable %s placeholder', (_source, template) => {
    const result = build({ object: template });
    expect(result).toMatchObject({ ok: false });
  });

  it('denies query values given more than once or as objects, and header lists', () => {
    expect(build({ object: '{query::tenant}' }, { query: { tenant: ['a', 'b'] } })).toMatchObject({ ok: false });
    expect(build({ object: '{query::tenant}' }, { query: { tenant: { x: 'a' } } })).toMatchObject({ ok: false });
    expect(build({ object: '{header::x-tenant}' }, { headers: { 'x-tenant': ['a', 'b'] } })).toMatchObject({ ok: false });
    expect(build({ object: '{orderId}' }, { params: { orderId: ['a', 'b'] } })).toMatchObject({ ok: false });
  });

  it('does not read inherited properties as values', () => {
    expect(build({ object: '{query::constructor}' }, { query: {} })).toMatchObject({ ok: false });
    expect(build({ object: '{header::constructor}' }, { headers: {} })).toMatchObject({ ok: false });
    expect(expression({ object: '{toString}' }, { params: {} })).toBe('user-1.orders.*.%7BtoString%7D');
  });

  it('does not name environment variables to the caller', () => {
    const result = build({ object: '{env::SECRET_NAME}' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).not.toContain('SECRET_NAME');
      expect(result.detail).toContain('SECRET_NAME');
    }
  });

  describe.each([
    ['route', '{orderId}', (v: string): Partial<ExpressionContext> => ({ params: { orderId: v } })],
    ['query', '{query::tenant}', (v: string): Partial<ExpressionContext> => ({ query: { tenant: v } })],
    ['header', '{header::x-tenant}', (v: string): Partial<ExpressionContext> => ({ headers: { 'x-tenant': v } })],
    ['env', '{env::REGION}', (v: string): Partial<ExpressionContext> => ({ env: { REGION: v } })],
  ])('hostile %s values', (_source, template, ctx) => {
    it.each(HOSTILE)('denies %s', (_label, value) => {
      const result = build({ object: template }, ctx(value));
      expect(result).toMatchObject({ ok: false });
    });

    it('accepts a value of the expression alphabet', () => {
      expect(expression({ object: template }, ctx('Ab-9_x:y%41'))).toBe('user-1.orders.*.Ab-9_x:y%41');
    });
  });
});

describe('rejectValue', () => {
  it.each<[string, unknown]>([
    ['*', 'is "*"'],
    ['', 'is empty'],
    ['a.b', expect.stringContaining('dot')],
    ['a%00', expect.stringContaining('U+0000')],
    ['%252525252E', 'is encoded too many times'],
  ])('explains the refusal of %j', (value, explanation) => {
    expect(rejectValue(value)).toEqual(explanation);
  });

  it('refuses nothing in a value of the expression alphabet', () => {
    expect(rejectValue('ok-value')).toBeUndefined();
  });
});

describe('compilePermission (configuration errors)', () => {
  it.each<[string, PermissionTemplate]>([
    ['subject from query', { subject: '{query::user}' }],
    ['subject from header', { subject: '{header::x-user}' }],
    ['subject mixing a header in', { subject: 'u-{HEADER::x-user}' }],
    ['an empty segment', { action: '' }],
    ['a dotted literal', { resource: 'orders.items' }],
    ['a partial wildcard literal', { action: 'read*' }],
    ['whitespace', { action: 'read all' }],
    ['an unknown source', { object: '{cookie::id}' }],
    ['an unclosed brace', { object: '{id' }],
    ['a stray closing brace', { object: 'id}' }],
    ['nested braces', { object: '{{id}}' }],
    ['an empty placeholder', { object: '{}' }],
    ['an empty placeholder name', { object: '{query::}' }],
    ['unicode in a literal', { resource: 'commandés' }],
  ])('rejects %s', (_label, template) => {
    expect(() => compilePermission(template)).toThrow(PortcullisConfigError);
  });

  it('rejects unknown segment names', () => {
    expect(() => compilePermission({ resourse: 'x' } as unknown as PermissionTemplate)).toThrow(/resourse/);
  });

  it('lets the subject read route and env values', () => {
    expect(() => compilePermission({ subject: '{userId}' })).not.toThrow();
    expect(() => compilePermission({ subject: '{route::userId}' })).not.toThrow();
    expect(() => compilePermission({ subject: '{env::SERVICE_USER}' })).not.toThrow();
  });
});
