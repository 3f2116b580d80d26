/**
 * The README's walk-through, run as a newcomer pastes it: every fenced `sh` block marked with
 * `<!-- walkthrough -->`, first the README's, then those of the docs pages that continue it in the
 * same shell (WALKTHROUGH_FILES, in that order), in one bash (`-euo pipefail`: the first failing
 * command, an unset variable or a failed `curl -f` stops it) against a real service on 127.0.0.1.
 * Every request goes to BASE or to a process the blocks start on 127.0.0.1: the OpenID Connect
 * provider (OIDC_PORT), the webhook receiver (HOOK_PORT) and the mail catcher (MAIL_PORT). The
 * README's own webhook is passive, so nothing is sent anywhere else.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TEST_SETUP_TOKEN, type TestApp } from '../support/app';
import { closedPorts } from '../support/ports';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const MARKER = '<!-- walkthrough -->';
/** The files whose marked blocks make up the walk-through, in the order a reader pastes them. */
const WALKTHROUGH_FILES = ['README.md', 'docs/api.md', 'docs/webhooks.md', 'docs/device-flow.md', 'docs/providers.md', 'docs/mail-and-recovery.md'];

/** The marked blocks of one markdown text, in order. */
function walkthroughBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const pattern = new RegExp(`${MARKER}\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\n`, 'g');
  for (const match of markdown.matchAll(pattern)) blocks.push(match[1]);
  return blocks;
}

function readRepositoryFile(path: string): Promise<string> {
  return readFile(join(ROOT, path), 'utf8');
}

describe('README walk-through', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The provider section calls a loopback issuer, as its text tells the reader to allow.
    t = await startTestApp({ env: { ...ALLOW_LOOPBACK_RECEIVERS } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every marked block is an sh block, and every file with marked blocks is run', async () => {
    for (const path of WALKTHROUGH_FILES) {
      const markdown = await readRepositoryFile(path);
      const markers = markdown.split(MARKER).length - 1;
      // The path in the compared value names the file when it fails.
      expect({ path, blocks: walkthroughBlocks(markdown).length }).toEqual({ path, blocks: markers });
    }
    expect(walkthroughBlocks(await readRepositoryFile('README.md')).length).toBeGreaterThanOrEqual(4);
    // A page given a marked block must be added to WALKTHROUGH_FILES, or its example goes untested.
    const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    const marked: string[] = [];
    for (const path of docs) if ((await readRepositoryFile(path)).includes(MARKER)) marked.push(path);
    expect(marked.sort()).toEqual(WALKTHROUGH_FILES.filter((path) => path.startsWith('docs/')).sort());
  });

  it('runs top to bottom against a fresh service, every command succeeding', async () => {
    const files = await Promise.all(WALKTHROUGH_FILES.map(readRepositoryFile));
    const script = files.flatMap(walkthroughBlocks).join('\n');
    const [oidcPort, mailPort, hookPort] = await closedPorts(3);
    const result = await run('bash', ['-euo', 'pipefail', '-c', script], {
      // From the repository's directory, as the provider block says.
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', BASE: t.url, SETUP_TOKEN: TEST_SETUP_TOKEN, OIDC_PORT: String(oidcPort), MAIL_PORT: String(mailPort), HOOK_PORT: String(hookPort) },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`the walk-through stopped (exit ${error.code}):\n${error.stderr}\n--- stdout ---\n${error.stdout}`);
    });
    const lines = result.stdout.trim().split('\n');

    expect(lines[0]).toBe('{"status":"Healthy"}');
    // Bob's role forbids deleting users.
    expect(lines).toContainEqual(expect.stringMatching(/"allowed":false.*"reason":"forbidden"/));
    // Custom fields: the default filled in, and the enum value the type refuses.
    const answers = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(answers).toContainEqual(expect.objectContaining({ username: 'carol', plan: 'pro', customer_no: 1001, newsletter: false }));
    expect(lines).toContainEqual(expect.stringMatching(/"errorCode":"ModelValidationError".*"field":"plan"/));
    // The refreshed token works, is revoked with 204, then refused.
    expect(lines.join('\n')).toContain('\n204\n401\n');
    // The active webhook called the local receiver once, signed, with the rendered URL, header and body.
    expect(answers).toContainEqual(
      expect.objectContaining({
        method: 'POST',
        url: expect.stringMatching(/^\/hooks\/[^/]+\/users\/[^/]+$/),
        event: 'UserCreated',
        signed: true,
        body: expect.objectContaining({ payload: expect.objectContaining({ name: 'Frank Hook' }) }),
      }),
    );
    // The device polled before the user decided, then signed in once the user approved.
    expect(lines).toContainEqual(expect.stringMatching(/"errorCode":"AuthorizationPending"/));
    expect(answers).toContainEqual(expect.objectContaining({ user_code: expect.any(String), state: 'approved' }));
    // Ada signed in through the local provider: signed up by it, named by her verified e-mail.
    expect(answers).toContainEqual(expect.objectContaining({ username: 'ada@example.com', firstname: 'Ada', source_provider: 'local' }));
    // The welcome mail reached the catcher; Dave, activated and reset by mail, signs in with his new password.
    expect(lines).toContain('Erin</p>');
    expect(lines).toContain('{"valid":true}');
  }, 240_000); // dozens of requests, a dozen argon2 hashes and three local servers: slow on shared cores
});
