import { OAuthError } from '../common/oauth-error';
import { parseResourceParameter, parseScopeParameter, spaceDelimited } from './request-parameters';

const ALLOWED = ['openid', 'profile', 'email', 'offline_access'];

function oauthErrorOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof OAuthError) return error.error;
    throw error;
  }
  return undefined;
}

describe('parseScopeParameter', () => {
  it('splits on spaces, drops empty tokens and repeats, keeps the order asked', () => {
    expect(parseScopeParameter(undefined, ALLOWED)).toEqual([]);
    expect(parseScopeParameter('  openid  profile openid ', ALLOWED)).toEqual(['openid', 'profile']);
  });

  it.each([
    ['an unknown scope', 'openid admin'],
    ['a scope of another case', 'OpenID'],
    ['a tab inside', 'openid\tprofile'],
    ['a quote', 'open"id'],
    ['a backslash', 'open\\id'],
    ['a non-ASCII letter', 'opénid'],
    ['a very long unknown scope', 'x'.repeat(3000)],
  ])('refuses %s with invalid_scope', (_name, value) => {
    expect(oauthErrorOf(() => parseScopeParameter(value, ALLOWED))).toBe('invalid_scope');
  });

  it('with nothing allowed, any scope is invalid_scope and none is fine', () => {
    expect(parseScopeParameter('', [])).toEqual([]);
    expect(oauthErrorOf(() => parseScopeParameter('openid', []))).toBe('invalid_scope');
  });

  it('never echoes a long scope in the description', () => {
    try {
      parseScopeParameter('y'.repeat(500), ALLOWED);
    } catch (error) {
      expect((error as OAuthError).description).not.toContain('y'.repeat(100));
    }
  });
});

describe('parseResourceParameter', () => {
  it('takes an absolute URI as it is', () => {
    expect(parseResourceParameter('https://api.example.com/v1')).toBe('https://api.example.com/v1');
    expect(parseResourceParameter('urn:example:api')).toBe('urn:example:api');
    expect(parseResourceParameter(undefined)).toBeUndefined();
  });

  it.each(['/relative', 'api.example.com', 'https://api.example.com/#frag', 'https://api.example.com/#', 'https://api.example.com/ x', 'https://a.example/\u0000'])(
    'refuses %j with invalid_target',
    (value) => {
      expect(oauthErrorOf(() => parseResourceParameter(value))).toBe('invalid_target');
    },
  );
});

describe('spaceDelimited', () => {
  it('splits on spaces and drops the empty values of repeated, leading and trailing ones', () => {
    expect(spaceDelimited(' openid  profile ')).toEqual(['openid', 'profile']);
    expect(spaceDelimited('login consent')).toEqual(['login', 'consent']);
  });

  it('answers none for an absent or empty value', () => {
    expect(spaceDelimited(undefined)).toEqual([]);
    expect(spaceDelimited(null)).toEqual([]);
    expect(spaceDelimited('   ')).toEqual([]);
  });
});
