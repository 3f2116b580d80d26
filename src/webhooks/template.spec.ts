import { casesByOutcome } from '../../test/support/unit/cases';
import { thrownBy } from '../../test/support/unit/thrown';
import {
  bodyBudget,
  findPlaceholders,
  isKnownPlaceholder,
  jsonStringBytes,
  JsonValue,
  OutputBudget,
  RENDERED_BODY_MAX_BYTES,
  RENDERED_URL_AND_HEADERS_MAX_BYTES,
  renderBody,
  renderHeaders,
  renderText,
  renderUrl,
  resolvePlaceholder,
  TEMPLATE_MAX_BODY_DEPTH,
  TEMPLATE_MAX_BYTES,
  TEMPLATE_MAX_PLACEHOLDERS,
  TemplateContext,
  TemplateError,
  type TemplateErrorCode,
  urlAndHeadersBudget,
  utf8Bytes,
} from './template';

function ctx(overrides: Partial<TemplateContext> = {}): TemplateContext {
  return {
    event_type: 'UserCreated',
    utilizer_id: 'u-123',
    event_time: '2024-05-01T10:00:00.000Z',
    membership_id: 'm-1',
    document: {
      _id: 'user-1',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      count: 3,
      active: true,
      nothing: null,
      sys: { created_by: 'admin-7', tags: ['a', 'b'] },
      items: [{ id: 'i0' }, { id: 'i1' }],
      'with-dash': 'dash',
    },
    prior: { name: 'Ada', sys: { created_by: 'admin-6' } },
    ...overrides,
  };
}

/** Runs `render`, checks that it threw a TemplateError with this code, and answers the error. */
function templateErrorOf(render: () => unknown, code: TemplateErrorCode): TemplateError {
  const error = thrownBy(render, TemplateError);
  expect(error.code).toBe(code);
  return error;
}

describe('isKnownPlaceholder', () => {
  it.each(
    casesByOutcome({
      // the event's own fields and paths into its document or prior, surrounding spaces trimmed
      known: ['event_type', 'utilizer_id', 'event_time', 'membership_id', 'document.name', 'prior.name', 'document.sys.created_by', 'document.items.0.id', 'document.with-dash', ' document.name '],
      unknown: [
        ...['', 'document', 'prior', 'document.', 'document..name', '.name', 'document.na me', 'document.name!', 'document.$where'],
        ...['documents.name', 'event_type.x', 'unknown', 'process.env.SECRET', 'constructor', 'EVENT_TYPE'],
      ],
    }),
  )('%j is %s', (expr, outcome) => {
    expect(isKnownPlaceholder(expr)).toBe(outcome === 'known');
  });
});

describe('findPlaceholders', () => {
  it('lists expressions trimmed, unique, in order', () => {
    expect(findPlaceholders('{{ event_type }}/{{document.a.b}}?x={{event_type}}&y={{bogus}}')).toEqual([
      'event_type',
      'document.a.b',
      'bogus',
    ]);
  });

  it('ignores text that is not a complete placeholder', () => {
    expect(findPlaceholders('no {{ place {holder}} {{a{b}} }} {single}')).toEqual([]);
    expect(findPlaceholders('')).toEqual([]);
  });

  it('finds the inner placeholder in triple braces', () => {
    expect(findPlaceholders('{{{event_type}}}')).toEqual(['event_type']);
  });

  it('includes empty expressions so validation can reject them', () => {
    expect(findPlaceholders('{{}}{{  }}')).toEqual(['']);
  });

  it('scans adversarial input to the end: nothing in the unclosed braces, the placeholder after them', () => {
    // Opening braces that never close, 300,000 characters of them. A pattern that backtracks would
    // be quadratic here and not finish within the runner's test timeout; how fast the linear one is
    // belongs to a benchmark, not to an assertion.
    const evil = '{{' + ' '.repeat(200_000) + '{{'.repeat(50_000);
    expect(findPlaceholders(evil)).toEqual([]);
    expect(findPlaceholders(`${evil}}}`)).toEqual(['']);
    expect(findPlaceholders(`${evil} {{event_type}}`)).toEqual(['event_type']);
  });
});

describe('resolvePlaceholder', () => {
  const c = ctx();

  it.each([
    // the simple fields, trimmed
    ['event_type', 'UserCreated'],
    ['utilizer_id', 'u-123'],
    ['event_time', '2024-05-01T10:00:00.000Z'],
    ['membership_id', 'm-1'],
    ['  event_type  ', 'UserCreated'],
    // nested document and prior paths, including array indexes
    ['document.sys.created_by', 'admin-7'],
    ['prior.sys.created_by', 'admin-6'],
    ['document.items.1.id', 'i1'],
    ['document.sys.tags.0', 'a'],
    ['document.with-dash', 'dash'],
    // scalars and objects as text
    ['document.count', '3'],
    ['document.active', 'true'],
    ['document.nothing', ''],
    ['document.sys', '{"created_by":"admin-7","tags":["a","b"]}'],
    ['document.sys.tags', '["a","b"]'],
    // missing paths and unknown expressions are empty
    ['document.missing', ''],
    ['document.sys.missing.deeper', ''],
    ['document.name.first', ''], // into a string
    ['document.items.5.id', ''],
    ['document.items.-1', ''],
    ['document.items.01', ''],
    ['document.items.length', ''],
    ['document', ''],
    ['bogus', ''],
  ])('resolves %j to %j', (expression, value) => {
    expect(resolvePlaceholder(expression, c)).toBe(value);
  });

  it('converts dates and big integers', () => {
    const d = ctx({ document: { at: new Date('2024-01-02T03:04:05.000Z'), bad: new Date(Number.NaN), big: 10n } });
    expect(resolvePlaceholder('document.at', d)).toBe('2024-01-02T03:04:05.000Z');
    expect(resolvePlaceholder('document.bad', d)).toBe('');
    expect(resolvePlaceholder('document.big', d)).toBe('10');
  });

  it('returns empty text when there is no prior or the document is not an object', () => {
    expect(resolvePlaceholder('prior.name', ctx({ prior: null }))).toBe('');
    expect(resolvePlaceholder('prior.name', ctx({ prior: undefined }))).toBe('');
    expect(resolvePlaceholder('document.x', ctx({ document: 'a string' }))).toBe('');
  });

  it('never reaches prototypes', () => {
    for (const path of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'constructor.name', '__proto__.toString']) {
      expect(resolvePlaceholder(`document.${path}`, c)).toBe('');
      expect(resolvePlaceholder(`document.items.${path}`, c)).toBe('');
    }
    const inherited = Object.create({ secret: 'from-prototype' }) as object;
    expect(resolvePlaceholder('document.secret', ctx({ document: inherited }))).toBe('');
  });

  it('reads an own "__proto__" key as data (as JSON.parse creates it)', () => {
    const doc: unknown = JSON.parse('{"__proto__": {"x": "own"}}');
    expect(resolvePlaceholder('document.__proto__.x', ctx({ document: doc }))).toBe('own');
  });

  it('survives circular objects', () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    expect(resolvePlaceholder('document.self', ctx({ document: loop }))).toBe('');
    expect(resolvePlaceholder('document.self.self.a', ctx({ document: loop }))).toBe('1');
  });
});

describe('renderUrl', () => {
  it('substitutes and URL-encodes values', () => {
    const c = ctx({ document: { q: 'a b/&?#', name: 'Zoë 日本 🚀', id: 'x' } });
    expect(renderUrl('https://hooks.example.com/{{event_type}}/{{document.id}}?q={{document.q}}', c)).toBe(
      'https://hooks.example.com/UserCreated/x?q=a%20b%2F%26%3F%23',
    );
    expect(renderUrl('https://h.example/?n={{ document.name }}', c)).toBe(
      'https://h.example/?n=Zo%C3%AB%20%E6%97%A5%E6%9C%AC%20%F0%9F%9A%80',
    );
  });

  it('encoded values cannot change the path, query or fragment structure', () => {
    const c = ctx({ document: { id: '../../admin?x=1#frag' } });
    const url = new URL(renderUrl('https://h.example/users/{{document.id}}', c));
    expect(url.pathname).toBe('/users/..%2F..%2Fadmin%3Fx%3D1%23frag');
    expect(url.search).toBe('');
    expect(url.hash).toBe('');
  });

  it('encodes objects as JSON text and empties missing values', () => {
    const c = ctx();
    expect(renderUrl('http://h.example/?s={{document.sys.tags}}&m={{document.missing}}', c)).toBe(
      'http://h.example/?s=%5B%22a%22%2C%22b%22%5D&m=',
    );
  });

  it('handles lone surrogates instead of throwing URIError', () => {
    const c = ctx({ document: { v: 'a\uD800b' } });
    expect(renderUrl('http://h.example/{{document.v}}', c)).toBe('http://h.example/a%EF%BF%BDb');
  });

  it('does not re-expand placeholders inside values', () => {
    const c = ctx({ document: { v: '{{membership_id}}' } });
    expect(renderUrl('http://h.example/{{document.v}}', c)).toBe('http://h.example/%7B%7Bmembership_id%7D%7D');
  });

  it('accepts http and https only', () => {
    expect(renderUrl('http://localhost:8080/hook', ctx())).toBe('http://localhost:8080/hook');
    expect(renderUrl('HTTPS://H.EXAMPLE/hook', ctx())).toBe('HTTPS://H.EXAMPLE/hook');
  });

  it.each(['javascript:alert(1)', 'JavaScript:alert(document.cookie)', 'file:///etc/passwd', 'ftp://h.example/x', 'data:text/plain,hi', '/relative/path', 'relative', '//h.example/x', ''])(
    'throws TemplateError for %j, not an absolute http(s) URL',
    (template) => {
      expect(() => renderUrl(template, ctx({ document: {} }))).toThrow(TemplateError);
    },
  );

  /** Each template with the documents whose values must not make it a URL to call. */
  const hostileValues: Record<string, Record<string, string>[]> = {
    '{{document.url}}': [{ url: 'file:///etc/passwd' }, { url: 'https://evil.example/' }],
    '{{document.scheme}}://h.example/': [{ scheme: 'file' }],
    'https://{{document.host}}/x': [{ host: 'a/b' }, { host: 'a#b' }, { host: 'a b' }],
  };
  it.each(Object.entries(hostileValues).flatMap(([template, documents]) => documents.map((document) => [template, document] as const)))(
    'throws TemplateError for %j with %j',
    (template, document) => {
      expect(() => renderUrl(template, ctx({ document }))).toThrow(TemplateError);
    },
  );

  it('enforces the size and placeholder limits', () => {
    const big = 'https://h.example/' + 'a'.repeat(TEMPLATE_MAX_BYTES);
    expect(() => renderUrl(big, ctx())).toThrow(TemplateError);
    const many = 'https://h.example/' + '{{event_type}}'.repeat(TEMPLATE_MAX_PLACEHOLDERS + 1);
    expect(() => renderUrl(many, ctx())).toThrow(/placeholders/);
    const ok = 'https://h.example/' + '{{event_type}}'.repeat(TEMPLATE_MAX_PLACEHOLDERS);
    expect(renderUrl(ok, ctx())).toContain('UserCreatedUserCreated');
  });

  it('measures size in UTF-8 bytes', () => {
    const prefix = 'https://h.example/';
    const fits = prefix + 'é'.repeat((TEMPLATE_MAX_BYTES - prefix.length) / 2 - 1);
    expect(() => renderUrl(fits, ctx())).not.toThrow();
    const over = prefix + 'é'.repeat(TEMPLATE_MAX_BYTES / 2);
    expect(() => renderUrl(over, ctx())).toThrow(TemplateError);
  });

  it('TemplateError is an Error with its own name', () => {
    const error = templateErrorOf(() => renderUrl('nope', ctx()), 'TemplateInvalid');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('TemplateError');
  });
});

describe('renderHeaders', () => {
  it('substitutes raw values', () => {
    const c = ctx();
    const result = renderHeaders(
      { 'X-Event': '{{event_type}}', 'X-User': 'user {{document.name}}', Authorization: 'Bearer static', 'X-Tab': 'a\t{{document.count}}' },
      c,
    );
    expect(result).toEqual({
      headers: { 'X-Event': 'UserCreated', 'X-User': 'user Ada Lovelace', Authorization: 'Bearer static', 'X-Tab': 'a\t3' },
      skipped: [],
    });
  });

  it('skips a header whose value would contain CR/LF or other control characters', () => {
    const c = ctx({
      document: {
        crlf: 'x\r\nX-Admin: true',
        lf: 'x\nSet-Cookie: a=b',
        cr: 'x\r',
        nul: 'x\u0000',
        del: 'x\u007f',
        c1: 'x\u0085',
        ok: 'fine',
      },
    });
    const result = renderHeaders(
      {
        'X-Crlf': '{{document.crlf}}',
        'X-Lf': '{{document.lf}}',
        'X-Cr': '{{document.cr}}',
        'X-Nul': '{{document.nul}}',
        'X-Del': '{{document.del}}',
        'X-C1': '{{document.c1}}',
        'X-Static-Newline': 'a\nb',
        'X-Ok': '{{document.ok}}',
      },
      c,
    );
    expect(result.headers).toEqual({ 'X-Ok': 'fine' });
    expect(result.skipped).toEqual(['X-Crlf', 'X-Lf', 'X-Cr', 'X-Nul', 'X-Del', 'X-C1', 'X-Static-Newline']);
    expect(Object.keys(result.headers)).not.toContain('X-Admin');
  });

  it('keeps Latin-1 but skips values fetch cannot send (above U+00FF)', () => {
    const c = ctx({ document: { latin: 'Zoë', cjk: '日本', emoji: '🚀', ls: 'a\u2028b' } });
    const result = renderHeaders({ A: '{{document.latin}}', B: '{{document.cjk}}', C: '{{document.emoji}}', D: '{{document.ls}}' }, c);
    expect(result.headers).toEqual({ A: 'Zoë' });
    expect(result.skipped).toEqual(['B', 'C', 'D']);
    expect(() => new Headers(result.headers)).not.toThrow();
  });

  it('skips invalid header names and non-string values', () => {
    const headers = { 'Bad Name': 'x', 'X\r\nInjected': 'y', 'X-Num': 5, 'Good-Name': 'z' } as unknown as Record<string, string>;
    const result = renderHeaders(headers, ctx());
    expect(result.headers).toEqual({ 'Good-Name': 'z' });
    expect(result.skipped).toEqual(['Bad Name', 'X\r\nInjected', 'X-Num']);
  });

  it('returns empty results for undefined headers', () => {
    expect(renderHeaders(undefined, ctx())).toEqual({ headers: {}, skipped: [] });
  });

  it('does not mutate the input and keeps "__proto__" as an own header name', () => {
    const input: Record<string, string> = JSON.parse('{"__proto__": "{{event_type}}", "X-A": "{{utilizer_id}}"}');
    const copy = JSON.parse(JSON.stringify(input));
    const result = renderHeaders(input, ctx());
    expect(input).toEqual(copy);
    expect(Object.keys(result.headers)).toEqual(['__proto__', 'X-A']);
    expect(Object.getPrototypeOf(result.headers)).toBe(Object.prototype);
  });

  it('does not re-expand placeholders inside values', () => {
    const c = ctx({ document: { v: '{{membership_id}}' } });
    expect(renderHeaders({ X: '{{document.v}}' }, c).headers).toEqual({ X: '{{membership_id}}' });
  });

  it('enforces limits across all headers together', () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 11; i++) headers[`X-${i}`] = '{{event_type}}'.repeat(100);
    expect(() => renderHeaders(headers, ctx())).toThrow(TemplateError);
    expect(() => renderHeaders({ X: 'a'.repeat(TEMPLATE_MAX_BYTES) }, ctx())).toThrow(TemplateError);
  });
});

describe('renderBody', () => {
  it('returns undefined for an undefined body', () => {
    expect(renderBody(undefined, ctx())).toBeUndefined();
  });

  it('templates string values only, leaving keys and other scalars alone', () => {
    const body: JsonValue = {
      event: '{{event_type}}',
      '{{event_type}}': 'key stays',
      n: 1,
      b: false,
      z: null,
      nested: { by: '{{document.sys.created_by}}', before: '{{prior.sys.created_by}}' },
    };
    expect(renderBody(body, ctx())).toEqual({
      event: 'UserCreated',
      '{{event_type}}': 'key stays',
      n: 1,
      b: false,
      z: null,
      nested: { by: 'admin-7', before: 'admin-6' },
    });
  });

  it('keeps an injection payload inside its string', () => {
    const c = ctx({ document: { name: '"},"admin":true,"x":{"' } });
    const body: JsonValue = { user: { name: '{{document.name}}' } };
    const result = renderBody(body, c);
    const roundTrip = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
    expect(Object.keys(roundTrip)).toEqual(['user']);
    expect(roundTrip).not.toHaveProperty('admin');
    expect(roundTrip).toEqual({ user: { name: '"},"admin":true,"x":{"' } });
  });

  it('inserts objects as JSON text, inside the string', () => {
    const result = renderBody({ doc: '{{document.sys}}', tags: 'tags={{document.sys.tags}}' }, ctx());
    expect(result).toEqual({ doc: '{"created_by":"admin-7","tags":["a","b"]}', tags: 'tags=["a","b"]' });
  });

  it('walks arrays, including arrays of objects and nested arrays', () => {
    const body: JsonValue = ['{{event_type}}', 1, [{ m: '{{membership_id}}' }, ['{{document.items.0.id}}']], null];
    expect(renderBody(body, ctx())).toEqual(['UserCreated', 1, [{ m: 'm-1' }, ['i0']], null]);
  });

  it('handles a string body and scalar bodies', () => {
    expect(renderBody('{{event_type}}', ctx())).toBe('UserCreated');
    expect(renderBody(42, ctx())).toBe(42);
    expect(renderBody(null, ctx())).toBeNull();
  });

  it('empties missing and prototype paths', () => {
    const result = renderBody(
      { a: '[{{document.missing}}]', b: '{{document.constructor}}', c: '{{document.__proto__}}', d: '{{nope}}' },
      ctx(),
    );
    expect(result).toEqual({ a: '[]', b: '', c: '', d: '' });
  });

  it('does not re-expand placeholders inside values', () => {
    const c = ctx({ document: { v: '{{membership_id}} {{document.v}}' } });
    expect(renderBody({ x: '{{document.v}}' }, c)).toEqual({ x: '{{membership_id}} {{document.v}}' });
  });

  it('never mutates the input and returns new containers', () => {
    const body = { a: '{{event_type}}', list: ['{{utilizer_id}}'], inner: { k: '{{membership_id}}' } };
    const snapshot = JSON.parse(JSON.stringify(body));
    const result = renderBody(body, ctx()) as typeof body;
    expect(body).toEqual(snapshot);
    expect(result).not.toBe(body);
    expect(result.list).not.toBe(body.list);
    expect(result.inner).not.toBe(body.inner);
  });

  it('keeps an own "__proto__" key as data without touching the prototype', () => {
    const body = JSON.parse('{"__proto__": {"polluted": "{{event_type}}"}}') as JsonValue;
    const result = renderBody(body, ctx()) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__']);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"polluted":"UserCreated"}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('enforces the limits over the whole body', () => {
    const many: JsonValue = Array.from({ length: 11 }, () => '{{event_type}}'.repeat(100));
    expect(() => renderBody(many, ctx())).toThrow(/placeholders/);
    const exact: JsonValue = Array.from({ length: 10 }, () => '{{event_type}}'.repeat(100));
    expect(() => renderBody(exact, ctx())).not.toThrow();
    const large: JsonValue = { a: 'x'.repeat(TEMPLATE_MAX_BYTES / 2), b: 'y'.repeat(TEMPLATE_MAX_BYTES / 2) };
    expect(() => renderBody(large, ctx())).toThrow(/larger/);
    const wide: JsonValue = Array.from({ length: TEMPLATE_MAX_BYTES + 1 }, () => 0);
    expect(() => renderBody(wide, ctx())).toThrow(TemplateError);
  });

  it('rejects excessive nesting instead of overflowing the stack', () => {
    let deep: JsonValue = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => renderBody(deep, ctx())).toThrow(/nested/);
    let ok: JsonValue = '{{event_type}}';
    for (let i = 0; i < TEMPLATE_MAX_BODY_DEPTH; i++) ok = { k: ok };
    expect(JSON.stringify(renderBody(ok, ctx()))).toContain('UserCreated');
  });
});

describe('rendered output limits', () => {
  const big = 'x'.repeat(60_000);
  const withBig = (extra: Record<string, unknown> = {}): TemplateContext => ctx({ document: { big, ...extra } });
  const identity = (value: string): string => value;

  const tooLarge = (render: () => unknown): TemplateError => templateErrorOf(render, 'TemplateOutputTooLarge');

  it('are 64 KiB for URL and headers together and 1 MiB for a body', () => {
    expect(RENDERED_URL_AND_HEADERS_MAX_BYTES).toBe(64 * 1024);
    expect(RENDERED_BODY_MAX_BYTES).toBe(1024 * 1024);
    expect(urlAndHeadersBudget().limit).toBe(RENDERED_URL_AND_HEADERS_MAX_BYTES);
    expect(bodyBudget().limit).toBe(RENDERED_BODY_MAX_BYTES);
  });

  it('renderText stops at the first piece past the limit, before encoding or joining it', () => {
    const encoded: string[] = [];
    const encode = (value: string): string => {
      encoded.push(value);
      return value;
    };
    const budget = new OutputBudget(150_000, 'Text');
    const error = tooLarge(() => renderText('{{document.big}}'.repeat(1000), withBig(), encode, budget));
    // Two values fit; the third is refused on its length alone, never encoded.
    expect(encoded).toHaveLength(2);
    expect(budget.usedBytes).toBe(180_000);
    expect(error.message).toBe('Text would render to more than 150000 bytes (the limit); rendering stopped');
  });

  it('renderText counts literal text, values and multi-byte characters, exactly up to the limit', () => {
    const template = 'é-{{document.name}}-é';
    const rendered = 'é-Ada Lovelace-é';
    const exact = utf8Bytes(rendered);
    expect(renderText(template, ctx(), identity, new OutputBudget(exact, 'Text'))).toBe(rendered);
    tooLarge(() => renderText(template, ctx(), identity, new OutputBudget(exact - 1, 'Text')));
  });

  it('a body is counted as its JSON serialization: exactly at the limit renders, one byte less fails', () => {
    const body: JsonValue = {
      plain: '{{document.name}} says "hi"\n',
      list: ['{{document.sys.tags}}', 1.5, true, null, { 'quoted "key"': '\u0001{{document.email}}' }],
      empty: {},
      none: [],
      unicode: 'naïve 😀 {{document.with-dash}}',
    };
    const rendered = renderBody(body, ctx());
    const exact = Buffer.byteLength(JSON.stringify(rendered), 'utf8');
    const budget = new OutputBudget(exact, 'Body');
    expect(renderBody(body, ctx(), budget)).toEqual(rendered);
    expect(budget.usedBytes).toBe(exact);
    tooLarge(() => renderBody(body, ctx(), new OutputBudget(exact - 1, 'Body')));
  });

  it('jsonStringBytes matches JSON.stringify for escaped and plain text', () => {
    for (const text of ['plain', 'quote " and \\ backslash', 'control \u0000\u001f\n\t', 'é 😀', 'lone \ud800 surrogate']) {
      expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text), 'utf8') - 2);
    }
  });

  it('the amplification case: 1000 placeholders of a 60 KB value stop the body past 1 MiB', () => {
    const error = tooLarge(() => renderBody({ blob: '{{document.big}}'.repeat(1000) }, withBig()));
    expect(error.message).toContain(`Body would render to more than ${RENDERED_BODY_MAX_BYTES} bytes`);
  });

  it('a body of exactly 1 MiB renders', () => {
    const envelope = Buffer.byteLength(JSON.stringify({ blob: '' }));
    const copies = Math.floor((RENDERED_BODY_MAX_BYTES - envelope) / big.length);
    const padding = 'p'.repeat(RENDERED_BODY_MAX_BYTES - envelope - copies * big.length);
    const body = renderBody({ blob: '{{document.big}}'.repeat(copies) + padding }, withBig());
    expect(Buffer.byteLength(JSON.stringify(body))).toBe(RENDERED_BODY_MAX_BYTES);
    tooLarge(() => renderBody({ blob: '{{document.big}}'.repeat(copies) + padding + 'p' }, withBig()));
  });

  it('URL and headers share one budget: each fits alone, together they do not', () => {
    const url = 'https://example.com/?a={{document.half}}';
    const half = 'h'.repeat(40_000);
    const context = withBig({ half });
    expect(renderUrl(url, context)).toContain(half);
    expect(renderHeaders({ 'X-Half': '{{document.half}}' }, context).headers['X-Half']).toBe(half);
    const shared = urlAndHeadersBudget();
    renderUrl(url, context, shared);
    const error = tooLarge(() => renderHeaders({ 'X-Half': '{{document.half}}' }, context, shared));
    expect(error.message).toContain(`URL and headers would render to more than ${RENDERED_URL_AND_HEADERS_MAX_BYTES} bytes`);
  });

  it('counts the URL after encoding and header names with their values', () => {
    // 30,000 spaces encode to 90,000 bytes.
    tooLarge(() => renderUrl('https://example.com/?q={{document.spaces}}', ctx({ document: { spaces: ' '.repeat(30_000) } })));
    const name = 'X-'.padEnd(200, 'n');
    const budget = new OutputBudget(200 + 3, 'Headers');
    expect(renderHeaders({ [name]: 'abc' }, ctx(), budget).headers[name]).toBe('abc');
    tooLarge(() => renderHeaders({ [name]: 'abcd' }, ctx(), new OutputBudget(200 + 3, 'Headers')));
  });

  it('other template errors carry the TemplateInvalid code', () => {
    templateErrorOf(() => renderUrl('ftp://example.com/', ctx()), 'TemplateInvalid');
  });
});
