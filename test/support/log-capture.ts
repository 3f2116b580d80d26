import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { loggerOptions } from '../../src/common/logger';

export interface CapturedLog {
  /** A logger with the service's options (redaction, error serializer) that writes here. */
  logger: Logger;
  /** Every line so far, parsed. */
  lines(): Record<string, unknown>[];
  /** Every line so far, as written. */
  text(): string;
  clear(): void;
}

/** The service's logger, writing into memory: for specs that assert what was logged. */
export function captureLog(level = 'info'): CapturedLog {
  let written = '';
  const logger = pino(
    loggerOptions(level),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.toString();
        callback();
      },
    }),
  );
  return {
    logger,
    text: () => written,
    lines: () =>
      written
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    clear: () => {
      written = '';
    },
  };
}
