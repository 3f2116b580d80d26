import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

/** One sample of the Prometheus text format. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  samples: MetricSample[];
  /** Family name -> declared type (counter, gauge, histogram, summary). */
  types: Map<string, string>;
  /** Samples of one name whose labels include all of `labels`. */
  find: (name: string, labels?: Record<string, string>) => MetricSample[];
  /** The single matching sample's value; throws when there is not exactly one. */
  value: (name: string, labels?: Record<string, string>) => number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the exposition text strictly: an unparsable line fails the test. */
export function parseMetrics(text: string): ParsedMetrics {
  const samples: MetricSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    // prom-client writes NaN as "Nan"; Prometheus reads NaN in any case.
    const isNaNText = /^nan$/i.test(match[3]);
    const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : isNaNText ? NaN : Number(match[3]);
    if (Number.isNaN(value) && !isNaNText) throw new Error(`not a metrics value: ${line}`);
    samples.push({ name: match[1], labels, value });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  return {
    samples,
    types,
    find,
    value: (name, labels = {}) => {
      const found = find(name, labels);
      if (found.length !== 1) throw new Error(`expected one sample ${name} ${JSON.stringify(labels)}, found ${found.length}`);
      return found[0].value;
    },
  };
}

/**
 * Compiles src/ exactly as `npm run build` does, into a temporary directory (dist/ belongs to
 * whoever ran the last build; a test must not replace it under them).
 */
export async function buildServiceIntoTemp(): Promise<{ main: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-build-'));
  const out = join(dir, 'dist');
  await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'swc'),
    ['src', '-d', out, '--strip-leading-paths', '--copy-files', '--quiet', '--ignore', '**/*.spec.ts'],
    { cwd: ROOT },
  );
  // The built files resolve their packages from here, as dist/ does inside the repository.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { main: join(out, 'main.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunningService {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first JSON log line (already printed or to come) that satisfies the predicate. */
  waitForLog: (predicate: (entry: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  /** JSON log lines printed so far. */
  entries: () => Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The listening URL, from the start log line. */
  url: string;
  kill: (signal?: NodeJS.Signals) => void;
}

/** `node <main>` with exactly the given environment; resolves once it listens. */
export async function startService(main: string, env: Record<string, string>): Promise<RunningService> {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const parsed: Record<string, unknown>[] = [];
  const waiters = new Set<{ predicate: (entry: Record<string, unknown>) => boolean; resolve: (entry: Record<string, unknown>) => void }>();
  const onLine = (line: string) => {
    lines.push(line);
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
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
  const waitForLog = (predicate: (entry: Record<string, unknown>) => boolean, timeoutMs = 90_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const already = parsed.find(predicate);
      if (already) return resolve(already);
      const waiter = {
        predicate,
        resolve: (entry: Record<string, unknown>) => {
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
  try {
    const started = await Promise.race([
      waitForLog((entry) => typeof entry.url === 'string' && typeof entry.database === 'string'),
      exited.then(({ code }) => {
        throw new Error(`the service exited with ${code} before listening:\n${lines.join('\n')}`);
      }),
    ]);
    return { child, lines, waitForLog, entries: () => [...parsed], exited, url: started.url as string, kill };
  } catch (error) {
    kill('SIGKILL');
    throw error;
  }
}

/** A local webhook receiver: answers 200, or holds every request open when `hold` is set. */
export async function startReceiver(options: { hold?: boolean } = {}): Promise<{
  url: string;
  received: () => number;
  waitForRequests: (count: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}> {
  const held: ServerResponse[] = [];
  let count = 0;
  const listeners = new Set<() => void>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      count++;
      for (const listener of listeners) listener();
      if (options.hold) held.push(response);
      else response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => count,
    waitForRequests: (wanted, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (count >= wanted) return resolve();
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the receiver got ${count} of ${wanted} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (count < wanted) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
      }),
    close: async () => {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The absolute path of a program on PATH, or undefined (tests of optional system tools skip without it). */
export function findExecutable(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
