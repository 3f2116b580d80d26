import type { LoggerService } from '@nestjs/common';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import pino, { type Logger, type LoggerOptions } from 'pino';

/** Log lines are written in batches of about this many bytes (some 25 request lines)... */
const LOG_BATCH_BYTES = 4096;
/** ...or after this long, whichever comes first, so a quiet service's lines still show promptly. */
const LOG_FLUSH_MS = 100;

/**
 * One JSON logger for the process. Field names that could carry secrets are redacted at the
 * source, whatever the caller logs.
 */
export function createLogger(level: string): Logger {
  // Asynchronous, buffered writes. Asynchronous: a log line must not block the event loop on a
  // slow stdout. Buffered: unbuffered, every request's line was its own write on libuv's thread
  // pool, with the wake-ups to and from it, a fifth more CPU per request; in 4 KB batches the
  // request lines cost next to nothing.
  // A line waits at most LOG_FLUSH_MS; pino writes what is buffered when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
  const logger = pino(loggerOptions(level), destination);
  destinations.set(logger, destination);
  return logger;
}

/** The destination of each logger createLogger made, for closeLogger. */
const destinations = new WeakMap<Logger, ReturnType<typeof pino.destination>>();

/**
 * For the owner of a logger createLogger made, once nothing logs to it any more (an app that was
 * closed): writes what it holds and stops the destination's periodic flush, a timer that would
 * otherwise run, and keep alive what it was made beside, for the life of the process. Stdout
 * stays open. Only after the app's close: whatever it still logs then is dropped. A logger made
 * elsewhere (a test's) is left alone.
 */
export function closeLogger(logger: Logger): void {
  const destination = destinations.get(logger);
  if (!destination) return;
  destinations.delete(logger);
  // A line logged after this (a late callback of the closed app) is dropped, not thrown at its caller.
  logger.level = 'silent';
  destination.flushSync();
  destination.end();
}

/** The logger's options, apart from where it writes (tests write to a stream of their own). */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError },
    redact: {
      paths: [
        'password',
        '*.password',
        'password_hash',
        '*.password_hash',
        'secret',
        '*.secret',
        'secret_key',
        '*.secret_key',
        'token',
        '*.token',
        'authorization',
        '*.authorization',
        'headers.authorization',
        'access_token',
        'refresh_token',
      ],
      censor: '[redacted]',
    },
  };
}

/**
 * How errors are logged: type, message, stack, their own fields and their causes, minus the values
 * a failed statement was given. Drizzle puts a failed query's parameters in its error (as
 * `params`, and in the message and so the first line of the stack), and the embedded driver
 * attaches `params` to its own errors: a password hash, a token digest or a secret an INSERT
 * carried would otherwise reach the log. The driver's `detail` goes too: for a unique violation
 * it repeats the key's value. Not pino's own serializer: it folds every cause's message and
 * stack into the error's, and a DrizzleQueryError among the causes would bring its parameters.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { detail: _detail, params: _params, queryOptions: _options, cause, ...fields } = error as Error & Record<string, unknown>;
  const serialized: Record<string, unknown> = {
    ...fields,
    type: error.constructor.name,
    message: error.message,
    stack: error.stack,
    ...(cause === undefined ? {} : { cause: serializeError(cause) }),
  };
  if (error instanceof DrizzleQueryError) {
    serialized.message = `Failed query: ${error.query}`;
    const frames = (error.stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
    serialized.stack = ['DrizzleQueryError: Failed query (parameters not logged)', ...frames].join('\n');
  }
  return serialized;
}

/**
 * Nest's own framework messages, routed into the same JSON stream. Its `log` level (module
 * initialised, each of some hundred routes mapped, "successfully started") goes to debug: at
 * info the start is the service's own few lines. Warnings and errors keep their levels.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

export const LOGGER = Symbol('LOGGER');
