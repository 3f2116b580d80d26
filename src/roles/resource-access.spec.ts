import type { Caller } from '../auth/caller';
import type { CallerPermissions } from '../auth/caller-permissions';
import { DomainError } from '../common/errors';
import { PermissionExpression, type PermissionHolder } from '../permissions';
import { assertMayActOnEach, holderMay, requiredPermission } from './resource-access';

const caller = { kind: 'application', id: 'app.1', membershipId: 'm1' } as unknown as Caller;

function holder(permissions: string[], forbidden: string[] = []): PermissionHolder {
  return {
    id: caller.id,
    kind: 'application',
    ownPermissions: [],
    ownForbidden: [],
    rolePermissions: permissions.map((p) => PermissionExpression.parse(p)),
    roleForbidden: forbidden.map((p) => PermissionExpression.parse(p)),
    scopes: null,
  };
}

const permissionsOf = (h: PermissionHolder): CallerPermissions => ({ holderOf: async () => h }) as unknown as CallerPermissions;

describe('resource access helpers', () => {
  it('builds the guard\'s expression with escaped subject and object', () => {
    expect(requiredPermission(caller, 'roles', 'delete', 'a.b').toString()).toBe('app%2E1.roles.delete.a%2Eb');
    expect(requiredPermission(caller, 'roles', 'delete').toString()).toBe('app%2E1.roles.delete.*');
  });

  it('decides per object id', () => {
    const h = holder(['memberships.read'], ['memberships.read.secret']);
    expect(holderMay(h, caller, 'memberships', 'read', 'open')).toBe(true);
    expect(holderMay(h, caller, 'memberships', 'read', 'secret')).toBe(false);
    expect(holderMay(holder(['memberships.read.own']), caller, 'memberships', 'read', 'other')).toBe(false);
  });

  it('refuses a bulk action when any id is forbidden, naming it', async () => {
    const h = holder(['roles.delete'], ['roles.delete.kept']);
    await expect(assertMayActOnEach(permissionsOf(h), caller, 'roles', 'delete', ['a', 'b'])).resolves.toBeUndefined();
    const failure = assertMayActOnEach(permissionsOf(h), caller, 'roles', 'delete', ['a', 'kept']);
    await expect(failure).rejects.toBeInstanceOf(DomainError);
    await expect(failure).rejects.toMatchObject({ code: 'AccessDenied', message: expect.stringContaining('"kept"') });
  });
});
