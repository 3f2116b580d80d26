/**
 * A browser without a browser, for the OpenID Provider's pages: a cookie jar (name, value, path;
 * the pages' cookies are HttpOnly, SameSite=Lax and host-only on 127.0.0.1), manual redirects, and
 * forms submitted by their `action` exactly as the page wrote it.
 */
export interface PageAnswer {
  status: number;
  location?: string;
  html: string;
  headers: Headers;
}

interface StoredCookie {
  value: string;
  path: string;
}

const unescapeHtml = (value: string): string =>
  value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export class PageBrowser {
  /** Cookies by name and path. */
  readonly cookies = new Map<string, StoredCookie>();

  private cookieHeader(url: URL): string | undefined {
    const sent = [...this.cookies.entries()]
      .filter(([, cookie]) => url.pathname === cookie.path || url.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`))
      .map(([key, cookie]) => `${key.split('\n')[0]}=${cookie.value}`);
    return sent.length ? sent.join('; ') : undefined;
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator);
      const value = pair.slice(separator + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const expired = attributes.some((a) => /^expires=thu, 01 jan 1970/i.test(a) || /^max-age=0$/i.test(a)) || value === '';
      const key = `${name}\n${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  /** The cookie `name` as stored for `path`, if any. */
  cookie(name: string, path: string): string | undefined {
    return this.cookies.get(`${name}\n${path}`)?.value;
  }

  async request(url: string, init: { method?: string; form?: Record<string, string>; withCookies?: boolean } = {}): Promise<PageAnswer> {
    const target = new URL(url);
    const headers: Record<string, string> = {};
    const cookie = init.withCookies === false ? undefined : this.cookieHeader(target);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    this.remember(response.headers);
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, location: location ? new URL(location, target).toString() : undefined, html: await response.text(), headers: response.headers };
  }

  /** GETs `url` and follows redirects while they stay on `origin` (the provider); answers the last answer. */
  async follow(url: string, origin: string): Promise<PageAnswer> {
    let answer = await this.request(url);
    for (let hops = 0; answer.location && answer.location.startsWith(origin) && hops < 10; hops++) {
      answer = await this.request(answer.location);
    }
    return answer;
  }

  /** Posts the page's only (or first) form to its `action` with `fields`; follows on-provider redirects. */
  async submit(page: PageAnswer, fields: Record<string, string>, origin: string, options: { withCookies?: boolean } = {}): Promise<PageAnswer> {
    const action = formAction(page.html);
    let answer = await this.request(action, { form: fields, withCookies: options.withCookies });
    for (let hops = 0; answer.location && answer.location.startsWith(origin) && hops < 10; hops++) {
      answer = await this.request(answer.location);
    }
    return answer;
  }
}

/** The `action` of the page's first form, unescaped as a browser reads it. */
export function formAction(html: string): string {
  const match = /<form[^>]*\saction="([^"]*)"/.exec(html);
  if (!match) throw new Error(`the page has no form: ${html.slice(0, 400)}`);
  return unescapeHtml(match[1]);
}

/** The names of the page's input fields and buttons. */
export function fieldNames(html: string): string[] {
  return [...html.matchAll(/<(?:input|button)[^>]*\sname="([^"]*)"/g)].map((m) => m[1]);
}
