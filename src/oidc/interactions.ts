import { Injectable } from '@nestjs/common';
import { DomainError, RetryLaterError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import type { OidcInteractionRow, UserRecord } from '../database/schema';
import { CodeFactor } from '../second-factors/code-factor';
import { type PasswordPassed, PasswordSignIn } from '../tokens/password-sign-in';
import { UserRepository } from '../users/user.repository';
import { AuthorizationCodes, type CodeGrant } from './authorization-codes';
import { authorizationResponseUrl } from './authorization-request';
import { Consents } from './consents';
import { FrontChannel } from './front-channel';
import { InteractionRepository } from './interaction.repository';
import { Issuers } from './issuer';
import { type OidcClient, OidcClients } from './oidc-clients';
import type { PageCookie, PageResult } from './page-result';
import { consentPage, loginPage, secondFactorPage } from './pages';
import { matchesDigest } from './secrets';
import { SsoSessions } from './sso-sessions';
import { spaceDelimited } from './request-parameters';

/** Who is on the page: the browser's addresses, for the sign-in defenses and the session record. */
export interface PageVisitor {
  clientAddress: string;
  userAgent?: string;
}

/** An interaction the request's cookie proved it owns, with its client. */
interface OwnedInteraction {
  row: OidcInteractionRow;
  client: OidcClient;
}

const PASSWORD_AMR = ['pwd'];
const CODE_AMR = ['pwd', 'otp', 'mfa'];
const MAX_FIELD_LENGTH = 1024;

const field = (form: Readonly<Record<string, unknown>>, name: string): string | undefined => {
  const value = form[name];
  return typeof value === 'string' && value.length <= MAX_FIELD_LENGTH ? value : undefined;
};

/**
 * The interaction pages' steps (docs/oidc.md, "Authorization"): login, second factor, consent.
 * Each needs the interaction's cookie (its secret's digest is on the row): a post without it, from
 * another browser or another site (SameSite=Lax keeps the cookie off cross-site posts), signs no
 * one in. A wrong password or code shows the form again (400), never a redirect to the client.
 */
@Injectable()
export class Interactions {
  constructor(
    private readonly interactions: InteractionRepository,
    private readonly clients: OidcClients,
    private readonly passwords: PasswordSignIn,
    private readonly codeFactor: CodeFactor,
    private readonly users: UserRepository,
    private readonly ssoSessions: SsoSessions,
    private readonly consents: Consents,
    private readonly codes: AuthorizationCodes,
    private readonly issuers: Issuers,
    private readonly frontChannel: FrontChannel,
  ) {}

  /** The page of the interaction's current step. */
  async show(membershipId: string, interactionId: string, cookie: string | undefined): Promise<PageResult> {
    const owned = await this.own(membershipId, interactionId, cookie);
    if (!('row' in owned)) return owned;
    return this.stagePage(membershipId, owned, 200);
  }

  async login(membershipId: string, interactionId: string, cookie: string | undefined, form: Readonly<Record<string, unknown>>, visitor: PageVisitor): Promise<PageResult> {
    const owned = await this.own(membershipId, interactionId, cookie, 'login');
    if (!('row' in owned)) return owned;
    const username = field(form, 'username');
    let passed: PasswordPassed;
    try {
      passed = await this.passwords.authenticate(membershipId, username, field(form, 'password'), {
        clientAddress: visitor.clientAddress,
        userAgent: visitor.userAgent,
      });
    } catch (error) {
      if (error instanceof RetryLaterError) return this.locked(membershipId, error);
      if (error instanceof DomainError && ['InvalidCredentials', 'ModelValidationError', 'UserInactive'].includes(error.code)) {
        const message = error.code === 'UserInactive' ? 'This account cannot sign in.' : 'The username or password is not correct.';
        return this.stagePage(membershipId, owned, 400, { error: message, username });
      }
      throw error;
    }
    const { user, attempt } = passed;
    if (owned.row.hintedUserId !== null && owned.row.hintedUserId !== user.id) {
      // The password was right: the guessing is over, but this request was for another user.
      await this.passwords.signInCompleted(attempt);
      return this.endWithError(membershipId, owned.row, 'login_required', 'Another user signed in than the one id_token_hint names');
    }
    // Unless the page signs in now, the login's attempt stays counted: a second factor is still due.
    const need = await this.codeFactor.need(membershipId, user.id);
    if (need !== 'none') await this.passwords.signInContinues(attempt);
    if (need === 'codes') {
      if (!(await this.interactions.advance(membershipId, owned.row.id, 'login', { stage: 'second_factor', userId: user.id, amr: PASSWORD_AMR }))) {
        return this.gone(membershipId);
      }
      return { kind: 'redirect', location: this.frontChannel.interactionUrl(membershipId, owned.row.id) };
    }
    if (need === 'passkey_only') {
      return this.frontChannel.message(membershipId, 403, 'A passkey is needed', 'Your account signs in with a passkey, which this page does not offer. Add an authenticator app (TOTP) to your account to sign in here.');
    }
    if (need === 'enrollment') {
      return this.frontChannel.message(membershipId, 403, 'A second factor is required', 'Your organisation requires a second factor. Set up an authenticator app (TOTP) for your account first, then sign in again.');
    }
    await this.passwords.signInCompleted(attempt);
    return this.signedIn(membershipId, owned, user, PASSWORD_AMR, 'login', visitor, passed.passwordHash);
  }

  async secondFactor(membershipId: string, interactionId: string, cookie: string | undefined, form: Readonly<Record<string, unknown>>, visitor: PageVisitor): Promise<PageResult> {
    const owned = await this.own(membershipId, interactionId, cookie, 'second_factor');
    if (!('row' in owned)) return owned;
    const user = owned.row.userId ? await this.users.findById(membershipId, owned.row.userId) : undefined;
    if (!user?.isActive) return this.gone(membershipId);
    let passed: boolean;
    try {
      passed = await this.codeFactor.verify({ membershipId, login: { userId: user.id }, address: visitor.clientAddress }, field(form, 'code') ?? '');
    } catch (error) {
      if (error instanceof RetryLaterError) return this.locked(membershipId, error);
      throw error;
    }
    if (!passed) return this.stagePage(membershipId, owned, 400, { error: 'The code is not correct.' });
    return this.signedIn(membershipId, owned, user, CODE_AMR, 'second_factor', visitor);
  }

  async consent(membershipId: string, interactionId: string, cookie: string | undefined, form: Readonly<Record<string, unknown>>): Promise<PageResult> {
    const owned = await this.own(membershipId, interactionId, cookie, 'consent');
    if (!('row' in owned)) return owned;
    const { row } = owned;
    const decision = field(form, 'decision');
    if (decision !== 'allow' && decision !== 'deny') return this.stagePage(membershipId, owned, 400);
    if (!row.userId || !row.sessionId || !row.authTime) return this.gone(membershipId);
    // Single use: of two posts of one consent form, one goes on.
    if (!(await this.interactions.delete(membershipId, row.id))) return this.gone(membershipId);
    if (decision === 'deny') return this.errorAnswer(membershipId, row, 'access_denied', 'The user denied access');
    await this.consents.grant(membershipId, row.userId, row.clientId, row.scopes);
    return this.answerWithCode(membershipId, owned, { userId: row.userId, sessionId: row.sessionId, authTime: row.authTime, amr: row.amr }, []);
  }

  /**
   * The code's redirect to the client, the interaction (already ended) and its cookie cleared; an
   * error answer instead when the consent the code needs was withdrawn since it was given or checked.
   */
  private async answerWithCode(
    membershipId: string,
    { row, client }: OwnedInteraction,
    signIn: Pick<CodeGrant, 'userId' | 'sessionId' | 'authTime' | 'amr'>,
    cookies: PageCookie[],
  ): Promise<PageResult> {
    const grant: CodeGrant = {
      ...signIn,
      clientId: row.clientId,
      redirectUri: row.redirectUri,
      codeChallenge: row.codeChallenge,
      scopes: row.scopes,
      nonce: row.nonce,
      resource: row.resource,
      state: row.state,
      consentRequired: client.oidc.require_consent,
    };
    const redirect = await this.codes.redirectWithCode(membershipId, grant, [...cookies, this.frontChannel.interactionCookie(membershipId, row.id, null)]);
    if (redirect) return redirect;
    const refused = this.errorAnswer(membershipId, row, 'access_denied', 'The user withdrew consent');
    return { ...refused, cookies: [...cookies, ...(refused.cookies ?? [])] };
  }

  /** Ends the interaction (single use: of two posts, one goes on) with an error answer to the client. */
  private async endWithError(membershipId: string, row: OidcInteractionRow, error: string, description: string): Promise<PageResult> {
    if (!(await this.interactions.delete(membershipId, row.id))) return this.gone(membershipId);
    return this.errorAnswer(membershipId, row, error, description);
  }

  /** The authorization error answer to the client's redirect_uri, the interaction cookie cleared. */
  private errorAnswer(membershipId: string, row: OidcInteractionRow, error: string, description: string): PageResult {
    const location = authorizationResponseUrl(row.redirectUri, this.issuers.of(membershipId), row.state ?? undefined, { error, error_description: description });
    return { kind: 'redirect', location, cookies: [this.frontChannel.interactionCookie(membershipId, row.id, null)] };
  }

  /**
   * The user proved who they are: a single sign-on session and its cookie, then consent (a page)
   * or the code (a redirect to the client).
   */
  private async signedIn(
    membershipId: string,
    owned: OwnedInteraction,
    user: UserRecord,
    amr: string[],
    from: OidcInteractionRow['stage'],
    visitor: PageVisitor,
    checkedPasswordHash?: string,
  ): Promise<PageResult> {
    const { row, client } = owned;
    const opened = await this.ssoSessions.open(membershipId, user, { amr, clientId: client.id, checkedPasswordHash }, { userAgent: visitor.userAgent });
    // The user was deleted, frozen or given a new password while this step checked it: the answer
    // of a moment later (the form again; a second factor's sign-in was ended by the change).
    if (!opened) return from === 'login' ? this.stagePage(membershipId, owned, 400, { error: 'The username or password is not correct.' }) : this.gone(membershipId);
    const ssoCookie = this.frontChannel.ssoCookie(membershipId, opened.cookie, opened.maxAgeSeconds);
    const signIn = { userId: user.id, sessionId: opened.session.sessionId, authTime: opened.session.authTime, amr };
    const forced = spaceDelimited(row.prompt).includes('consent');
    if (await this.consents.needed(membershipId, user.id, client, row.scopes, forced)) {
      if (!(await this.interactions.advance(membershipId, row.id, from, { stage: 'consent', ...signIn }))) return this.gone(membershipId);
      return { kind: 'redirect', location: this.frontChannel.interactionUrl(membershipId, row.id), cookies: [ssoCookie] };
    }
    if (!(await this.interactions.delete(membershipId, row.id))) return this.gone(membershipId);
    return this.answerWithCode(membershipId, owned, signIn, [ssoCookie]);
  }

  /**
   * The interaction, if the request holds its cookie and it is at `stage` (when given). Otherwise a
   * page: 400 for no or a wrong cookie, 404 for an unknown or expired interaction, 409 for a step already done.
   */
  private async own(membershipId: string, interactionId: string, cookie: string | undefined, stage?: OidcInteractionRow['stage']): Promise<OwnedInteraction | PageResult> {
    const row = isPossibleId(interactionId) ? await this.interactions.findLive(membershipId, interactionId) : undefined;
    if (!row) return this.gone(membershipId);
    if (!cookie || !matchesDigest(cookie, row.cookieDigest)) {
      return this.frontChannel.message(membershipId, 400, 'This sign-in cannot go on here', 'This page belongs to a sign-in started in another browser, or its cookie is missing. Go back to the application and start again.');
    }
    if (stage && row.stage !== stage) return this.frontChannel.message(membershipId, 409, 'This step is done', 'Go back to the application and start again.');
    const client = await this.clients.find(membershipId, row.clientId);
    if (!client) return this.gone(membershipId);
    return { row, client };
  }

  private async stagePage(membershipId: string, owned: OwnedInteraction, status: number, view: { error?: string; username?: string } = {}): Promise<PageResult> {
    const { row, client } = owned;
    const stylesheet = this.frontChannel.stylesheet(membershipId);
    const common = { stylesheet, clientName: client.name, error: view.error };
    // Each step's form may end at the client (its 303 to redirect_uri): that origin, and no other.
    const formTargets = [new URL(row.redirectUri).origin];
    if (row.stage === 'login') {
      const html = loginPage({ ...common, action: this.frontChannel.interactionUrl(membershipId, row.id, 'login'), username: view.username });
      return { kind: 'page', status, html, formTargets };
    }
    if (row.stage === 'second_factor') {
      return { kind: 'page', status, html: secondFactorPage({ ...common, action: this.frontChannel.interactionUrl(membershipId, row.id, 'second-factor') }), formTargets };
    }
    return this.consentView(membershipId, owned, status, formTargets);
  }

  private async consentView(membershipId: string, owned: OwnedInteraction, status: number, formTargets: string[]): Promise<PageResult> {
    // The username is shown so that a user on a shared computer sees whose consent this is.
    const user = owned.row.userId ? await this.users.findById(membershipId, owned.row.userId) : undefined;
    if (!user) return this.gone(membershipId);
    const username = user.username;
    return {
      kind: 'page',
      status,
      html: consentPage({
        stylesheet: this.frontChannel.stylesheet(membershipId),
        action: this.frontChannel.interactionUrl(membershipId, owned.row.id, 'consent'),
        clientName: owned.client.name,
        username,
        scopes: owned.row.scopes,
      }),
      formTargets,
    };
  }

  private locked(membershipId: string, error: RetryLaterError): PageResult {
    return this.frontChannel.message(membershipId, 429, 'Too many attempts', 'Too many failed sign-in attempts. Try again later.', {
      retryAfterSeconds: error.retryAfterSeconds,
    });
  }

  private gone(membershipId: string, cookies?: PageCookie[]): PageResult {
    return this.frontChannel.message(membershipId, 404, 'This sign-in has ended', 'It expired or was finished. Go back to the application and start again.', { cookies });
  }
}
