import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** The service `npm run build` wrote (`npm test` builds first). */
const DIST_MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

type LogEntry = Record<string, unknown>;

/** A built service running as a real process, its output read line by line. */
export interface SpawnedService {
  child: ChildProcess;
  /** Every line the process printed so far (stdout and stderr). */
  lines: string[];
  /** JSON log lines printed so far. */
  entries: () => LogEntry[];
  /** Resolves with the first JSON log line (already printed or to come) that satisfies the predicate. */
  waitForLog: (predicate: (entry: LogEntry) => boolean, timeoutMs?: number) => Promise<LogEntry>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the signal unless the process has already exited. */
  kill: (signal?: NodeJS.Signals) => void;
}

/** `node <main>` with exactly the given environment (and PATH), listening on 127.0.0.1 at a free port unless `env` says otherwise. */
export function spawnService(main: string, env: Record<string, string>): SpawnedService {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const parsed: LogEntry[] = [];
  const waiters = new Set<{ predicate: (entry: LogEntry) => boolean; resolve: (entry: LogEntry) => void }>();
  const onLine = (line: string) => {
    lines.push(line);
    let entry: LogEntry;
    try {
      entry = JSON.parse(line) as LogEntry;
    } catch {
      return;
    }
    parsed.push(entry);
    for (const waiter of waiters) {
      if (waiter.predicate(entry)) {
        waiters.delete(waiter);
        waiter.resolve(entry);
      }
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
        onLine(buffer.slice(0, index));
        buffer = buffer.slice(index + 1);
      }
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  // Generous: a loaded CI machine has taken over 30 s to start the built service.
  const waitForLog = (predicate: (entry: LogEntry) => boolean, timeoutMs = 90_000) =>
    new Promise<LogEntry>((resolve, reject) => {
      const already = parsed.find(predicate);
      if (already) return resolve(already);
      const waiter = {
        predicate,
        resolve: (entry: LogEntry) => {
          clearTimeout(timer);
          resolve(entry);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no matching log line within ${timeoutMs} ms; output:\n${lines.join('\n')}`));
      }, timeoutMs);
      waiters.add(waiter);
    });
  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  return { child, lines, entries: () => [...parsed], waitForLog, exited, kill };
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Every line the process printed so far (stdout and stderr). */
  lines: string[];
  /** Resolves with the first parsed JSON log line that satisfies the predicate. */
  waitForLog: (predicate: (entry: LogEntry) => boolean, timeoutMs?: number) => Promise<LogEntry>;
  /** The exit code. */
  exited: Promise<number | null>;
  /** Signals the process (unless it has exited) and answers its exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Runs dist/main.js (`npm run build` first; `npm test` does it) as a real process, NODE_ENV=test unless `env` says otherwise. */
export function startServiceProcess(env: Record<string, string>): ServiceProcess {
  const service = spawnService(DIST_MAIN, { NODE_ENV: 'test', ...env });
  const exited = service.exited.then(({ code }) => code);
  return {
    child: service.child,
    lines: service.lines,
    waitForLog: service.waitForLog,
    exited,
    stop: async (signal = 'SIGTERM') => {
      service.kill(signal);
      return exited;
    },
  };
}
