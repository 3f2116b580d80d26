import { isCredentialHeader, isSecretKey, MASKED_VALUE, sanitizeDocument } from './sanitize';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLXZhbHVl';

describe('sanitizeDocument', () => {
  it.each([
    ...['password', 'password_hash', 'passwordHash', 'password-hash', 'PASSWORD_HASH', 'secret', 'secret_key', 'secretKey'],
    ...['secret_digest', 'digest', 'token_digest', 'token', 'access_token', 'refresh_token', 'id_token'],
    ...['client_secret', 'device_code', 'api_key'],
  ])('drops %s (a password, hash, secret, secret key, digest or token) at the top level', (key) => {
    expect(sanitizeDocument({ username: 'ada', [key]: 'value' })).toEqual({ username: 'ada' });
  });

  it('drops them at any depth, inside objects and arrays', () => {
    const clean = sanitizeDocument({
      user: { name: 'ada', password_hash: 'h', nested: { deeper: { secret: 's', ok: 1 } } },
      list: [{ token: 't', keep: true }, [{ refresh_token: 'r', id: 'x' }]],
      applications: [{ _id: 'a1', secret_digest: 'd' }],
    });
    expect(clean).toEqual({
      user: { name: 'ada', nested: { deeper: { ok: 1 } } },
      list: [{ keep: true }, [{ id: 'x' }]],
      applications: [{ _id: 'a1' }],
    });
  });

  it.each(['reset_token', 'new_password', 'webhook_secret', 'sha256_digest'])('drops %s, a key ending in a secret word', (key) => {
    expect(sanitizeDocument({ [key]: 'value', kept: 1 })).toEqual({ kept: 1 });
  });

  it.each<[string, unknown]>([
    ['is_refresh_token', true],
    ['token_type', 'Bearer'],
    ['refresh_token_expires_in', 86400],
    ['expires_at', '2026-01-01T00:00:00.000Z'],
    ['hash_algorithm', 'ARGON2ID'],
    ['password_changed_at', '2026-01-01T00:00:00.000Z'],
  ])('keeps %s: a fact about a secret, not the secret', (key, value) => {
    expect(sanitizeDocument({ [key]: value })).toEqual({ [key]: value });
  });

  it('drops token strings (JWTs, Bearer/Basic credentials) under any key and in arrays', () => {
    const clean = sanitizeDocument({
      note: JWT,
      header: `Bearer ${JWT}`,
      basic: 'Basic YWxhZGRpbjpvcGVuc2VzYW1lMTIz',
      list: ['plain', JWT, 'Bearer abcdefghijklmnopqrstuvwxyz'],
      bio: 'Basic training in 2020',
      greeting: 'Bearer of good news',
    });
    expect(clean).toEqual({ list: ['plain'], bio: 'Basic training in 2020', greeting: 'Bearer of good news' });
  });

  it('masks the values of credential-carrying header names and keeps the names', () => {
    const credentials = {
      Authorization: 'Bearer abc',
      'Proxy-Authorization': 'Basic abc',
      Cookie: 'sid=1',
      'X-Api-Key': 'k',
      'X-Auth-Token': 't',
      'X-Client-Secret': 's',
    };
    const others = { 'X-Event': '{{event_type}}', 'Content-Type': 'application/json' };
    const masked = Object.fromEntries(Object.keys(credentials).map((name) => [name, MASKED_VALUE]));
    const clean = sanitizeDocument({ request: { headers: { ...credentials, ...others } } });
    expect(clean).toEqual({ request: { headers: { ...masked, ...others } } });
  });

  it('keeps already-masked values under any key', () => {
    expect(sanitizeDocument({ token: MASKED_VALUE, Token: 'x' })).toEqual({ token: MASKED_VALUE });
  });

  it('copies instead of mutating, turns dates into ISO text and drops functions', () => {
    const input = { when: new Date('2026-01-02T03:04:05.678Z'), fn: () => 1, password: 'p', n: Number.NaN, big: 10n };
    const clean = sanitizeDocument(input);
    expect(clean).toEqual({ when: '2026-01-02T03:04:05.678Z', n: null, big: '10' });
    expect(input.password).toBe('p');
  });

  it('survives cycles, deep nesting and a __proto__ key', () => {
    const cyclic: Record<string, unknown> = { name: 'x' };
    cyclic.self = cyclic;
    expect(sanitizeDocument(cyclic)).toEqual({ name: 'x', self: null });

    let deep: Record<string, unknown> = { password: 'p' };
    for (let i = 0; i < 100; i++) deep = { next: deep };
    expect(JSON.stringify(sanitizeDocument(deep))).not.toContain('"password"');

    const hostile = JSON.parse('{"__proto__": {"secret": "s", "polluted": true}}') as object;
    const clean = sanitizeDocument(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(clean, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves scalars alone', () => {
    expect(sanitizeDocument('text')).toBe('text');
    expect(sanitizeDocument(5)).toBe(5);
    expect(sanitizeDocument(null)).toBeNull();
  });
});

describe('isSecretKey / isCredentialHeader', () => {
  it.each(['password', 'Password_Hash', 'secret', 'secretKey', 'token', 'accessToken', 'my_digest'])('%s is a secret key', (key) => {
    expect(isSecretKey(key)).toBe(true);
  });
  it.each(['username', 'token_type', 'hash_algorithm', 'expires_in', 'keyword'])('%s is not a secret key', (key) => {
    expect(isSecretKey(key)).toBe(false);
  });
  it.each(['Authorization', 'proxy-authorization', 'Cookie', 'X-API-KEY', 'X-Auth-Token', 'x-secret', 'X-Password'])(
    '%s carries a credential',
    (name) => expect(isCredentialHeader(name)).toBe(true),
  );
  it.each(['Content-Type', 'X-Event', 'User-Agent', 'X-Webhook-Signature'])('%s does not', (name) => {
    expect(isCredentialHeader(name)).toBe(false);
  });
});
