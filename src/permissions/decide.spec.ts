import { HELD_ALIKE_AS_GRANT_AND_SCOPE, holder, HOLDER_ID, itAnswersHolding, OTHER_ID, type HolderSpec } from '../../test/support/unit/permission-holder';
import { Decision, DecisionReason, OWN_RECORD_ACTIONS, PermissionHolder, decide, holdsScope, isScopeSubset } from './decide';
import { PermissionExpression } from './permission-expression';
import * as publicApi from './index';

const ALICE = HOLDER_ID;
const BOB = OTHER_ID;
const APP = 'app-1';

const p = (text: string): PermissionExpression => PermissionExpression.parse(text);
const list = (...texts: string[]): PermissionExpression[] => texts.map(p);

/** What a request by `h` needs: `<caller id>.<resource>.<action>.<object>`. */
const need = (h: PermissionHolder, resource: string, action: string, object = '*'): PermissionExpression =>
  PermissionExpression.of({ subject: h.id, resource, action, object });

describe('decide', () => {
  it.each<[string, HolderSpec, [string, string, string?], boolean, DecisionReason]>([
    // role permission
    ['role grants', { role: ['users.read'] }, ['users', 'read'], true, 'role_permission'],
    ['role wildcard grants any object', { role: ['users.read'] }, ['users', 'read', 'x1'], true, 'role_permission'],
    ['role resource wildcard', { role: ['users'] }, ['users', 'delete', 'x1'], true, 'role_permission'],
    ['role full wildcard', { role: ['*'] }, ['roles', 'create'], true, 'role_permission'],
    ['role case-insensitive', { role: ['USERS.Read'] }, ['users', 'read'], true, 'role_permission'],
    ['role wins over own when both grant', { role: ['users.read'], own: ['users.read'] }, ['users', 'read'], true, 'role_permission'],
    ['role object-limited does not cover another object', { role: ['users.read.x1'] }, ['users', 'read', 'x2'], false, 'no_permission'],
    ['role object-limited does not cover a list (object *)', { role: ['users.read.x1'] }, ['users', 'read'], false, 'no_permission'],
    ['role permission with another subject does not apply', { role: [`${BOB}.users.read.*`] }, ['users', 'read'], false, 'no_permission'],
    ['role permission with own subject applies', { role: [`${ALICE}.users.read.*`] }, ['users', 'read'], true, 'role_permission'],
    // own permission
    ['own grants', { own: ['roles.update'] }, ['roles', 'update', 'r1'], true, 'own_permission'],
    ['own grants when role does not', { role: ['users.read'], own: ['roles.read'] }, ['roles', 'read'], true, 'own_permission'],
    ['user without role has only own lists', { own: ['events.read'] }, ['events', 'read'], true, 'own_permission'],
    ['user without role and no own permission', {}, ['events', 'read'], false, 'no_permission'],
    // no permission
    ['other resource', { role: ['users.read'] }, ['roles', 'read'], false, 'no_permission'],
    ['other action', { role: ['users.read'] }, ['users', 'delete'], false, 'no_permission'],
    // forbidden beats everything
    ['role forbidden beats role permission', { role: ['users'], roleForbidden: ['users.delete'] }, ['users', 'delete', 'x1'], false, 'forbidden'],
    ['own forbidden beats role permission', { role: ['*'], ownForbidden: ['tokens.read'] }, ['tokens', 'read'], false, 'forbidden'],
    ['role forbidden beats own permission', { own: ['users.update'], roleForbidden: ['users.update'] }, ['users', 'update', 'x1'], false, 'forbidden'],
    ['own forbidden beats own permission', { own: ['users'], ownForbidden: ['users.update'] }, ['users', 'update'], false, 'forbidden'],
    ['forbidden beats own record read', { ownForbidden: ['users.read'] }, ['users', 'read', ALICE], false, 'forbidden'],
    ['forbidden beats own record change-password', { roleForbidden: ['users.change-password'] }, ['users', 'change-password', ALICE], false, 'forbidden'],
    ['forbidden without any permission still says forbidden', { ownForbidden: ['*'] }, ['users', 'read'], false, 'forbidden'],
    ['forbidden case-insensitive', { role: ['*'], ownForbidden: ['USERS.DELETE'] }, ['users', 'delete', 'x1'], false, 'forbidden'],
    ['forbidden on one object leaves other objects', { role: ['users'], ownForbidden: ['users.delete.x1'] }, ['users', 'delete', 'x2'], true, 'role_permission'],
    ['forbidden for another subject does not apply', { role: ['users'], ownForbidden: [`${BOB}.users.delete.*`] }, ['users', 'delete'], true, 'role_permission'],
    ['forbidden for own subject applies', { role: ['users'], ownForbidden: [`${ALICE}.users.delete.*`] }, ['users', 'delete'], false, 'forbidden'],
    // own record
    ['own record read', {}, ['users', 'read', ALICE], true, 'own_record'],
    ['own record update', {}, ['users', 'update', ALICE], true, 'own_record'],
    ['own record change-password', {}, ['users', 'change-password', ALICE], true, 'own_record'],
    ['own record action case-insensitive', {}, ['users', 'Change-Password', ALICE], true, 'own_record'],
    ['own record not for delete', {}, ['users', 'delete', ALICE], false, 'no_permission'],
    ['own record not for activate', {}, ['users', 'activate', ALICE], false, 'no_permission'],
    ['own record not for another user', {}, ['users', 'read', BOB], false, 'no_permission'],
    ['own record not for a list', {}, ['users', 'read'], false, 'no_permission'],
    ['own record only on users', {}, ['roles', 'read', ALICE], false, 'no_permission'],
    ['role permission reported before own record', { role: ['users.read'] }, ['users', 'read', ALICE], true, 'role_permission'],
    ['own permission reported before own record', { own: ['users.update'] }, ['users', 'update', ALICE], true, 'own_permission'],
  ])('%s', (_label, spec, [resource, action, object], allowed, reason) => {
    const h = holder(spec);
    const required = need(h, resource, action, object);
    const expected: Decision = { allowed, reason, permission: required.toString() };
    expect(decide(h, required)).toEqual(expected);
  });

  it('reports the normalized required expression', () => {
    const h = holder({ role: ['users'] });
    expect(decide(h, p(`${ALICE}.USERS.Read.X%2e1`)).permission).toBe(`${ALICE}.users.read.X%2E1`);
  });

  it('own record needs the subject to be the holder', () => {
    const h = holder();
    expect(decide(h, p(`*.users.read.${ALICE}`))).toMatchObject({ allowed: false, reason: 'no_permission' });
    expect(decide(h, p(`${BOB}.users.read.${ALICE}`))).toMatchObject({ allowed: false, reason: 'no_permission' });
  });

  it('own record compares ids exactly (case-sensitive)', () => {
    const h = holder({ id: 'User-1' });
    expect(decide(h, p('User-1.users.read.User-1')).reason).toBe('own_record');
    expect(decide(h, p('User-1.users.read.user-1')).reason).toBe('no_permission');
  });

  describe('applications', () => {
    it('never get own_record, even on their own id', () => {
      const app = holder({ id: APP, kind: 'application' });
      for (const action of OWN_RECORD_ACTIONS) {
        expect(decide(app, need(app, 'users', action, APP))).toMatchObject({ allowed: false, reason: 'no_permission' });
      }
    });

    it('are granted by role and own permissions and denied by forbidden', () => {
      const app = holder({ id: APP, kind: 'application', role: ['users.read'], own: ['roles.read'], ownForbidden: ['users.read.secret'] });
      expect(decide(app, need(app, 'users', 'read', 'x1')).reason).toBe('role_permission');
      expect(decide(app, need(app, 'roles', 'read')).reason).toBe('own_permission');
      expect(decide(app, need(app, 'users', 'read', 'secret')).reason).toBe('forbidden');
    });
  });

  describe('scoped tokens', () => {
    it.each<[string, HolderSpec, [string, string, string?], boolean, DecisionReason]>([
      ['scope within role permission allows', { role: ['users'], scopes: ['users.read'] }, ['users', 'read', 'x1'], true, 'role_permission'],
      ['scope within own permission allows', { own: ['roles'], scopes: ['roles.read'] }, ['roles', 'read'], true, 'own_permission'],
      ['action outside scope is denied', { role: ['users'], scopes: ['users.read'] }, ['users', 'delete', 'x1'], false, 'scope'],
      ['resource outside scope is denied', { role: ['*'], scopes: ['users.read'] }, ['roles', 'read'], false, 'scope'],
      ['object-limited scope denies other objects', { role: ['users'], scopes: ['users.read.x1'] }, ['users', 'read', 'x2'], false, 'scope'],
      ['object-limited scope denies a list', { role: ['users'], scopes: ['users.read.x1'] }, ['users', 'read'], false, 'scope'],
      ['object-limited scope allows its object', { role: ['users'], scopes: ['users.read.x1'] }, ['users', 'read', 'x1'], true, 'role_permission'],
      ['one of several scopes suffices', { role: ['*'], scopes: ['users.read', 'roles.read'] }, ['roles', 'read'], true, 'role_permission'],
      ['scopes never grant', { scopes: ['users.read'] }, ['users', 'read'], false, 'no_permission'],
      ['scopes never grant: wildcard scope', { scopes: ['*'] }, ['roles', 'delete'], false, 'no_permission'],
      ['forbidden reported before scope', { role: ['*'], ownForbidden: ['users.delete'], scopes: ['roles.read'] }, ['users', 'delete'], false, 'forbidden'],
      ['own record limited by scope', { scopes: ['roles.read'] }, ['users', 'read', ALICE], false, 'scope'],
      ['own record allowed within scope', { scopes: ['users.read'] }, ['users', 'read', ALICE], true, 'own_record'],
      ['empty scope list denies everything', { role: ['*'], scopes: [] }, ['users', 'read'], false, 'scope'],
      ['null scopes means not scoped', { role: ['*'], scopes: null }, ['users', 'read'], true, 'role_permission'],
      ['scope naming the holder acts', { role: ['*'], scopes: [`${ALICE}.users.read.*`] }, ['users', 'read'], true, 'role_permission'],
      ['scope naming another subject does not act', { role: ['*'], scopes: [`${BOB}.users.read.*`] }, ['users', 'read'], false, 'scope'],
    ])('%s', (_label, spec, [resource, action, object], allowed, reason) => {
      const h = holder(spec);
      expect(decide(h, need(h, resource, action, object))).toMatchObject({ allowed, reason });
    });

    it('a scope acts only for its own holder (subject * is the holder)', () => {
      const h = holder({ role: ['*'], scopes: ['users.read'] });
      // A required expression for another subject is not covered by the holder's scope.
      expect(decide(h, p(`${BOB}.users.read.*`))).toMatchObject({ allowed: false, reason: 'scope' });
      expect(decide(h, p(`${ALICE}.users.read.*`))).toMatchObject({ allowed: true, reason: 'role_permission' });
    });
  });
});

describe('holdsScope', () => {
  itAnswersHolding(holdsScope, [
    ...HELD_ALIKE_AS_GRANT_AND_SCOPE,
    ['covered by role permission', { role: ['users'] }, 'users.read', true],
    ['covered by own permission', { own: ['users.read'] }, 'users.read.x1', true],
    ['wider than the permission', { role: ['users.read'] }, 'users', false],
    ['list not held by one object', { role: ['users.read.x1'] }, 'users.read', false],
    ['own record does not make a scope held', {}, `users.read.${ALICE}`, false],
    ['forbidden covering the scope', { role: ['*'], ownForbidden: ['users.read'] }, 'users.read', false],
    ['role forbidden covering the scope', { role: ['*'], roleForbidden: ['users'] }, 'users.read.x1', false],
    ['forbidden for one object does not cover the wider scope', { role: ['*'], ownForbidden: ['users.read.x1'] }, 'users.read', true],
    ['forbidden on the holder subject', { role: ['*'], ownForbidden: [`${ALICE}.users.read.*`] }, 'users.read', false],
    ['forbidden on another subject', { role: ['*'], ownForbidden: [`${BOB}.users.read.*`] }, 'users.read', true],
    ['scope naming the holder', { role: ['users'] }, `${ALICE}.users.read.*`, true],
    ['scope naming another subject', { role: ['*'] }, `${BOB}.users.read.*`, false],
    // narrowing from a scoped token
    ['within current scopes', { role: ['*'], scopes: ['users.read'] }, 'users.read.x1', true],
    ['same as current scope', { role: ['*'], scopes: ['users.read'] }, 'users.read', true],
    ['current scopes empty', { role: ['*'], scopes: [] }, 'users.read', false],
    ['within scopes but not permitted', { role: ['roles'], scopes: ['users'] }, 'users.read', false],
    ['explicit holder subject equals *', { role: ['*'], scopes: [`${ALICE}.users.read.*`] }, 'users.read.x1', true],
  ]);

  it('applications hold scopes by their permissions too', () => {
    const app = holder({ id: APP, kind: 'application', role: ['users.read'] });
    expect(holdsScope(app, p('users.read'))).toBe(true);
    expect(holdsScope(app, p('users.update'))).toBe(false);
  });
});

describe('isScopeSubset', () => {
  it.each<[string[], string[], boolean]>([
    // the contract's examples
    [['users.read.abc'], ['users.read'], true],
    [['users.*'], ['users.read'], false],
    // more
    [['users.read'], ['users.read'], true],
    [['users.read', 'roles.read'], ['users', 'roles.read'], true],
    [['users.read', 'roles.update'], ['users', 'roles.read'], false],
    [['users.read'], ['users.read.abc'], false],
    [['users.read'], ['*'], true],
    [['*'], ['users'], false],
    [['USERS.READ'], ['users.read'], true],
    [['users.read.ABC'], ['users.read.abc'], false],
    [['users.read'], [], false],
    [[], ['users.read'], true],
    [['users.read.x1', 'users.read.x2'], ['users.read.x1'], false],
  ])('%j within %j: %s', (requested, current, expected) => {
    expect(isScopeSubset(list(...requested), list(...current))).toBe(expected);
  });
});

describe('public API', () => {
  it('re-exports the module from index', () => {
    expect(publicApi.PermissionExpression).toBe(PermissionExpression);
    expect(publicApi.decide).toBe(decide);
    expect(publicApi.holdsScope).toBe(holdsScope);
    expect(publicApi.isScopeSubset).toBe(isScopeSubset);
    expect(publicApi.OWN_RECORD_ACTIONS).toEqual(['read', 'update', 'change-password']);
  });

  it('OWN_RECORD_ACTIONS cannot be changed at run time', () => {
    expect(Object.isFrozen(OWN_RECORD_ACTIONS)).toBe(true);
  });
});
