import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/**
 * One JSON logger for the process. Field names that could carry secrets are redacted at the
 * source, whatever the caller logs.
 */
export function createLogger(level: string): Logger {
  // Asynchronous writes: one log line per request must not cost a blocking syscall each.
  // pino flushes what is buffered when the process exits.
  const destination = pino.destination({ dest: 1, sync: false });
  return pino({
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
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
  }, destination);
}

/** Nest's own framework messages, routed into the same JSON stream. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
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
