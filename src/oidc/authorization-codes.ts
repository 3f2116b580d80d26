import { Injectable } from '@nestjs/common';
import { Issuers } from './issuer';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import type { PageCookie, PageResult } from './page-result';
import { authorizationResponseUrl } from './authorization-request';
import { digestOf, newOpaqueSecret } from './secrets';

/** An authorization code lives 60 s (contract). */
export const AUTHORIZATION_CODE_SECONDS = 60;

/** What a code stands for: who signed in, in which session, for which client, redirect and challenge. */
export interface CodeGrant {
  clientId: string;
  userId: string;
  sessionId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: readonly string[];
  nonce?: string | null;
  resource?: string | null;
  authTime: Date;
  amr: readonly string[] | null;
  state?: string | null;
  /** The client requires consent: the code is made only while the user's consent covers `scopes`. */
  consentRequired: boolean;
}

/** Makes authorization codes (only their digest is stored) and the redirect that carries one. */
@Injectable()
export class AuthorizationCodes {
  constructor(
    private readonly codes: AuthorizationCodeRepository,
    private readonly issuers: Issuers,
  ) {}

  /**
   * The redirect to the client with a new code; undefined when the client requires consent and the
   * user's no longer covers the scopes (withdrawn since it was checked): no code was made.
   */
  async redirectWithCode(membershipId: string, grant: CodeGrant, cookies: PageCookie[] = []): Promise<PageResult | undefined> {
    const code = newOpaqueSecret();
    const stored = await this.codes.insert({
      id: digestOf(code),
      membershipId,
      clientId: grant.clientId,
      userId: grant.userId,
      sessionId: grant.sessionId,
      redirectUri: grant.redirectUri,
      codeChallenge: grant.codeChallenge,
      scopes: [...grant.scopes],
      nonce: grant.nonce ?? null,
      resource: grant.resource ?? null,
      authTime: grant.authTime,
      amr: grant.amr ? [...grant.amr] : null,
      expiresAt: new Date(Date.now() + AUTHORIZATION_CODE_SECONDS * 1000),
    }, grant.consentRequired);
    if (!stored) return undefined;
    const location = authorizationResponseUrl(grant.redirectUri, this.issuers.of(membershipId), grant.state ?? undefined, { code });
    return { kind: 'redirect', location, cookies };
  }
}
