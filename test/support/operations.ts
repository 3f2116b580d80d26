import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { type SpawnedService, spawnService } from './process';

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

export interface RunningService extends SpawnedService {
  /** The listening URL, from the start log line. */
  url: string;
}

/** `node <main>` with exactly the given environment; resolves once it listens. */
export async function startService(main: string, env: Record<string, string>): Promise<RunningService> {
  const service = spawnService(main, env);
  try {
    const started = await Promise.race([
      service.waitForLog((entry) => typeof entry.url === 'string' && typeof entry.database === 'string'),
      service.exited.then(({ code }) => {
        throw new Error(`the service exited with ${code} before listening:\n${service.lines.join('\n')}`);
      }),
    ]);
    return { ...service, url: started.url as string };
  } catch (error) {
    service.kill('SIGKILL');
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

/** GET /metrics of a service: its headers, its text, and the text parsed; fails unless it answers 200. */
export async function scrapeMetrics(service: { url: string }): Promise<{ headers: Headers; text: string; metrics: ParsedMetrics }> {
  const res = await fetch(`${service.url}/metrics`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 200)}`);
  return { headers: res.headers, text, metrics: parseMetrics(text) };
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
