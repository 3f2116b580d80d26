import { Injectable } from '@nestjs/common';
import { Issuers } from './issuer';
import type { PageCookie, PageResult } from './page-result';
import { messagePage } from './pages';

/** The interaction cookie: one per interaction (its Path is the interaction's), so two tabs never overwrite each other's. */
export const INTERACTION_COOKIE = 'portcullis_interaction';
/** The single sign-on cookie (Path: the issuer). */
export const SSO_COOKIE = 'portcullis_sso';
/** An interaction, and its cookie, live at most 600 s (contract). */
export const INTERACTION_SECONDS = 600;

/** The front channel's URLs, cookies and plain pages, all derived from the issuer (never from the request). */
@Injectable()
export class FrontChannel {
  constructor(private readonly issuers: Issuers) {}

  stylesheet(membershipId: string): string {
    return `${this.issuers.of(membershipId)}/pages.css`;
  }

  interactionUrl(membershipId: string, interactionId: string, step?: 'login' | 'second-factor' | 'consent'): string {
    return `${this.issuers.of(membershipId)}/interaction/${encodeURIComponent(interactionId)}${step ? `/${step}` : ''}`;
  }

  interactionCookie(membershipId: string, interactionId: string, value: string | null): PageCookie {
    return {
      name: INTERACTION_COOKIE,
      value,
      path: `${this.issuers.cookiePath(membershipId)}/interaction/${encodeURIComponent(interactionId)}`,
      maxAgeSeconds: INTERACTION_SECONDS,
      secure: this.issuers.secure,
    };
  }

  ssoCookie(membershipId: string, value: string | null, maxAgeSeconds?: number): PageCookie {
    return { name: SSO_COOKIE, value, path: this.issuers.cookiePath(membershipId), maxAgeSeconds, secure: this.issuers.secure };
  }

  message(membershipId: string, status: number, title: string, message: string, extra: { cookies?: PageCookie[]; retryAfterSeconds?: number } = {}): PageResult {
    return { kind: 'page', status, html: messagePage({ stylesheet: this.stylesheet(membershipId), title, message }), ...extra };
  }
}
