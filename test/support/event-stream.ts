import * as http from 'node:http';
import { type ServerSentEvent, SseParser } from '../../packages/client/src/event-stream';

export interface StreamAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The JSON error body of a refused stream. */
  body?: Record<string, unknown>;
  /** The open stream of a 200. */
  stream?: OpenEventStream;
}

/**
 * A test's view of GET .../events/stream over real HTTP: the events as they arrive (parsed with
 * the client library's own parser), the comments, and whether the server ended it.
 */
export class OpenEventStream {
  readonly events: ServerSentEvent[] = [];
  readonly comments: string[] = [];
  /** For each comment (same order as `comments`), how many events had arrived before it. */
  readonly commentPositions: number[] = [];
  ended = false;
  private partialLine = '';
  private readonly waiters = new Set<() => void>();

  constructor(private readonly response: http.IncomingMessage) {
    const parser = new SseParser((event) => {
      this.events.push(event);
      this.notify();
    });
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      // Line by line, so that each comment's place among the events is known.
      const lines = (this.partialLine + chunk).split('\n');
      this.partialLine = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith(':')) {
          this.comments.push(line);
          this.commentPositions.push(this.events.length);
        }
        parser.push(`${line}\n`);
      }
      this.notify();
    });
    const end = () => {
      this.ended = true;
      this.notify();
    };
    response.on('end', end);
    response.on('close', end);
    response.on('error', end);
  }

  /** Stops reading the connection (the server's writes back up once the socket buffers are full), and goes on. */
  pause(): void {
    this.response.pause();
  }

  resume(): void {
    this.response.resume();
  }

  /** The parsed `data` of each event so far. */
  get data(): Record<string, unknown>[] {
    return this.events.map((event) => JSON.parse(event.data) as Record<string, unknown>);
  }

  /** Resolves once `check` holds (checked on every event and at the end), or fails after `timeoutMs`. */
  async until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    if (check()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`timed out waiting for ${what}; ${this.events.length} events, ended: ${this.ended}`));
      }, timeoutMs);
      const waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      };
      this.waiters.add(waiter);
    });
  }

  close(): void {
    this.response.destroy();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** Opens a stream; a non-200 answer comes back with its JSON body. */
export function openEventStream(baseUrl: string, path: string, authorization: string, headers: Record<string, string> = {}): Promise<StreamAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get(new URL(path, baseUrl), { headers: { authorization, accept: 'text/event-stream', ...headers }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let body: Record<string, unknown> | undefined;
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        });
        return;
      }
      resolve({ status: 200, headers: response.headers, stream: new OpenEventStream(response) });
    });
    request.on('error', reject);
  });
}

export const streamPath = (membershipId: string, query = ''): string => `/memberships/${membershipId}/events/stream${query}`;
