import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

export interface ServiceProcess {
  child: ChildProcess;
  /** Every line the process printed so far (stdout and stderr). */
  lines: string[];
  /** Resolves with the first parsed JSON log line that satisfies the predicate. */
  waitForLog: (predicate: (entry: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Runs the built service (`npm run build` first; `npm test` does it) as a real process. */
export function startServiceProcess(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { predicate: (entry: Record<string, unknown>) => boolean; resolve: (entry: Record<string, unknown>) => void }[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const waiter of [...waiters]) {
      if (waiter.predicate(entry)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let index;
      while ((index = buffer.indexOf('\n')) >= 0) {
        onLine(buffer.slice(0, index));
        buffer = buffer.slice(index + 1);
      }
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    waitForLog: (predicate, timeoutMs = 90_000) =>
      new Promise((resolve, reject) => {
        for (const line of lines) {
          try {
            const entry = JSON.parse(line) as Record<string, unknown>;
            if (predicate(entry)) return resolve(entry);
          } catch {
            // not a JSON line
          }
        }
        const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms:\n${lines.join('\n')}`)), timeoutMs);
        waiters.push({
          predicate,
          resolve: (entry) => {
            clearTimeout(timer);
            resolve(entry);
          },
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
