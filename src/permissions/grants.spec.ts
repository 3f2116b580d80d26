import { casesByOutcome } from '../../test/support/unit/cases';
import { domainErrorOf } from '../../test/support/unit/domain-error';
import { HELD_ALIKE_AS_GRANT_AND_SCOPE, holder, HOLDER_ID, itAnswersHolding, OTHER_ID, type HolderSpec } from '../../test/support/unit/permission-holder';
import type { PermissionHolder } from './decide';
import { assertHoldsGrants, grantedBy, grantedByAssignment, holdsGrant, segmentsOverlap, type Assignment } from './grants';
import { PermissionExpression } from './permission-expression';

const ALICE = HOLDER_ID;
const BOB = OTHER_ID;
const p = (text: string): PermissionExpression => PermissionExpression.parse(text);
const list = (...texts: string[]): PermissionExpression[] => texts.map(p);
const texts = (expressions: readonly PermissionExpression[]): string[] => expressions.map(String);

describe('holdsGrant', () => {
  itAnswersHolding((h, granted) => holdsGrant({ holder: h }, granted), [
    ...HELD_ALIKE_AS_GRANT_AND_SCOPE,
    // coverage is the matcher's: wildcard-aware
    ['a narrower object (the contract example)', { role: ['users.read'] }, 'users.read.abc', true],
    ['a wider object', { role: ['users.read.abc'] }, 'users.read', false],
    ['another resource', { role: ['users.read'] }, 'events.read', false],
    ['everything, held as *', { role: ['*'] }, '*', true],
    ['everything, held as a list of resources', { role: ['users.*', 'roles.*'] }, '*', false],
    ['case-insensitive resource and action', { role: ['USERS.Read'] }, 'users.READ.abc', true],
    ['own permissions count', { own: ['events.read'] }, 'events.read', true],
    // the granted subject names the grantee: what matters is what the holder itself may do
    ['granted to a named subject', { role: ['users.read'] }, `${BOB}.users.read.*`, true],
    // forbidden entries: the effective permissions are the permissions minus the forbidden ones
    ['forbidden exactly', { role: ['users'], ownForbidden: ['users.read'] }, 'users.read', false],
    ['forbidden wider', { role: ['users'], roleForbidden: ['users'] }, 'users.read.abc', false],
    ['forbidden on one object denies the whole action', { role: ['users.read'], ownForbidden: ['users.read.x1'] }, 'users.read', false],
    ['forbidden on one object denies that object', { role: ['users.read'], ownForbidden: ['users.read.x1'] }, 'users.read.x1', false],
    ['forbidden on one object leaves another object', { role: ['users.read'], ownForbidden: ['users.read.x1'] }, 'users.read.x2', true],
    ['forbidden on another action', { role: ['users'], ownForbidden: ['users.delete'] }, 'users.read', true],
    ['forbidden action denies the wildcard action', { role: ['users'], ownForbidden: ['users.delete'] }, 'users.*', false],
    ['forbidden for another subject does not apply', { role: ['users'], ownForbidden: [`${BOB}.users.read.*`] }, 'users.read', true],
    ['forbidden for the holder applies', { role: ['users'], ownForbidden: [`${ALICE}.users.read.*`] }, 'users.read', false],
    // scopes of the token
    ['within the scopes', { role: ['*'], scopes: ['users.read'] }, 'users.read.abc', true],
    ['scopes never grant', { scopes: ['users.read'] }, 'users.read', false],
    ['scope naming the holder', { role: ['*'], scopes: [`${ALICE}.users.read.*`] }, 'users.read', true],
    ['scope naming another subject', { role: ['*'], scopes: [`${BOB}.users.read.*`] }, 'users.read', false],
  ]);

  it('agrees with the matcher on coverage for a holder without forbidden entries or scopes', () => {
    const expressions = ['*', 'users', 'users.read', 'users.read.abc', 'users.*', 'users.*.abc', 'roles.read', `${ALICE}.users.read.*`];
    for (const have of expressions) {
      for (const granted of expressions) {
        const asHolder = p(granted).withSubject(ALICE);
        expect(holdsGrant({ holder: holder({ role: [have] }) }, p(granted))).toBe(p(have).covers(asHolder));
      }
    }
  });

  describe('resources granted without holding them (the admin role and third-party APIs)', () => {
    const foreign = (resource: string): boolean => resource === 'orders';
    /** The grantor: a role over users, with what a row adds to it. */
    const usersAdmin = (extra: HolderSpec): PermissionHolder => holder({ role: ['users.*'], ...extra });
    it.each<[string, HolderSpec, string, boolean]>([
      ['a foreign resource', {}, 'orders.read', true],
      ['a foreign resource, any action and object', {}, 'orders', true],
      ['a service resource still needs a permission', {}, 'roles.read', false],
      ['every resource is never granted unheld', {}, '*', false],
      ['every resource for one action is never granted unheld', {}, '*.read', false],
      ['forbidden entries still apply', { ownForbidden: ['orders.delete'] }, 'orders', false],
      ['scopes still apply', { scopes: ['users.read'] }, 'orders.read', false],
    ])('%s', (_label, extra, granted, expected) => {
      expect(holdsGrant({ holder: usersAdmin(extra), grantsUnheld: foreign }, p(granted))).toBe(expected);
    });
  });

  it('never counts the own-record rule as a held permission', () => {
    expect(holdsGrant({ holder: holder() }, p(`users.update.${ALICE}`))).toBe(false);
  });
});

describe('segmentsOverlap', () => {
  const pairs = casesByOutcome({
    overlap: [['users.read', 'users.read.x1'], ['users.read.x1', 'users.read'], ['users.*', 'users.read'], ['*', 'a.b.c.d']],
    // another object, resource or subject
    disjoint: [['users.read.x1', 'users.read.x2'], ['users.read', 'roles.read'], [`${ALICE}.users.read.*`, `${BOB}.users.read.*`]],
  });
  it.each(pairs.map(([[a, b], outcome]) => [a, b, outcome === 'overlap'] as const))('%s and %s: %s', (a, b, expected) => {
    expect(segmentsOverlap(p(a), p(b))).toBe(expected);
    expect(segmentsOverlap(p(b), p(a))).toBe(expected);
  });
});

describe('grantedBy', () => {
  it('counts every permission of a create', () => {
    expect(texts(grantedBy(null, { permissions: list('users.read', 'roles'), forbidden: list('events') }))).toEqual(['*.users.read.*', '*.roles.*.*']);
  });

  it('counts added permissions and removed forbidden entries only', () => {
    const before = { permissions: list('users.read', 'events.read'), forbidden: list('tokens.read', 'users.delete') };
    const after = { permissions: list('USERS.read', 'roles.read'), forbidden: list('users.delete', 'webhooks') };
    expect(texts(grantedBy(before, after))).toEqual(['*.roles.read.*', '*.tokens.read.*']);
  });

  it('grants nothing when only removing permissions, adding forbidden entries or reordering', () => {
    const before = { permissions: list('users.read', 'events.read'), forbidden: list('tokens.read') };
    expect(grantedBy(before, { permissions: list('events.read'), forbidden: list('tokens.read', 'users') })).toEqual([]);
    expect(grantedBy(before, { permissions: list('events.read', 'users.read'), forbidden: list('tokens.read') })).toEqual([]);
  });
});

describe('grantedByAssignment', () => {
  const role = (slug: string, permissions: string[], forbidden: string[] = []): Assignment['role'] => ({ slug, permissions: list(...permissions), forbidden: list(...forbidden) });
  const assignment = (r: Assignment['role'], permissions: string[] = [], forbidden: string[] = []): Assignment => ({ role: r, permissions: list(...permissions), forbidden: list(...forbidden) });

  it("counts each permission of an assigned role, even one the grantee has otherwise", () => {
    const before = assignment(null, ['users.read']);
    const after = assignment(role('readers', ['users.read', 'events.read']), ['users.read']);
    expect(texts(grantedByAssignment(before, after))).toEqual(['*.users.read.*', '*.events.read.*']);
    expect(texts(grantedByAssignment(null, after))).toEqual(['*.users.read.*', '*.events.read.*']);
  });

  it('counts nothing of a role that stays', () => {
    const readers = role('readers', ['users.read', 'events.read'], ['events.read.x']);
    expect(grantedByAssignment(assignment(readers), assignment(readers, [], ['tokens']))).toEqual([]);
  });

  it("counts the former role's forbidden entries the grantee loses", () => {
    const guarded = role('guarded', ['users'], ['users.delete']);
    const plain = role('plain', []);
    expect(texts(grantedByAssignment(assignment(guarded, ['users.delete']), assignment(plain, ['users.delete'])))).toEqual(['*.users.delete.*']);
    expect(grantedByAssignment(assignment(guarded), assignment(plain, [], ['users.delete']))).toEqual([]);
  });

  it('counts own forbidden entries removed', () => {
    expect(texts(grantedByAssignment(assignment(null, ['events.read'], ['events.read']), assignment(null, ['events.read'])))).toEqual(['*.events.read.*']);
  });
});

describe('assertHoldsGrants', () => {
  it('answers 403 AccessDenied naming the first expression not held', () => {
    const error = domainErrorOf(() => assertHoldsGrants({ holder: holder({ role: ['users.read'] }) }, list('users.read.abc', 'events.read', 'roles')), 'AccessDenied', 403);
    expect(error.message).toContain('*.events.read.*');
  });

  it('passes when everything is held, and for nothing granted', () => {
    expect(() => assertHoldsGrants({ holder: holder({ role: ['users'] }) }, list('users.read', 'users.delete.x'))).not.toThrow();
    expect(() => assertHoldsGrants({ holder: holder() }, [])).not.toThrow();
  });
});
