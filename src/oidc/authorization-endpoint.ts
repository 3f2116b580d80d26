import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { CodeFactor } from '../second-factors/code-factor';
import { AuthorizationCodes } from './authorization-codes';
import {
  AuthorizationError,
  type AuthorizationRequest,
  authorizationResponseUrl,
  echoableState,
  isRegisteredRedirect,
  parseAuthorizationRequest,
  trustedRedirect,
  UntrustedAuthorizationRequest,
} from './authorization-request';
import { Consents } from './consents';
import { FrontChannel, INTERACTION_SECONDS } from './front-channel';
import { IdTokenHints, INVALID_HINT } from './id-token-hint';
import { InteractionRepository } from './interaction.repository';
import { Issuers } from './issuer';
import { OidcClients } from './oidc-clients';
import type { PageResult } from './page-result';
import { newOpaqueSecret, digestOf } from './secrets';
import { type SsoSession, SsoSessions } from './sso-sessions';

/**
 * `GET <issuer>/authorize` (contract "Single sign-on", docs/oidc.md "Authorization"): client and
 * redirect_uri first (a 400 page, never a redirect), then the request (errors redirected with
 * `state` and `iss`), then either a code at once (a live single sign-on session and consent) or
 * an interaction: a row, its cookie, and the page of its first step.
 */
@Injectable()
export class AuthorizationEndpoint {
  constructor(
    private readonly clients: OidcClients,
    private readonly issuers: Issuers,
    private readonly ssoSessions: SsoSessions,
    private readonly consents: Consents,
    private readonly codeFactor: CodeFactor,
    private readonly interactions: InteractionRepository,
    private readonly codes: AuthorizationCodes,
    private readonly frontChannel: FrontChannel,
    private readonly hints: IdTokenHints,
  ) {}

  async authorize(membershipId: string, query: Readonly<Record<string, unknown>>, ssoCookie: string | undefined): Promise<PageResult> {
    const refused = (message: string) => this.frontChannel.message(membershipId, 400, 'This sign-in request cannot be used', message);
    let trusted: { clientId: string; redirectUri: string };
    try {
      trusted = trustedRedirect(query);
    } catch (error) {
      if (error instanceof UntrustedAuthorizationRequest) return refused(error.message);
      throw error;
    }
    const client = await this.clients.find(membershipId, trusted.clientId);
    if (!client) return refused('The application is unknown or not active here.');
    if (!isRegisteredRedirect(client, trusted.redirectUri)) return refused('The redirect_uri is not one the application registered.');

    let request: AuthorizationRequest;
    try {
      request = parseAuthorizationRequest(query, client, trusted.redirectUri);
    } catch (error) {
      if (error instanceof AuthorizationError) return this.errorRedirect(membershipId, trusted.redirectUri, echoableState(query), error);
      throw error;
    }

    // OpenID Connect Core 3.1.2.1: the hint must be an ID token of this issuer, and a session of
    // another user than the one it names does not answer the request (prompt=none: login_required).
    const hint = await this.hints.read(membershipId, request.idTokenHint);
    if (hint === INVALID_HINT) {
      return this.errorRedirect(membershipId, request.redirectUri, request.state, new AuthorizationError('invalid_request', 'id_token_hint is not an ID token of this issuer'));
    }
    const sso = await this.ssoSessions.find(membershipId, ssoCookie);
    if (!sso || (hint !== undefined && hint.sub !== sso.user.id) || !(await this.signInStillGood(membershipId, request, sso))) {
      if (request.prompts.includes('none')) return this.errorRedirect(membershipId, request.redirectUri, request.state, new AuthorizationError('login_required', 'The user must sign in'));
      return this.startInteraction(membershipId, request, undefined, hint?.sub);
    }
    if (await this.consents.needed(membershipId, sso.user.id, client, request.scopes, request.prompts.includes('consent'))) {
      if (request.prompts.includes('none')) return this.errorRedirect(membershipId, request.redirectUri, request.state, new AuthorizationError('consent_required', 'The user must consent'));
      return this.startInteraction(membershipId, request, sso);
    }
    const grant = { ...request, clientId: client.id, userId: sso.user.id, sessionId: sso.sessionId, authTime: sso.authTime, amr: sso.amr };
    const redirect = await this.codes.redirectWithCode(membershipId, { ...grant, consentRequired: client.oidc.require_consent });
    if (redirect) return redirect;
    // The consent was withdrawn since it was checked: asked for again, as if it had been missing.
    if (request.prompts.includes('none')) return this.errorRedirect(membershipId, request.redirectUri, request.state, new AuthorizationError('consent_required', 'The user must consent'));
    return this.startInteraction(membershipId, request, sso);
  }

  /**
   * Whether the session's sign-in may serve this request: not `prompt=login`, within `max_age`,
   * and with the second factor its user needs now (one enabled after the sign-in asks for it).
   */
  private async signInStillGood(membershipId: string, request: AuthorizationRequest, sso: SsoSession): Promise<boolean> {
    if (request.prompts.includes('login')) return false;
    if (request.maxAge !== undefined && Date.now() - sso.authTime.getTime() > request.maxAge * 1000) return false;
    if (sso.amr?.includes('mfa')) return true;
    return (await this.codeFactor.need(membershipId, sso.user.id)) === 'none';
  }

  /**
   * An interaction row and its cookie, then its first page: login, or consent for a signed-in user.
   * `hintedUserId`: the user a verified id_token_hint names, the only one the login page may sign in.
   */
  private async startInteraction(membershipId: string, request: AuthorizationRequest, sso: SsoSession | undefined, hintedUserId?: string): Promise<PageResult> {
    const id = randomUUID();
    const secret = newOpaqueSecret();
    await this.interactions.insert({
      id,
      membershipId,
      cookieDigest: digestOf(secret),
      clientId: request.client.id,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      state: request.state ?? null,
      nonce: request.nonce ?? null,
      codeChallenge: request.codeChallenge,
      prompt: request.prompts.join(' ') || null,
      maxAge: request.maxAge ?? null,
      resource: request.resource ?? null,
      hintedUserId: hintedUserId ?? null,
      stage: sso ? 'consent' : 'login',
      userId: sso?.user.id ?? null,
      amr: sso?.amr ?? null,
      authTime: sso?.authTime ?? null,
      sessionId: sso?.sessionId ?? null,
      expiresAt: new Date(Date.now() + INTERACTION_SECONDS * 1000),
    });
    return {
      kind: 'redirect',
      location: this.frontChannel.interactionUrl(membershipId, id),
      cookies: [this.frontChannel.interactionCookie(membershipId, id, secret)],
    };
  }

  private errorRedirect(membershipId: string, redirectUri: string, state: string | undefined, error: AuthorizationError): PageResult {
    const parameters = { error: error.error, error_description: error.description };
    return { kind: 'redirect', location: authorizationResponseUrl(redirectUri, this.issuers.of(membershipId), state, parameters) };
  }
}
