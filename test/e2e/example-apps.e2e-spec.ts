/**
 * `npm run example:nest` and `npm run example:express` as a developer runs them: the real npm
 * script, with only the environment variables the README lists. Without HOST they bind to
 * 127.0.0.1 (a development example stays off the network), and they answer on it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

interface Started {
  child: ChildProcess;
  address: string;
  port: number;
}

/** Runs `npm run <script>` in its own process group and waits for its "on http://<address>:<port>" line. */
function startExample(script: string): Promise<Started> {
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: ROOT,
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      // Validated at start but never called: /health is public. A closed loopback port.
      PORTCULLIS_URL: 'http://127.0.0.1:9/',
      PORTCULLIS_MEMBERSHIP_ID: 'm-example',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = / on http:\/\/(\S+):(\d+)/.exec(output);
      if (match) resolve({ child, address: match[1], port: Number(match[2]) });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${script} exited (${code}) before listening:\n${output}`)));
  });
}

/** npm starts tsx, which starts node: end the whole process group. */
async function stop(started: Started | undefined): Promise<void> {
  if (!started?.child.pid || started.child.exitCode !== null) return;
  const exited = new Promise((resolve) => started.child.on('exit', resolve));
  process.kill(-started.child.pid, 'SIGTERM');
  await exited;
}

/** Whether any process of the group still runs (signal 0 tests without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.each(['example:nest', 'example:express'])('npm run %s', (script) => {
  let started: Started | undefined;
  afterAll(() => stop(started));

  it('binds to 127.0.0.1 without HOST and answers there', async () => {
    started = await startExample(script);
    expect(started.address).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${started.port}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }, 60_000);

  it('`kill <pid of npm>` stops the example with it: no child (tsx, node) keeps running or listening', async () => {
    if (!started?.child.pid) throw new Error('the example did not start');
    const { child, port } = started;
    const pgid = child.pid as number;
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM'); // npm alone, as `kill <pid>` does; not the group
    await exited;
    for (let waited = 0; groupAlive(pgid) && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(groupAlive(pgid)).toBe(false);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 30_000);
});
