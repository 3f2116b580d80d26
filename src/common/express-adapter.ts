import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';

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
 * connection closing, 503 while closing) go to Nest's own implementation.
 */
export class PreshapedExpressAdapter extends ExpressAdapter {
  constructor(private readonly maxHeaderSize: number) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: withOwnPrototype(IncomingMessage, app.request),
        ServerResponse: withOwnPrototype(ServerResponse, app.response),
        maxHeaderSize: this.maxHeaderSize,
      },
      app,
    );
  }
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
