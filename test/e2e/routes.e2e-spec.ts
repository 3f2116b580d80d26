import { startTestApp, type TestApp } from '../support/app';
import { formatRouteTable, routeTable } from '../support/route-table';

/*
 * Who may call what, route by route. A change here is a change of the service's access rules:
 * it must be reviewed, never pasted blindly. When the test fails it prints the current table;
 * after checking every changed line, paste it over EXPECTED.
 *
 * Access: `public` (no token), `authenticated` (any valid Bearer or Basic token; the handler
 * decides what the caller sees), `permission <resource>.<action>[.:<param>]` (the caller needs
 * `<caller>.<resource>.<action>.<value of :param, or *>`), `+ <Guard>` for an extra guard.
 * Routes under /memberships/:membershipId also reject callers of another membership.
 */
const EXPECTED = `
GET    /device                                              public
GET    /device/device.css                                   public
GET    /device/device.js                                    public
POST   /generate-token                                      public
GET    /healthcheck                                         public
GET    /me                                                  authenticated
GET    /memberships                                         permission memberships.read
POST   /memberships                                         permission memberships.create
DELETE /memberships/:id                                     permission memberships.delete.:id
GET    /memberships/:id                                     permission memberships.read.:id
PUT    /memberships/:id                                     permission memberships.update.:id
POST   /memberships/:id/secret-key                          permission memberships.update.:id
GET    /memberships/:membershipId/active-tokens             permission tokens.read
DELETE /memberships/:membershipId/active-tokens/:id         permission tokens.delete.:id
GET    /memberships/:membershipId/active-tokens/:id         permission tokens.read.:id
POST   /memberships/:membershipId/active-tokens/_query      permission tokens.read
DELETE /memberships/:membershipId/applications              permission applications.delete
GET    /memberships/:membershipId/applications              permission applications.read
POST   /memberships/:membershipId/applications              permission applications.create
DELETE /memberships/:membershipId/applications/:id          permission applications.delete.:id
GET    /memberships/:membershipId/applications/:id          permission applications.read.:id
PUT    /memberships/:membershipId/applications/:id          permission applications.update.:id
POST   /memberships/:membershipId/applications/:id/secret   permission applications.update.:id
POST   /memberships/:membershipId/applications/_query       permission applications.read
GET    /memberships/:membershipId/applications/search       permission applications.read
POST   /memberships/:membershipId/codes                     public
GET    /memberships/:membershipId/codes/:userCode           authenticated
POST   /memberships/:membershipId/codes/:userCode/approve   authenticated
POST   /memberships/:membershipId/codes/:userCode/deny      authenticated
POST   /memberships/:membershipId/codes/token               public
GET    /memberships/:membershipId/events                    permission events.read
GET    /memberships/:membershipId/events/:id                permission events.read.:id
POST   /memberships/:membershipId/events/_query             permission events.read
POST   /memberships/:membershipId/mail-providers/:slug/test permission memberships.update.:membershipId
DELETE /memberships/:membershipId/mailhooks                 permission mailhooks.delete
GET    /memberships/:membershipId/mailhooks                 permission mailhooks.read
POST   /memberships/:membershipId/mailhooks                 permission mailhooks.create
DELETE /memberships/:membershipId/mailhooks/:id             permission mailhooks.delete.:id
GET    /memberships/:membershipId/mailhooks/:id             permission mailhooks.read.:id
PUT    /memberships/:membershipId/mailhooks/:id             permission mailhooks.update.:id
POST   /memberships/:membershipId/mailhooks/_query          permission mailhooks.read
DELETE /memberships/:membershipId/providers                 permission providers.delete
GET    /memberships/:membershipId/providers                 permission providers.read
POST   /memberships/:membershipId/providers                 permission providers.create
DELETE /memberships/:membershipId/providers/:id             permission providers.delete.:id
GET    /memberships/:membershipId/providers/:id             permission providers.read.:id
PUT    /memberships/:membershipId/providers/:id             permission providers.update.:id
POST   /memberships/:membershipId/providers/_query          permission providers.read
GET    /memberships/:membershipId/revoked-tokens            permission tokens.read
POST   /memberships/:membershipId/revoked-tokens/_query     permission tokens.read
DELETE /memberships/:membershipId/roles                     permission roles.delete
GET    /memberships/:membershipId/roles                     permission roles.read
POST   /memberships/:membershipId/roles                     permission roles.create
DELETE /memberships/:membershipId/roles/:id                 permission roles.delete.:id
GET    /memberships/:membershipId/roles/:id                 permission roles.read.:id
PUT    /memberships/:membershipId/roles/:id                 permission roles.update.:id
POST   /memberships/:membershipId/roles/_query              permission roles.read
GET    /memberships/:membershipId/roles/search              permission roles.read
DELETE /memberships/:membershipId/token-code-policies       permission token-code-policies.delete
GET    /memberships/:membershipId/token-code-policies       permission token-code-policies.read
POST   /memberships/:membershipId/token-code-policies       permission token-code-policies.create
DELETE /memberships/:membershipId/token-code-policies/:id   permission token-code-policies.delete.:id
GET    /memberships/:membershipId/token-code-policies/:id   permission token-code-policies.read.:id
PUT    /memberships/:membershipId/token-code-policies/:id   permission token-code-policies.update.:id
POST   /memberships/:membershipId/token-code-policies/_query permission token-code-policies.read
DELETE /memberships/:membershipId/user-types                permission user-types.delete
GET    /memberships/:membershipId/user-types                permission user-types.read
POST   /memberships/:membershipId/user-types                permission user-types.create
DELETE /memberships/:membershipId/user-types/:id            permission user-types.delete.:id
GET    /memberships/:membershipId/user-types/:id            permission user-types.read.:id
PUT    /memberships/:membershipId/user-types/:id            permission user-types.update.:id
POST   /memberships/:membershipId/user-types/_query         permission user-types.read
DELETE /memberships/:membershipId/users                     permission users.delete
GET    /memberships/:membershipId/users                     permission users.read
POST   /memberships/:membershipId/users                     permission users.create
DELETE /memberships/:membershipId/users/:id                 permission users.delete.:id
GET    /memberships/:membershipId/users/:id                 permission users.read.:id
PUT    /memberships/:membershipId/users/:id                 permission users.update.:id
POST   /memberships/:membershipId/users/:id/activate        permission users.update.:id
PUT    /memberships/:membershipId/users/:id/change-password permission users.update.:id
POST   /memberships/:membershipId/users/:id/freeze          permission users.update.:id
POST   /memberships/:membershipId/users/_query              permission users.read
POST   /memberships/:membershipId/users/activate            public
POST   /memberships/:membershipId/users/reset-password      public
GET    /memberships/:membershipId/users/search              permission users.read
POST   /memberships/:membershipId/users/set-password        public
DELETE /memberships/:membershipId/webhooks                  permission webhooks.delete
GET    /memberships/:membershipId/webhooks                  permission webhooks.read
POST   /memberships/:membershipId/webhooks                  permission webhooks.create
DELETE /memberships/:membershipId/webhooks/:id              permission webhooks.delete.:id
GET    /memberships/:membershipId/webhooks/:id              permission webhooks.read.:id
PUT    /memberships/:membershipId/webhooks/:id              permission webhooks.update.:id
POST   /memberships/:membershipId/webhooks/_query           permission webhooks.read
POST   /memberships/_query                                  permission memberships.read
GET    /metrics                                             public
POST   /oauth/:slug/login                                   public
GET    /ping                                                public
GET    /refresh-token                                       public
POST   /refresh-token                                       public
GET    /revoke-token                                        public
POST   /revoke-token                                        public
GET    /roles/check-permission                              authenticated
POST   /roles/check-permission                              authenticated
POST   /setup                                               public + SetupTokenGuard
GET    /users/check-password                                authenticated
POST   /users/check-password                                authenticated
POST   /verify-otp                                          public
GET    /verify-token                                        public
POST   /verify-token                                        public
GET    /whoami                                              authenticated
`;

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line !== '');

describe('route access table', () => {
  let t: TestApp;
  let current: string[];

  beforeAll(async () => {
    t = await startTestApp();
    current = formatRouteTable(routeTable(t.app));
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
          `After reviewing, replace EXPECTED in test/e2e/routes.e2e-spec.ts with:\n\nconst EXPECTED = \`\n${current.join('\n')}\n\`;\n`,
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
});
