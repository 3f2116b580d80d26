import { bodyProblem, eventProblem, headersProblems, methodProblem, TRIGGER_EVENT_TYPES, urlProblem, urlWithFixedHost } from './webhook-template-rules';

describe('eventProblem', () => {
  it.each(['UserCreated', 'TokenGenerated', 'WebhookDeleted', 'TokenCodeDenied'])('accepts %s', (type) => {
    expect(eventProblem(type)).toBeUndefined();
  });
  it.each(['WebhookRequestSent', 'WebhookRequestFailed', 'MailhookMailSent', 'MailhookMailFailed'])('refuses the result event %s', (type) => {
    expect(eventProblem(type)).toMatch(/result event/);
  });
  it.each(['usercreated', 'Nope', '', 5, null, '__proto__', 'constructor'])('refuses %p', (type) => {
    expect(eventProblem(type)).toBeDefined();
  });
  it('offers no result event as trigger', () => {
    expect(TRIGGER_EVENT_TYPES).not.toContain('WebhookRequestSent');
    expect(TRIGGER_EVENT_TYPES).toContain('UserCreated');
  });
});

describe('methodProblem', () => {
  it.each(['GET', 'post', 'Put', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'])('accepts %s', (method) => expect(methodProblem(method)).toBeUndefined());
  it.each(['CONNECT', 'TRACE', 'BREW', '', 1, null])('refuses %p', (method) => expect(methodProblem(method)).toBeDefined());
});

describe('urlProblem', () => {
  it.each([
    'https://example.com/hook',
    'http://127.0.0.1:8080/x',
    'https://example.com/{{event_type}}/{{document._id}}?by={{utilizer_id}}&at={{event_time}}',
    'https://{{membership_id}}.example.com/',
    'https://example.com/{{ document.sys.created_by }}',
    'https://example.com/{{prior.items.0.id}}',
  ])('accepts %s', (url) => expect(urlProblem(url)).toBeUndefined());

  it.each([
    ['relative', '/hook'],
    ['no scheme', 'example.com/hook'],
    ['ftp', 'ftp://example.com/'],
    ['file', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['data', 'data:text/plain,hi'],
    ['only a placeholder', '{{document.url}}'],
    ['a placeholder scheme', '{{document.scheme}}://example.com'],
    ['a placeholder port', 'http://example.com:{{document.port}}/'],
    ['an unknown placeholder', 'https://example.com/{{secret}}'],
    ['an unknown root', 'https://example.com/{{env.HOME}}'],
    ['an invalid path segment', 'https://example.com/{{document.a b}}'],
    ['empty', ''],
    ['not a string', 42],
    ['too long', `https://example.com/${'a'.repeat(5000)}`],
  ])('refuses %s', (_what, url) => expect(urlProblem(url)).toBeDefined());
});

describe('headersProblems', () => {
  it('accepts string values with known placeholders', () => {
    expect(headersProblems({ 'X-Event': '{{event_type}}', Authorization: 'Bearer abc', 'X-Tab': 'a\tb' })).toEqual([]);
    expect(headersProblems(undefined)).toEqual([]);
  });
  it.each([
    [{ 'X-A': 1 }, /string value/],
    [{ 'Bad Name': 'x' }, /valid HTTP header name/],
    [{ '': 'x' }, /valid HTTP header name/],
    [{ 'X-A': 'a\r\nX-B: 1' }, /line breaks/],
    [{ 'X-A': 'a\nb' }, /line breaks/],
    [{ 'X-A': 'a\u0000b' }, /control/],
    [{ Host: 'evil' }, /set by the service/],
    [{ 'content-length': '1' }, /set by the service/],
    [{ 'Transfer-Encoding': 'chunked' }, /set by the service/],
    [{ 'x-webhook-signature': 'forged' }, /set by the service/],
    [{ 'X-A': '{{document}}' }, /unknown placeholder/],
    [['a'], /object/],
    ['text', /object/],
  ])('refuses %p', (headers, message) => {
    const problems = headersProblems(headers);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join(' ')).toMatch(message);
  });
  it('refuses too many headers', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v']));
    expect(headersProblems(many)).toEqual(['must have at most 50 headers']);
  });
});

describe('bodyProblem', () => {
  it('accepts JSON objects with known placeholders at any depth', () => {
    expect(bodyProblem({ a: '{{document.x}}', b: [1, { c: '{{prior.y}} and {{event_type}}' }], d: null, e: true })).toBeUndefined();
    expect(bodyProblem(undefined)).toBeUndefined();
    expect(bodyProblem({})).toBeUndefined();
  });
  it.each([
    [[1, 2], /JSON object/],
    ['text', /JSON object/],
    [5, /JSON object/],
    [{ a: { b: ['{{nope}}'] } }, /unknown placeholder/],
    [{ a: 'x'.repeat(70_000) }, /larger than/],
  ])('refuses %p', (body, message) => expect(bodyProblem(body)).toMatch(message));
  it('refuses bodies nested past the template limit', () => {
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < 70; i++) deep = { next: deep };
    expect(bodyProblem(deep)).toMatch(/nested deeper/);
  });
});

describe('urlWithFixedHost', () => {
  // The URL with the samples in place where its host is fixed; undefined leaves it to the connect-time check.
  it.each<[string, string | undefined]>([
    ['http://127.0.0.1:8080/{{event_type}}', 'http://127.0.0.1:8080/sample'],
    ['https://example.com/a?x={{document._id}}', 'https://example.com/a?x=sample'],
    ['HTTP://[::1]/', 'HTTP://[::1]/'],
    // user-info placeholders cannot move the host: their values are URL-encoded
    ['http://{{document._id}}@10.0.0.1/', 'http://sample@10.0.0.1/'],
    ['http://a@{{document.host}}/', undefined],
    // a templated host, or no URL at all
    ['http://{{document.host}}/', undefined],
    ['http://{{document.firstname}}:8080/x', undefined],
    ['https://{{membership_id}}.example.com/', undefined],
    ['not a url', undefined],
    ['{{document.url}}', undefined],
  ])('%s -> %s', (template, expected) => {
    expect(urlWithFixedHost(template)).toBe(expected);
  });
});
