/**
 * What docker/ promises for production, read from the files themselves (no container engine
 * runs here; CI also validates the compose file with docker-compose, see .ci/run): base images
 * pinned by version and digest, nothing installed globally in the image, no default database
 * password, and a locked-down service container.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const DOCKER = join(__dirname, '..', '..', 'docker');
/** `name:1.2.3-variant@sha256:<64 hex>`: a version tag, and the digest that tag pointed to. */
const PINNED = /^[a-z0-9][a-z0-9._/-]*:\d+\.\d+(\.\d+)?[a-z0-9.-]*@sha256:[0-9a-f]{64}$/;

/** The lines of one top-level service of the compose file (two-space indented key to the next). */
function serviceBlock(compose: string, name: string): string {
  const start = compose.indexOf(`\n  ${name}:\n`);
  if (start < 0) throw new Error(`no service ${name}`);
  const rest = compose.slice(start + 1);
  const next = rest.slice(1).search(/\n {2}[a-z][\w-]*:\n|\n[a-z]/);
  return next < 0 ? rest : rest.slice(0, next + 1);
}

describe('docker/: production container', () => {
  let dockerfile: string;
  let compose: string;

  beforeAll(async () => {
    dockerfile = await readFile(join(DOCKER, 'Dockerfile'), 'utf8');
    compose = await readFile(join(DOCKER, 'compose.yaml'), 'utf8');
  });

  it('the Dockerfile builds from a pinned base image and installs nothing globally', () => {
    const args = new Map([...dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    const stages = new Set([...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]));
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1] ?? '');
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) {
      if (stages.has(base)) continue;
      const image = /^\$\{(\w+)\}$/.exec(base)?.[1];
      expect(image ? args.get(image) : base).toMatch(PINNED);
    }
    expect(dockerfile).not.toMatch(/npm (install|i)\b[^\n]*(--global|\s-g\b)/);
  });

  it('compose pins its images, requires POSTGRES_PASSWORD and locks the service container down', () => {
    for (const [, image] of compose.matchAll(/^\s+image: (\S+)$/gm)) {
      if (image === 'portcullis:latest') continue; // built from docker/Dockerfile
      expect(image).toMatch(PINNED);
    }
    expect(compose).toMatch(/\$\{POSTGRES_PASSWORD:\?/);
    expect(compose).not.toMatch(/\$\{POSTGRES_PASSWORD(:-|-|\})/);

    const service = serviceBlock(compose, 'portcullis');
    expect(service).toMatch(/^ {4}read_only: true$/m);
    expect(service).toMatch(/^ {4}tmpfs:\n {6}- \/tmp/m);
    expect(service).toMatch(/^ {4}cap_drop:\n {6}- ALL$/m);
    expect(service).toMatch(/^ {4}security_opt:\n {6}- no-new-privileges:true$/m);
  });

  it('compose checks the service\'s readiness on /healthcheck and says that /docs is off there', () => {
    const service = serviceBlock(compose, 'portcullis');
    expect(service).toMatch(/^ {4}healthcheck:\n {6}test: \[.*\/healthcheck.*\]$/m);
    expect(compose).toMatch(/\/docs and \/openapi\/v1\.json are off/);
  });
});
