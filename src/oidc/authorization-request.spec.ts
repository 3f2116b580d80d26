import { createHash } from 'node:crypto';
import { AuthorizationError, authorizationResponseUrl, parseAuthorizationRequest } from './authorization-request';
import type { OidcClient } from './oidc-clients';
import { escapeHtml, loginPage } from './pages';
import { s256Challenge } from './pkce';

const client: OidcClient = {
  id: 'client-1',
  membershipId: 'm-1',
  name: 'App',
  oidc: { redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: [], grant_types: ['authorization_code'], public: false, require_consent: true },
};
const verifier = 'v'.repeat(43);
const challenge = createHash('sha256').update(verifier).digest('base64url');
const good = { response_type: 'code', scope: 'openid profile', code_challenge: challenge, code_challenge_method: 'S256', state: 's' };

const errorOf = (query: Record<string, unknown>): string | undefined => {
  try {
    parseAuthorizationRequest(query, client, 'https://app.example/cb');
    return undefined;
  } catch (error) {
    if (error instanceof AuthorizationError) return error.error;
    throw error;
  }
};

describe('parseAuthorizationRequest', () => {
  it('accepts a code request with S256 PKCE and known scopes', () => {
    expect(parseAuthorizationRequest(good, client, 'https://app.example/cb')).toMatchObject({ scopes: ['openid', 'profile'], state: 's', prompts: [] });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no response_type', { response_type: undefined }, 'invalid_request'],
    ['an implicit response_type', { response_type: 'token' }, 'unsupported_response_type'],
    ['a hybrid response_type', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['no challenge', { code_challenge: undefined }, 'invalid_request'],
    ['a plain challenge', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no method (RFC 7636 defaults to plain)', { code_challenge_method: undefined }, 'invalid_request'],
    ['a short challenge', { code_challenge: 'abc' }, 'invalid_request'],
    ['an unknown scope', { scope: 'openid users.read' }, 'invalid_scope'],
    ['no openid', { scope: 'profile' }, 'invalid_scope'],
    ['prompt none with login', { prompt: 'none login' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'everything' }, 'invalid_request'],
    ['a negative max_age', { max_age: '-1' }, 'invalid_request'],
    ['a repeated state', { state: ['a', 'b'] }, 'invalid_request'],
    ['a request object', { request: 'eyJ...' }, 'request_not_supported'],
    ['a relative resource', { resource: '/api' }, 'invalid_target'],
    ['a resource with a fragment', { resource: 'https://api.example/#x' }, 'invalid_target'],
  ])('refuses %s', (_name, change, error) => {
    expect(errorOf({ ...good, ...change })).toBe(error);
  });

  it('drops offline_access for a client that may not refresh', () => {
    expect(parseAuthorizationRequest({ ...good, scope: 'openid offline_access' }, client, 'https://app.example/cb').scopes).toEqual(['openid']);
  });

  it('puts error, state and iss on the redirect_uri, keeping its own query', () => {
    const url = new URL(authorizationResponseUrl('https://app.example/cb?x=1', 'https://id.example/oidc/m', 's&t', { error: 'access_denied' }));
    expect(Object.fromEntries(url.searchParams)).toEqual({ x: '1', error: 'access_denied', state: 's&t', iss: 'https://id.example/oidc/m' });
  });
});

describe('PKCE S256', () => {
  it("is the verifier's challenge for a verifier of RFC 7636's form only", () => {
    expect(s256Challenge(verifier)).toBe(challenge);
    expect(s256Challenge('w'.repeat(43))).not.toBe(challenge);
    expect(s256Challenge(undefined)).toBeUndefined();
    expect(s256Challenge('short')).toBeUndefined();
    expect(s256Challenge('a'.repeat(129))).toBeUndefined();
  });
});

describe('pages', () => {
  it('escapes every value', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    const html = loginPage({ stylesheet: '/s.css', action: '/a?x="1"', clientName: '<img src=x onerror=alert(1)>', username: '"><script>' });
    expect(html).not.toMatch(/<img|<script|\sstyle=/);
    expect(html).toContain('action="/a?x=&quot;1&quot;"');
  });
});
