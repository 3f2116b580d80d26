/**
 * The OpenID Provider's server-rendered pages (contract "Single sign-on": no inline script,
 * `frame-ancestors 'none'`, every value escaped). Every value that reaches HTML goes through
 * `escapeHtml`, client names and error texts included; the only style is the stylesheet route.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/**
 * The pages' Content-Security-Policy. `form-action` governs a form's whole navigation, redirects
 * included (CSP 3), so a step whose 303 goes on to the client's redirect_uri needs that one origin
 * beside 'self': browsers block the landing otherwise. Nothing else is ever allowed.
 */
export function contentSecurityPolicy(formTargets: readonly string[] = []): string {
  const targets = formTargets.map((origin) => ` ${origin}`).join('');
  return `default-src 'none'; style-src 'self'; form-action 'self'${targets}; frame-ancestors 'none'`;
}

/** The headers of every page: nothing runs, nothing frames it, nothing leaks the URL, nothing caches it. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': contentSecurityPolicy(),
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

/** The pages' one stylesheet (served by the issuer, so `style-src 'self'` allows it). */
export const PAGES_STYLESHEET = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:24rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}button{margin-top:1rem;padding:.5rem 1.2rem;font-size:1rem}
.error{color:#a40000}.scopes li{margin:.2rem 0}.actions button{margin-right:.5rem}`;

/** What a page is made of; `stylesheet` is the issuer's stylesheet URL. */
interface PageParts {
  title: string;
  stylesheet: string;
  body: string;
}

function page(parts: PageParts): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(parts.title)}</title><link rel="stylesheet" href="${escapeHtml(parts.stylesheet)}"></head>
<body><main>${parts.body}</main></body></html>`;
}

const errorLine = (message: string | undefined): string => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');

export function loginPage(view: { stylesheet: string; action: string; clientName: string; username?: string; error?: string }): string {
  return page({
    title: 'Sign in',
    stylesheet: view.stylesheet,
    body: `<h1>Sign in</h1><p>to continue to <strong>${escapeHtml(view.clientName)}</strong></p>${errorLine(view.error)}
<form method="post" action="${escapeHtml(view.action)}">
<label for="username">Username or e-mail address</label><input id="username" name="username" autocomplete="username" required value="${escapeHtml(view.username ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  });
}

export function secondFactorPage(view: { stylesheet: string; action: string; clientName: string; error?: string }): string {
  return page({
    title: 'Second factor',
    stylesheet: view.stylesheet,
    body: `<h1>Second factor</h1><p>Enter the code of your authenticator app, or one of your recovery codes, to continue to <strong>${escapeHtml(view.clientName)}</strong>.</p>${errorLine(view.error)}
<form method="post" action="${escapeHtml(view.action)}">
<label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" required>
<button type="submit">Continue</button></form>`,
  });
}

/** What each scope lets the application see, in the user's words. */
const SCOPE_TEXT: Readonly<Record<string, string>> = {
  openid: 'Know who you are',
  profile: 'Your name and username',
  email: 'Your e-mail address',
  offline_access: 'Stay signed in when you are not using it',
};

export function consentPage(view: { stylesheet: string; action: string; clientName: string; username: string; scopes: readonly string[] }): string {
  const items = view.scopes.map((scope) => `<li>${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`).join('');
  return page({
    title: 'Allow access',
    stylesheet: view.stylesheet,
    body: `<h1>Allow access</h1><p><strong>${escapeHtml(view.clientName)}</strong> asks to:</p><ul class="scopes">${items}</ul>
<p>Signed in as ${escapeHtml(view.username)}.</p>
<form method="post" action="${escapeHtml(view.action)}" class="actions">
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></form>`,
  });
}

/** A page with a message and nowhere to go (errors, signed out, enrollment needed). */
export function messagePage(view: { stylesheet: string; title: string; message: string }): string {
  return page({ title: view.title, stylesheet: view.stylesheet, body: `<h1>${escapeHtml(view.title)}</h1><p>${escapeHtml(view.message)}</p>` });
}
