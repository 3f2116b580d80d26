import type { PermissionHolder } from './decide';
import { firstDeniedObject, forbiddenObjectIds, objectDecision, objectPermission } from './object-access';
import { PermissionExpression } from './permission-expression';

function holder(permissions: string[], forbidden: string[] = [], id = 'app.1'): PermissionHolder {
  return {
    id,
    kind: 'application',
    ownPermissions: [],
    ownForbidden: [],
    rolePermissions: permissions.map((text) => PermissionExpression.parse(text)),
    roleForbidden: forbidden.map((text) => PermissionExpression.parse(text)),
    scopes: null,
  };
}

describe('object access', () => {
  it("builds the guard's expression with escaped subject and object", () => {
    expect(objectPermission('app.1', 'roles', 'delete', 'a.b').toString()).toBe('app%2E1.roles.delete.a%2Eb');
    expect(objectPermission('app.1', 'roles', 'delete').toString()).toBe('app%2E1.roles.delete.*');
  });

  it('decides per object id', () => {
    const h = holder(['memberships.read'], ['memberships.read.secret']);
    expect(objectDecision(h, 'memberships', 'read', 'open').allowed).toBe(true);
    expect(objectDecision(h, 'memberships', 'read', 'secret')).toMatchObject({ allowed: false, reason: 'forbidden' });
    expect(objectDecision(holder(['memberships.read.own']), 'memberships', 'read', 'other').allowed).toBe(false);
  });

  it('finds the first id its own route would refuse', () => {
    const h = holder(['roles.delete'], ['roles.delete.kept', 'roles.delete.also']);
    expect(firstDeniedObject(h, 'roles', 'delete', ['a', 'b'])).toBeUndefined();
    expect(firstDeniedObject(h, 'roles', 'delete', ['a', 'also', 'kept'])).toBe('also');
    expect(firstDeniedObject(holder(['roles.delete.a']), 'roles', 'delete', ['a', 'b'])).toBe('b');
  });

  it('lists the ids a forbidden entry denies reading, and only those', () => {
    const h = holder(
      ['users.read'],
      ['users.read.hidden', 'users.*.also', 'users.delete.not-read', 'roles.read.other-resource', 'u-bob.users.read.not-mine', 'users.read.a%2Eb', 'users.read.HIDDEN'],
    );
    expect(forbiddenObjectIds(h, 'users', 'read').sort()).toEqual(['HIDDEN', 'a.b', 'also', 'hidden'].sort());
    expect(forbiddenObjectIds(holder(['users.read']), 'users', 'read')).toEqual([]);
  });

  it('applies forbidden entries that name the holder', () => {
    const h = holder(['users.read'], ['app%2E1.users.read.mine'], 'app.1');
    expect(forbiddenObjectIds(h, 'users', 'read')).toEqual(['mine']);
  });
});
