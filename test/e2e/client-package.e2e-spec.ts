/**
 * The client library as a consumer gets it: `npm pack` of the workspace package packages/client,
 * the tarball installed into a fresh strict TypeScript project outside the repository that has
 * Express already, a tiny Express API that imports `@portcullis/client`, type-checked and compiled
 * by that project's own `tsc`, then run against the real service. Proves the published `exports`
 * and `types` resolve, that a strict project type-checks against the emitted declarations, and
 * that the package is small: it adds fewer than 10 packages and runs no install script.
 *
 * Needs `npm run build` first (`npm test` runs it): it packs packages/client/dist as it is.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../support/app';
import { type Installation, setupInstallation } from '../support/api';
import { createUserWithRole } from '../support/protected-apps';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const PACKAGE = join(ROOT, 'packages', 'client');

/** The consumer's other dependencies, in the ranges this repository uses (so the npm cache has them). */
async function consumerDependencies(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const all = { ...manifest.dependencies, ...manifest.devDependencies };
  return ['express', 'typescript', '@types/express', '@types/node'].map((name) => `${name}@${all[name]}`);
}

const CONSUMER_TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    strict: true,
    // As most consumers set it; checking every dependency's declarations too costs more than the
    // rest of the compile. Uses of the client's declarations by app.ts are checked either way.
    skipLibCheck: true,
    types: ['node'],
    outDir: 'out',
  },
  files: ['app.ts'],
};

/** A third-party API as its author would write it from the client's README. */
const CONSUMER_APP = `
import express from 'express';
import type { AddressInfo } from 'node:net';
import { portcullis, PortcullisClient, type PortcullisSettings, principalOf } from '@portcullis/client';

const settings: PortcullisSettings = {
  BaseUrl: process.env['PORTCULLIS_URL'] ?? '',
  MembershipId: process.env['PORTCULLIS_MEMBERSHIP_ID'] ?? '',
};
const guard = portcullis(new PortcullisClient(settings));
const app = express();
app.get('/orders', guard.authorized({ action: 'read' }), (req, res) => {
  const caller: string | undefined = principalOf(req)?.identity._id;
  res.json({ orders: ['o-1'], caller });
});
const server = app.listen(Number(process.env['PORT'] ?? 0), process.env['HOST'] ?? '127.0.0.1', () => {
  console.log('listening ' + (server.address() as AddressInfo).port);
});
process.on('SIGTERM', () => server.close());
`;

interface LockPackage {
  hasInstallScript?: boolean;
}

/** The packages installed in a project, by path (node_modules/.package-lock.json, written by npm). */
async function installedPackages(project: string): Promise<Record<string, LockPackage>> {
  const lock = JSON.parse(await readFile(join(project, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, LockPackage>;
  };
  return lock.packages;
}

/** npm install in the consumer project: from the local npm cache when it holds everything, else from the registry. */
async function npmInstall(project: string, args: string[]): Promise<void> {
  const install = ['install', '--no-audit', '--no-fund', ...args];
  try {
    await run('npm', [...install, '--offline'], { cwd: project });
  } catch {
    await run('npm', [...install, '--prefer-offline'], { cwd: project });
  }
}

/** Waits for the consumer app's "listening <port>" line. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('exit', (code) => reject(new Error(`the consumer app exited (${code}) before listening:\n${output}`)));
  });
}

describe('client package: npm pack, installed into a TypeScript project, used by an Express API', () => {
  let dir: string;
  let t: TestApp | undefined;
  let consumer: ChildProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(join(PACKAGE, 'dist', 'index.js'))) throw new Error('packages/client/dist is missing: run `npm run build` first');
    dir = await mkdtemp(join(tmpdir(), 'portcullis-consumer-'));
  });

  afterAll(async () => {
    if (consumer && consumer.exitCode === null) consumer.kill('SIGTERM');
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('installs from the tarball, type-checks against the shipped declarations, and protects a route', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: PACKAGE });
    const [{ filename, entryCount }] = JSON.parse(packed.stdout) as Array<{ filename: string; entryCount: number }>;
    const tarball = join(dir, filename);

    const project = join(dir, 'consumer');
    await run('mkdir', ['-p', project]);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG));
    await writeFile(join(project, 'app.ts'), CONSUMER_APP);

    // The consumer's project before the client: an Express API with its compiler.
    await npmInstall(project, ['--ignore-scripts', ...(await consumerDependencies())]);
    const before = await installedPackages(project);
    // The client itself, with install scripts allowed: any it (or what it pulls in) has would show.
    await npmInstall(project, [tarball]);
    const after = await installedPackages(project);
    const added = Object.keys(after).filter((path) => !(path in before));
    const withInstallScripts = added.filter((path) => after[path]?.hasInstallScript === true);
    console.log(
      `@portcullis/client: ${entryCount} files in the tarball; installing it added ${added.length} package(s) (${added.join(', ')}), ` +
        `${withInstallScripts.length} with an install script`,
    );
    expect(added).toContain('node_modules/@portcullis/client');
    expect(added.length).toBeLessThan(10);
    expect(withInstallScripts).toEqual([]);

    // The consumer's own compiler: type-checks app.ts against the package's declarations, then emits.
    const tsc = await run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', '.'], { cwd: project }).catch(
      (error: { stdout?: string; message: string }) => {
        throw new Error(`tsc failed in the consumer project:\n${error.stdout ?? error.message}`);
      },
    );
    expect(tsc.stdout).toBe('');

    t = await startTestApp();
    const inst: Installation = await setupInstallation(t);
    const clerk = await createUserWithRole(t, inst, 'clerk', ['orders.read']);
    consumer = spawn(process.execPath, [join(project, 'out', 'app.js')], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        PORTCULLIS_URL: `${t.url}/`,
        PORTCULLIS_MEMBERSHIP_ID: inst.membership._id as string,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await listeningPort(consumer);
    const orders = `http://127.0.0.1:${port}/orders`;

    const anonymous = await fetch(orders);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();

    const signedIn = await fetch(orders, { headers: { Authorization: clerk.auth } });
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toEqual({ orders: ['o-1'], caller: clerk.userId });
  }, 240_000);
});
