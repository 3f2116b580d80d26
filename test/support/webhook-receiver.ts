import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The environment an app needs to call receivers on loopback: the outbound policy refuses
 * 127.0.0.0/8 and ::1 unless OUTBOUND_ALLOW permits them, exactly as an operator would in development.
 */
export const ALLOW_LOOPBACK_RECEIVERS: Readonly<Record<string, string>> = { OUTBOUND_ALLOW: '127.0.0.1/32,::1/128' };

/** One request as the receiver got it: the raw body is kept for signature checks. */
export interface ReceivedRequest {
  method: string;
  /** Path and query as sent (`/hook?x=1`). */
  url: string;
  headers: IncomingHttpHeaders;
  /** Header names exactly as sent, in order (IncomingHttpHeaders lower-cases them). */
  rawHeaderNames: string[];
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON from the wire; tests read it freely
  json: any;
  receivedAt: number;
  /** `hanging` until the caller gives up on an unanswered request and closes it. */
  state: 'answered' | 'hanging' | 'closed by the caller';
}

/** What the receiver answers: a status code, or 'hang' (never answer; the socket stays open). */
export type Answer = number | 'hang';

export interface WaitOptions {
  timeoutMs?: number;
  /** Only requests whose path (before `?`) is this count. */
  path?: string;
}

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request and answers from a
 * programmable sequence of statuses (the last one repeats; default 200).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private answers: Answer[] = [200];
  private answerBody = 'ok';
  private answerHeaders: Record<string, string> = {};
  /** How long each answer is held back (a slow receiver). */
  private answerDelayMs = 0;
  private delayedAnswers = 0;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => receiver.handle(request, response));
    server.on('connection', (socket: Socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    return receiver;
  }

  /** `http://127.0.0.1:<port><path>` */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The answers to the next requests, in order; the last one repeats. */
  answer(...answers: Answer[]): this {
    this.answers = answers.length ? answers : [200];
    return this;
  }

  /** The body of every answer. */
  answerWith(body: string): this {
    this.answerBody = body;
    return this;
  }

  /** Holds every answer back this long: a slow receiver, with calls in flight. */
  answerAfter(ms: number): this {
    this.answerDelayMs = ms;
    return this;
  }

  /** Requests received whose answer is still held back (answerAfter). */
  get answersHeldBack(): number {
    return this.delayedAnswers;
  }

  /** Extra headers of every answer (e.g. a Location for a redirect). */
  answerWithHeaders(headers: Record<string, string>): this {
    this.answerHeaders = headers;
    return this;
  }

  /** Requests received so far (optionally only those to one path). */
  received(path?: string): ReceivedRequest[] {
    return path === undefined ? [...this.requests] : this.requests.filter((r) => r.url.split('?')[0] === path);
  }

  /** Polls until `count` requests arrived (to `path` when given); fails after the deadline. */
  async waitForRequests(count: number, options: WaitOptions = {}): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + (options.timeoutMs ?? 5000);
    for (;;) {
      const got = this.received(options.path);
      if (got.length >= count) return got;
      if (Date.now() > deadline) {
        throw new Error(`expected ${count} webhook request(s)${options.path ? ` to ${options.path}` : ''}, got ${got.length}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  reset(): void {
    this.requests.length = 0;
    this.answers = [200];
    this.answerBody = 'ok';
    this.answerHeaders = {};
    this.answerDelayMs = 0;
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const received: ReceivedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaderNames: request.rawHeaders.filter((_, i) => i % 2 === 0),
        body,
        json,
        receivedAt: Date.now(),
        state: 'answered',
      };
      this.requests.push(received);
      const answer = this.answers.length > 1 ? this.answers.shift()! : this.answers[0];
      if (answer === 'hang') {
        received.state = 'hanging';
        this.hanging.add(response);
        response.on('close', () => {
          this.hanging.delete(response);
          received.state = 'closed by the caller';
        });
        return;
      }
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(answer, { 'Content-Type': 'text/plain', ...this.answerHeaders });
        response.end(this.answerBody);
      };
      if (this.answerDelayMs <= 0) return send();
      this.delayedAnswers++;
      setTimeout(() => {
        this.delayedAnswers--;
        send();
      }, this.answerDelayMs);
    });
  }
}
