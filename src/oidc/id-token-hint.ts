import { Injectable } from '@nestjs/common';
import { decodeJwt } from 'jose';
import { Issuers } from './issuer';
import { SigningKeys, UnverifiableToken } from './signing-keys';

/** Who an `id_token_hint` names: the user (`sub`), the client it was issued to (`aud`) and the sign-in session (`sid`). */
export interface HintedIdToken {
  sub?: string;
  aud?: string;
  sid?: string;
}

/** An `id_token_hint` that was sent but is no ID token of this issuer: forged, altered (alg none), another issuer's, unreadable. */
export const INVALID_HINT = 'invalid';

/**
 * `id_token_hint` (OpenID Connect Core 3.1.2.1, RP-Initiated Logout 1.0 2): an ID token this
 * issuer signed. An expired one still names who and for whom (RP-Initiated Logout 1.0 2: the OP
 * SHOULD accept it), so only its signature, issuer and type are required. Both specifications
 * require the OP to check that it issued the hint: a hint that fails is INVALID_HINT, which the
 * callers refuse, and never the same as no hint at all.
 */
@Injectable()
export class IdTokenHints {
  constructor(
    private readonly keys: SigningKeys,
    private readonly issuers: Issuers,
  ) {}

  /** The hint's claims; undefined when none was sent; INVALID_HINT when it is not the issuer's ID token. */
  async read(membershipId: string, hint: unknown): Promise<HintedIdToken | typeof INVALID_HINT | undefined> {
    if (hint === undefined || hint === '') return undefined;
    if (typeof hint !== 'string') return INVALID_HINT;
    try {
      await this.keys.verify(membershipId, hint, { issuer: this.issuers.of(membershipId), typ: 'JWT' });
    } catch (error) {
      if (!(error instanceof UnverifiableToken)) throw error;
      if (!error.expired) return INVALID_HINT;
    }
    const claims = decodeJwt(hint);
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    return { sub: claims.sub, aud, sid: typeof claims.sid === 'string' ? claims.sid : undefined };
  }
}
