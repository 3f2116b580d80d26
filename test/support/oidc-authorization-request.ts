import * as client from 'openid-client';

/**
 * An authorization request as a certified relying party builds it (openid-client): PKCE S256,
 * state and nonce, for the test to follow and then redeem with the same verifier, state and nonce.
 */
export async function authorizationRequest(
  config: client.Configuration,
  redirectUri: string,
  scope = 'openid profile email offline_access',
  extra: Record<string, string> = {},
): Promise<{ url: URL; verifier: string; state: string; nonce: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}
