import { PortcullisClient } from './client';
import { PortcullisConfigError } from './errors';
import { DEFAULT_TIMEOUT_MS, type PortcullisSettings, resolveSettings } from './settings';

const valid: PortcullisSettings = { BaseUrl: 'https://id.example.com', MembershipId: 'm-1' };

function settingsWith(patch: Record<string, unknown>): PortcullisSettings {
  // Deliberately ill-typed values: the settings arrive from configuration at run time.
  const merged: unknown = { ...valid, ...patch };
  return merged as PortcullisSettings;
}

describe('settings', () => {
  it('applies the defaults', () => {
    const resolved = resolveSettings(valid);
    expect(resolved.baseUrl.href).toBe('https://id.example.com/');
    expect(resolved.membershipId).toBe('m-1');
    expect(resolved.basicTokenCacheTtlMs).toBe(0);
    expect(resolved.timeoutMs).toBe(DEFAULT_TIMEOUT_MS);
  });

  it('CacheTTL needs StreamCredentials, which must be <id>:<secret>; the stream authorization is Basic', () => {
    expect(resolveSettings(valid)).toMatchObject({ cacheTtlMs: 0, streamAuthorization: undefined });
    expect(resolveSettings(settingsWith({ CacheTTL: 30, StreamCredentials: 'app-1:s3cret' }))).toMatchObject({
      cacheTtlMs: 30_000,
      streamAuthorization: 'Basic app-1:s3cret',
    });
    expect(() => resolveSettings(settingsWith({ CacheTTL: 30 }))).toThrow(/CacheTTL needs StreamCredentials/);
    for (const bad of ['no-colon', ':secret', 'id:', 'id:with space', 42]) {
      expect(() => resolveSettings(settingsWith({ CacheTTL: 30, StreamCredentials: bad }))).toThrow(PortcullisConfigError);
    }
    expect(() => resolveSettings(settingsWith({ CacheTTL: -1, StreamCredentials: 'a:b' }))).toThrow(/CacheTTL must be/);
  });

  it.each([
    ['https://x/auth/', 'https://x/auth/whoami'],
    ['https://x/auth', 'https://x/auth/whoami'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/whoami'],
    ['https://x/a/b/', 'https://x/a/b/whoami'],
  ])('keeps the path prefix of %s', (baseUrl, whoami) => {
    const resolved = resolveSettings(settingsWith({ BaseUrl: baseUrl }));
    expect(new URL('whoami', resolved.baseUrl).href).toBe(whoami);
  });

  it('converts the cache TTL to milliseconds and accepts 0 and fractions', () => {
    expect(resolveSettings(settingsWith({ BasicTokenCacheTTL: 30 })).basicTokenCacheTtlMs).toBe(30_000);
    expect(resolveSettings(settingsWith({ BasicTokenCacheTTL: 0 })).basicTokenCacheTtlMs).toBe(0);
    expect(resolveSettings(settingsWith({ BasicTokenCacheTTL: 0.25 })).basicTokenCacheTtlMs).toBe(250);
    expect(resolveSettings(settingsWith({ TimeoutMs: 100 })).timeoutMs).toBe(100);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a missing BaseUrl', { BaseUrl: undefined }, /BaseUrl is required/],
    ['an empty BaseUrl', { BaseUrl: '  ' }, /BaseUrl is required/],
    ['a relative BaseUrl', { BaseUrl: '/auth' }, /not an absolute URL/],
    ['a host without scheme', { BaseUrl: 'id.example.com' }, /not an absolute URL|http or https/],
    ['an ftp BaseUrl', { BaseUrl: 'ftp://id.example.com/' }, /http or https/],
    ['a javascript BaseUrl', { BaseUrl: 'javascript:alert(1)' }, /http or https/],
    ['credentials in BaseUrl', { BaseUrl: 'https://u:p@id.example.com/' }, /credentials/],
    ['a query in BaseUrl', { BaseUrl: 'https://id.example.com/?a=1' }, /query/],
    ['a fragment in BaseUrl', { BaseUrl: 'https://id.example.com/#x' }, /fragment/],
    ['a non-string BaseUrl', { BaseUrl: 42 }, /BaseUrl is required/],
    ['a missing MembershipId', { MembershipId: undefined }, /MembershipId is required/],
    ['an empty MembershipId', { MembershipId: '' }, /MembershipId is required/],
    ['a blank MembershipId', { MembershipId: '   ' }, /MembershipId is required/],
    ['a padded MembershipId', { MembershipId: ' m-1 ' }, /whitespace/],
    ['a negative TTL', { BasicTokenCacheTTL: -1 }, /BasicTokenCacheTTL/],
    ['an infinite TTL', { BasicTokenCacheTTL: Infinity }, /BasicTokenCacheTTL/],
    ['a NaN TTL', { BasicTokenCacheTTL: NaN }, /BasicTokenCacheTTL/],
    ['a string TTL', { BasicTokenCacheTTL: '60' }, /BasicTokenCacheTTL/],
    ['a zero timeout', { TimeoutMs: 0 }, /TimeoutMs/],
    ['a huge timeout', { TimeoutMs: 2 ** 31 }, /TimeoutMs/],
    ['an unknown setting', { BasicTokenCacheTtl: 60 }, /unknown setting "BasicTokenCacheTtl"/],
  ])('rejects %s at construction', (_label, patch, message) => {
    const construct = (): PortcullisClient => new PortcullisClient(settingsWith(patch));
    expect(construct).toThrow(PortcullisConfigError);
    expect(construct).toThrow(message);
  });

  it('rejects a settings value that is not an object', () => {
    expect(() => new PortcullisClient(null as unknown as PortcullisSettings)).toThrow(PortcullisConfigError);
  });
});
