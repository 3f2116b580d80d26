import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../support/app';
import { buildOpenApiDocument } from '../../src/openapi/openapi';
import { formatRouteTable, type RouteEntry, routeTable } from '../support/route-table';

/*
 * Who may call what, route by route: routes.expected.txt, beside this file. A change there is a
 * change of the service's access rules: it must be reviewed, never pasted blindly. When the test
 * fails it prints the current table; after checking every changed line, paste it over that file.
 *
 * Access: `public` (no token), `authenticated` (any valid Bearer or Basic token; the handler
 * decides what the caller sees), `permission <resource>.<action>[.:<param>]` (the caller needs
 * `<caller>.<resource>.<action>.<value of :param, or *>`), `+ <Guard>` for an extra guard.
 * Routes under /memberships/:membershipId also reject callers of another membership.
 */
const EXPECTED_FILE = join(__dirname, 'routes.expected.txt');
const EXPECTED = readFileSync(EXPECTED_FILE, 'utf8');

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line !== '');

describe('route access table', () => {
  let t: TestApp;
  let current: string[];
  let entries: RouteEntry[];

  beforeAll(async () => {
    t = await startTestApp();
    entries = routeTable(t.app);
    current = formatRouteTable(entries);
  });
  afterAll(async () => t?.close());

  it('every route declares who may call it', () => {
    const undeclared = current.filter((line) => / (NONE|NOT A NEST ROUTE)$/.test(line));
    if (undeclared.length > 0) {
      throw new Error(
        `Routes without an access declaration (@Public(), @Authenticated() or @RequirePermission(...)):\n` +
          `${undeclared.join('\n')}\n\nFull table:\n${current.join('\n')}`,
      );
    }
    expect(undeclared).toEqual([]);
  });

  it('matches the reviewed table', () => {
    const expected = lines(EXPECTED);
    const actual = current.map((line) => line.replace(/\s+/g, ' '));
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      const added = actual.filter((line) => !expected.includes(line));
      const removed = expected.filter((line) => !actual.includes(line));
      throw new Error(
        'The routes or their access declarations changed.\n' +
          `New or changed:\n${added.map((line) => `  + ${line}`).join('\n') || '  (none)'}\n` +
          `Gone or changed:\n${removed.map((line) => `  - ${line}`).join('\n') || '  (none)'}\n\n` +
          `After reviewing, replace the contents of ${EXPECTED_FILE} with:\n\n${current.join('\n')}\n`,
      );
    }
    expect(actual).toEqual(expected);
  });

  it('routes of a membership\'s resources name the membership parameter membershipId (the access guard reads that name)', () => {
    // Only the memberships resource itself (permission memberships.*) may call it :id.
    const misnamed = current.filter((line) => {
      const [, path, ...access] = line.split(' ').filter(Boolean);
      const param = /^\/memberships\/:([^/]+)/.exec(path)?.[1];
      if (param === undefined || param === 'membershipId') return false;
      return !(param === 'id' && access.join(' ').startsWith('permission memberships.'));
    });
    expect(misnamed).toEqual([]);
  });

  // A public route may still name the scheme its handler reads (the refresh token in Bearer); a
  // route the guard protects must never look optional (`{}`) in the document.
  it('the OpenAPI document states each route\'s access: only public routes carry `{}` (setup its token), the others a scheme', () => {
    const paths = buildOpenApiDocument(t.app).paths as Record<string, Record<string, { security?: object[] }>>;
    const wrong: string[] = [];
    for (const entry of entries) {
      const operation = paths[entry.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[entry.method.toLowerCase()];
      if (!operation) continue; // served outside the document (the /device page, /docs)
      const security = JSON.stringify(operation.security ?? []);
      const expected = entry.access.startsWith('public + SetupTokenGuard')
        ? security === '[{"setup_token":[]}]'
        : entry.access.startsWith('public')
          ? security !== undefined && security !== '[]'
          : !security.includes('{}') && security.startsWith('[{"');
      if (!expected) wrong.push(`${entry.method} ${entry.path} (${entry.access}): security ${security}`);
    }
    expect(wrong).toEqual([]);
  });
});
