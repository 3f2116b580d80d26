import * as http from 'node:http';
import * as https from 'node:https';

/** One Server-Sent Event (the fields the service sends). */
export interface ServerSentEvent {
  /** `id:` — the stream's cursor after this event. */
  id: string | undefined;
  /** `event:`; `message` when absent. */
  event: string;
  data: string;
}

/** A line longer than this is not the service's: the stream is dropped (bounded memory). */
export const MAX_SSE_LINE = 1024 * 1024;

/**
 * The text/event-stream format (WHATWG HTML, "Server-sent events"), as much of it as the service
 * uses: `id`, `event`, `data` (joined by newlines), `retry`, comments. Fed text chunks in order;
 * calls `onEvent` for each complete event. Written here rather than taken from npm: the package
 * has no runtime dependency, and this is forty lines.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  /** The last `retry:` value, in milliseconds. */
  retryMs: number | undefined;

  constructor(private readonly onEvent: (event: ServerSentEvent) => void) {}

  /** Throws when a line outgrows MAX_SSE_LINE. */
  push(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (;;) {
      const end = this.buffer.indexOf('\n', start);
      if (end < 0) break;
      const line = this.buffer.slice(start, end);
      start = end + 1;
      this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length > MAX_SSE_LINE) throw new Error(`event stream line longer than ${MAX_SSE_LINE} characters`);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }

  private dispatch(): void {
    if (this.data.length) this.onEvent({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.event = '';
  }
}

export interface StreamFollowerOptions {
  /** The stream's URL (with `?types=`). */
  url: URL;
  /** `Basic <id>:<secret>`. */
  authorization: string;
  /** Deadline to connect and receive the answer's headers, ms. */
  connectTimeoutMs: number;
  onEvent(event: ServerSentEvent): void;
  /** The stream answered 200: events from now on arrive. */
  onConnected(): void;
  /** The stream is gone (or never came): `detail` says why. It is reconnected by itself. */
  onDisconnected(detail: string): void;
}

/** Waits before reconnecting: after a drop, and (longer) after the service refused the credentials. */
const RECONNECT_MS = 500;
const REFUSED_RECONNECT_MS = 5_000;
/**
 * The stream is asked for a keep-alive comment this often (`?keep_alive=`, in seconds; the
 * service's default is 15 s), so that silence means a lost connection within a few seconds.
 */
const KEEP_ALIVE_SECONDS = 1;
/**
 * No byte for this long (two keep-alives missed): the connection is taken as dead and the cache
 * stops serving. A connection cut silently (a partition: no FIN, no RST) is noticed this soon at
 * the latest; an idle one is never mistaken for it unless a keep-alive comes over a second late.
 */
const SILENCE_MS = 2 * KEEP_ALIVE_SECONDS * 1000;

/**
 * Follows the service's event stream over one long GET, and reconnects after any loss with
 * `Last-Event-ID`, so that the events committed meanwhile arrive then, none skipped.
 */
export class StreamFollower {
  private request: http.ClientRequest | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastEventId: string | undefined;
  private stopped = false;
  connected = false;

  private readonly url: URL;

  constructor(private readonly options: StreamFollowerOptions) {
    this.url = new URL(options.url);
    this.url.searchParams.set('keep_alive', String(KEEP_ALIVE_SECONDS));
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Ends the stream for good. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.request?.destroy();
    this.request = undefined;
    this.lost('stopped');
  }

  private connect(): void {
    if (this.stopped) return;
    const { url } = this;
    const { authorization } = this.options;
    const headers: Record<string, string> = { authorization, accept: 'text/event-stream', 'user-agent': 'portcullis-client' };
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    const secure = url.protocol === 'https:';
    // No agent: the stream holds its connection for itself.
    const request = (secure ? https : http).request(url, { method: 'GET', headers, agent: false });
    this.request = request;
    let settled = false;
    const fail = (detail: string, retryMs = RECONNECT_MS): void => {
      if (settled) return;
      settled = true;
      clearTimeout(this.timer);
      request.destroy();
      if (this.request === request) this.request = undefined;
      this.lost(detail);
      if (!this.stopped) {
        this.timer = setTimeout(() => this.connect(), retryMs);
        this.timer.unref();
      }
    };
    const silence = (): void => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => fail('no byte from the event stream for too long'), this.connected ? SILENCE_MS : this.options.connectTimeoutMs);
      this.timer.unref();
    };
    silence();
    request.on('socket', (socket) => socket.unref());
    request.on('error', (error) => fail(`event stream: ${error.message}`));
    request.on('response', (response) => {
      const type = response.headers['content-type'] ?? '';
      if (response.statusCode !== 200 || !type.startsWith('text/event-stream')) {
        response.resume();
        const refused = response.statusCode === 401 || response.statusCode === 403;
        return fail(`event stream answered ${response.statusCode ?? 0}`, refused ? REFUSED_RECONNECT_MS : RECONNECT_MS);
      }
      const parser = new SseParser((event) => {
        if (event.id !== undefined) this.lastEventId = event.id;
        this.options.onEvent(event);
      });
      response.setEncoding('utf8');
      this.connected = true;
      this.options.onConnected();
      silence();
      response.on('data', (chunk: string) => {
        silence();
        try {
          parser.push(chunk);
        } catch (error) {
          fail(error instanceof Error ? error.message : String(error));
        }
      });
      response.on('end', () => fail('event stream ended'));
      response.on('close', () => fail('event stream closed'));
      response.on('error', (error) => fail(`event stream: ${error.message}`));
    });
    request.end();
  }

  private lost(detail: string): void {
    const was = this.connected;
    this.connected = false;
    if (was || detail !== 'stopped') this.options.onDisconnected(detail);
  }
}
