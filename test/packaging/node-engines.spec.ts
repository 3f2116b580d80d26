/**
 * The Node versions the package states are the ones it installs on: `npm ci` (dry run, on a copy
 * of package.json and package-lock.json outside the repository) on the running Node warns
 * EBADENGINE for nothing but the dependencies the README names, never for this package itself,
 * and the README states the same range as `engines`.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/**
 * Dependencies whose declared engines leave out a Node line the package supports, with the
 * lines they leave out (major versions). Each is explained in the README's Node section.
 * file-type 22 (required by @nestjs/common for its upload validator, which the service never
 * loads) declares Node >= 22 and runs on Node 20 all the same.
 */
const KNOWN_ENGINE_WARNINGS: Record<string, readonly number[]> = { 'file-type': [20] };

/** `package@version` of every EBADENGINE warning in npm's output. */
function engineWarnings(output: string): string[] {
  return [...output.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((match) => match[1]);
}

describe('Node versions: engines, npm ci and README agree', () => {
  let dir: string;
  let engines: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'portcullis-engines-'));
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    engines = manifest.engines.node;
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('npm ci on this Node warns about no engine but the known ones, and never about this package', async () => {
    await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
    await copyFile(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const args = ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'];
    // The lockfile names every tarball: the npm cache serves them once the repository was installed.
    const result = await run('npm', [...args, '--offline'], { cwd: dir }).catch(() => run('npm', [...args, '--prefer-offline'], { cwd: dir }));
    const warned = engineWarnings(result.stderr + result.stdout);

    const major = Number(process.versions.node.split('.')[0]);
    const unexpected = warned.filter((id) => {
      const name = id.slice(0, id.lastIndexOf('@'));
      return !(KNOWN_ENGINE_WARNINGS[name] ?? []).includes(major);
    });
    expect(unexpected).toEqual([]);
  }, 120_000);

  it('the README states the range of package.json engines', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`\`"node": "${engines}"\``);
    for (const name of Object.keys(KNOWN_ENGINE_WARNINGS)) expect(readme).toContain(`\`${name}\``);
  });
});
