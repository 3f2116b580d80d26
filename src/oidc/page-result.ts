import type { Response } from 'express';
import { contentSecurityPolicy, PAGE_HEADERS } from './pages';

/** A cookie the front channel sets (value) or clears (null). */
export interface PageCookie {
  name: string;
  value: string | null;
  path: string;
  maxAgeSeconds?: number;
  secure: boolean;
}

/** What a front-channel step answers: a page, or a redirect (303: a POST's answer must become a GET). */
export type PageResult =
  | {
      kind: 'page';
      status: number;
      html: string;
      cookies?: PageCookie[];
      retryAfterSeconds?: number;
      /** Origins the page's form may end up at through redirects (the client's redirect_uri). */
      formTargets?: string[];
    }
  | { kind: 'redirect'; location: string; cookies?: PageCookie[] };

/** Writes a step's answer: its cookies (HttpOnly, SameSite=Lax), then the page or the 303, never cached. */
export function sendPageResult(response: Response, result: PageResult): void {
  for (const cookie of result.cookies ?? []) {
    const options = { httpOnly: true, sameSite: 'lax' as const, secure: cookie.secure, path: cookie.path };
    if (cookie.value === null) response.clearCookie(cookie.name, options);
    else response.cookie(cookie.name, cookie.value, { ...options, ...(cookie.maxAgeSeconds !== undefined ? { maxAge: cookie.maxAgeSeconds * 1000 } : {}) });
  }
  if (result.kind === 'redirect') {
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.redirect(303, result.location);
    return;
  }
  for (const [name, value] of Object.entries(PAGE_HEADERS)) response.setHeader(name, value);
  if (result.formTargets?.length) response.setHeader('Content-Security-Policy', contentSecurityPolicy(result.formTargets));
  if (result.retryAfterSeconds !== undefined) response.setHeader('Retry-After', String(result.retryAfterSeconds));
  response.status(result.status).send(result.html);
}

/** The value of one cookie of the request's Cookie header (no cookie-parser: only the front channel reads cookies). */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() === name) {
      const value = part.slice(separator + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
