import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import { createServer, IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from './errors';

/**
 * Nest's Express adapter, with one change: the HTTP server builds requests and responses that
 * already have Express's prototypes (`app.request`, `app.response`).
 *
 * Why: Express's `app.handle` calls `Object.setPrototypeOf` on every request and response, and
 * after that much of what a request allocates survives the next young-generation GC. (V8 must
 * re-shape an object whose prototype changes; we measured the effect, not V8's internals.)
 * Measured with --trace-gc-nvp on a bare Express app at 1,000 req/s: about 40% of what a
 * request allocated survived each scavenge and was promoted, scavenges took 5 to 17 ms (0.7 ms
 * without), and p99 latency was 12 to 15 ms (4.5 ms without). When the prototype is already the one Express sets,
 * `setPrototypeOf` is a no-op (the language says so: same prototype, nothing to do).
 *
 * Only the plain HTTP server is built here; options this service never passes (HTTPS, forced
 * connection closing, 503 while closing) go to Nest's own implementation. Either server answers
 * what Node's parser refuses with the contract's error body (answerClientErrors).
 */
export class PreshapedExpressAdapter extends ExpressAdapter {
  constructor(private readonly maxHeaderSize: number) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options);
    } else {
      const app = this.getInstance<Express>();
      this.httpServer = createServer(
        {
          IncomingMessage: withOwnPrototype(IncomingMessage, app.request),
          ServerResponse: withOwnPrototype(ServerResponse, app.response),
          maxHeaderSize: this.maxHeaderSize,
          // Node would answer an HTTP/1.1 request without Host with a bare 400; screenRequests
          // answers it with the error body instead.
          requireHostHeader: false,
        },
        app,
      );
    }
    answerClientErrors(this.httpServer);
  }
}

/** What Node's parser refused, as the contract's error (the statuses of Node's own default answers). */
function clientErrorAnswer(nodeCode: string | undefined): DomainError {
  switch (nodeCode) {
    case 'HPE_HEADER_OVERFLOW':
      return new DomainError('HeadersTooLarge', 'The request headers are too large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new DomainError('PayloadTooLarge', 'The chunk extensions of the request body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new DomainError('RequestTimeout', 'The request was not received in time');
    default:
      return new DomainError('MalformedRequest', 'The request is not valid HTTP (its method, target, version or headers)');
  }
}

/**
 * A request Node's HTTP parser refuses (a raw space or non-ASCII byte in the target, an unknown
 * method, headers past the limit, a request that stalls) never becomes a request the app sees:
 * Node answers it with a bare status line. This answers it as the app would answer anything,
 * with the contract's error body, and closes the connection, as Node does. Nothing is written when
 * an answer on that connection has started (it would corrupt it), as Node's own default.
 *
 * CONNECT never reaches the app either: Node hands it to 'connect' listeners, and with none it
 * closes the connection without a word. This service is no proxy: 405, with the error body and an
 * empty Allow (RFC 9110 15.5.6: the target, a host and port, allows no method here).
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // `_httpMessage`: the answer in progress on this connection, which Node's default checks too.
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code !== 'ECONNRESET' && socket.writable && !answering?.headersSent) {
      writeRefusal(socket, clientErrorAnswer(error.code));
    }
    socket.destroy();
  });
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    if (socket.writable) {
      writeRefusal(socket, new DomainError('MethodNotAllowed', 'CONNECT is not answered here: this service is not a proxy'), 'Allow: \r\n');
    }
    socket.destroy();
  });
}

/** `refused` as a whole HTTP/1.1 answer written straight to the connection, which closes after it. */
function writeRefusal(socket: Duplex, refused: DomainError, extraHeaders = ''): void {
  const body = JSON.stringify(refused.toBody());
  socket.write(
    `HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extraHeaders +
      'Cache-Control: no-store\r\nConnection: close\r\n\r\n' +
      body,
  );
}

/**
 * A constructor that runs `base` on an object whose own prototype is `prototype` from the start.
 *
 * `base.call(this, ...)` rather than `Reflect.construct(base, args, Shaped)`: both give the right
 * prototype, but objects built through Reflect.construct with another new.target measured 5 to 8 KB
 * each (IncomingMessage, ServerResponse; V8 gave them no shared shape), and a request as a whole
 * allocated 48 KB instead of 36. Node's IncomingMessage and ServerResponse are plain constructor
 * functions, which `call` supports; express-adapter.spec fails at once if that ever changes.
 */
function withOwnPrototype<C>(base: C, prototype: object): C {
  // Typed as classes, plain constructor functions at run time (see above).
  const construct = base as unknown as (this: object, first: unknown, second?: unknown) => void;
  function Shaped(this: object, first: unknown, second?: unknown): void {
    construct.call(this, first, second);
  }
  Shaped.prototype = prototype;
  // A plain function stands in for the class: Node only ever calls it with `new`.
  return Shaped as unknown as C;
}
