import type { DomainError } from '../common/errors';
import { casesByOutcome } from '../../test/support/unit/cases';
import { domainErrorOf } from '../../test/support/unit/domain-error';
import { MAX_PERMISSION_LENGTH, PermissionExpression, escapePermissionSegment } from './permission-expression';

const p = (text: string): PermissionExpression => PermissionExpression.parse(text);

function expectInvalid(fn: () => unknown): DomainError {
  const domain = domainErrorOf(fn, 'InvalidPermission', 400);
  expect(domain.message.length).toBeGreaterThan(0);
  return domain;
}

describe('PermissionExpression.parse: valid input and normalization', () => {
  it.each<[string, string]>([
    // segment counts
    ['users', '*.users.*.*'],
    ['users.read', '*.users.read.*'],
    ['users.read.abc', '*.users.read.abc'],
    ['u1.users.read.abc', 'u1.users.read.abc'],
    ['*', '*.*.*.*'],
    ['*.*', '*.*.*.*'],
    ['*.*.*', '*.*.*.*'],
    ['*.*.*.*', '*.*.*.*'],
    ['users.*', '*.users.*.*'],
    ['*.read', '*.*.read.*'],
    ['users.*.abc', '*.users.*.abc'],
    // case rules: resource and action lower-cased, subject and object kept
    ['USERS.READ', '*.users.read.*'],
    ['Users.Read.ABC', '*.users.read.ABC'],
    ['Alice.UsErS.rEaD.MixedCase', 'Alice.users.read.MixedCase'],
    // allowed punctuation
    ['user-types.change-password', '*.user-types.change-password.*'],
    ['a_b.c_d.e:f', '*.a_b.c_d.e:f'],
    ['urn:x:1.users.read.id-1_2:3', 'urn:x:1.users.read.id-1_2:3'],
    ['0123.4567.89', '*.0123.4567.89'],
    // percent escapes: hex upper-cased, literal dot stays escaped
    ['users.read.a%2Eb', '*.users.read.a%2Eb'],
    ['users.read.a%2eb', '*.users.read.a%2Eb'],
    ['users.read.%2e%2E', '*.users.read.%2E%2E'],
    ['users.read.%c3%a9', '*.users.read.%C3%A9'],
    ['users.read.%2a', '*.users.read.%2A'],
    ['users.read.%25', '*.users.read.%25'],
    ['%2Ex.users.read.y', '%2Ex.users.read.y'],
    // escapes of characters that may be written literally are decoded (one spelling per value)
    ['users.read.%41bc', '*.users.read.Abc'],
    ['%55SERS.read', '*.users.read.*'],
    ['us%2Ders.read', '*.us-ers.read.*'],
    ['users.re%41d', '*.users.read.*'],
  ])('%j -> %s', (input, normalized) => {
    expect(p(input).toString()).toBe(normalized);
  });

  it('exposes the four segments', () => {
    const e = p('Bob.Users.Update.X1');
    expect([e.subject, e.resource, e.action, e.object]).toEqual(['Bob', 'users', 'update', 'X1']);
  });

  it('round-trips: parse(toString()) is equal', () => {
    for (const text of ['users', 'a.b.c', 'S.R.A.O', 'users.read.a%2eb', 'x.%c3%a9.y.z']) {
      const once = p(text);
      const twice = p(once.toString());
      expect(twice.toString()).toBe(once.toString());
      expect(twice.equals(once)).toBe(true);
    }
  });

  it('serializes to the normalized string in JSON', () => {
    expect(JSON.stringify({ permission: p('USERS.read') })).toBe('{"permission":"*.users.read.*"}');
  });

  it('is immutable', () => {
    const e = p('users.read');
    expect(Object.isFrozen(e)).toBe(true);
    expect(() => {
      (e as unknown as { resource: string }).resource = 'roles';
    }).toThrow(TypeError);
    expect(e.resource).toBe('users');
  });

  it('accepts exactly 512 characters', () => {
    const text = `a.b.c.${'x'.repeat(MAX_PERMISSION_LENGTH - 6)}`;
    expect(text).toHaveLength(512);
    expect(p(text).toString()).toBe(text);
  });
});

describe('PermissionExpression.parse: invalid input', () => {
  it.each(
    casesByOutcome({
      'an empty segment': ['', '.', '.users', 'users.', 'users..read', '....'],
      'more than four segments': ['a.users.read.b.c', '*.*.*.*.*', 'a.b.c.d.e.f.g.h'],
      'a star that is not a whole segment': ['user*.read', 'users.*x', 'users.**', 'users.read.ab*c'],
      'a broken percent escape': ['users.read.%', 'users.read.%2', 'users.read.%G1', 'users.read.%2G', 'users.read.ab%', 'users.read.%%41'],
      'white space or a control character': ['users.read abc', ' users.read', 'users.read ', 'users.\tread', 'users.read\n', 'users\r.read', 'users.read\u0000', 'users.read\u007f'],
      // é, ñ, a Greek alpha, a Cyrillic lookalike of e, fullwidth letters, a no-break space, a zero-width space, an emoji
      'a character outside ASCII': ['usérs.read', 'users.read.ñ', 'users.αread', 'usеrs.read', 'ｕｓｅｒｓ.read', 'users.read\u00a0', 'users\u200b.read', 'users.read.😀'],
      'punctuation other than - _ : %': ['users/read', 'users,read', 'users.read+1', "users.read.'1'", 'users.$where', 'users.read.[0]', 'users.read?', 'users.read#x', 'users\\.read', 'users.read;drop'],
    }),
  )('%j is invalid: %s', (text) => {
    expectInvalid(() => p(text));
    expect(PermissionExpression.tryParse(text)).toBeNull();
  });

  it('rejects 513 characters', () => {
    const text = `a.b.c.${'x'.repeat(MAX_PERMISSION_LENGTH - 5)}`;
    expect(text).toHaveLength(513);
    expectInvalid(() => p(text));
  });

  it.each<[string, string]>([
    ['one long segment', 'u'.repeat(10 * 1024)],
    ['bare percent signs', '%'.repeat(10 * 1024)],
    ['truncated escapes', `users.read.${'%2'.repeat(4000)}`],
    ['thousands of segments', 'a.'.repeat(5000)],
  ])('refuses a 10 KB string (%s) by its length, before any segment is looked at', (_label, text) => {
    // The work stays bounded because the length check comes first: each of these would otherwise
    // be refused by a segment rule (or, for the long segment, only after normalizing it).
    const test = jest.spyOn(RegExp.prototype, 'test');
    try {
      expect(expectInvalid(() => p(text)).message).toMatch(`at most ${MAX_PERMISSION_LENGTH} characters`);
      expect(PermissionExpression.tryParse(text)).toBeNull();
      expect(test).not.toHaveBeenCalled();
    } finally {
      test.mockRestore();
    }
  });

  it('rejects an input whose normalized form would exceed 512 characters', () => {
    // 508 characters as given (one segment), but normalized it becomes '*.<resource>.*.*'.
    const text = 'x'.repeat(508);
    expect(p('x'.repeat(506)).toString()).toHaveLength(512);
    expectInvalid(() => p(text));
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['number', 42],
    ['boolean', true],
    ['object', { resource: 'users' }],
    ['array', ['users', 'read']],
    ['String object', new String('users.read')],
    ['symbol', Symbol('users')],
    ['function', () => 'users.read'],
  ])('non-string input (%s) is invalid', (_label, value) => {
    expect(PermissionExpression.tryParse(value)).toBeNull();
    expectInvalid(() => PermissionExpression.parse(value as string));
  });

  it('tryParse answers an expression for valid input', () => {
    expect(PermissionExpression.tryParse('Users.Read')?.toString()).toBe('*.users.read.*');
  });
});

describe('PermissionExpression.of and withSubject', () => {
  it.each<[Parameters<typeof PermissionExpression.of>[0], string]>([
    [{}, '*.*.*.*'],
    [{ resource: 'users' }, '*.users.*.*'],
    [{ resource: 'Users', action: 'READ' }, '*.users.read.*'],
    [{ subject: 'U1', resource: 'users', action: 'update', object: 'U1' }, 'U1.users.update.U1'],
    [{ object: 'abc' }, '*.*.*.abc'],
    [{ subject: undefined, resource: 'roles' }, '*.roles.*.*'],
    [{ resource: 'users', object: 'a%2eb' }, '*.users.*.a%2Eb'],
  ])('of(%j) -> %s', (parts, normalized) => {
    expect(PermissionExpression.of(parts).toString()).toBe(normalized);
  });

  it.each<[string, Parameters<typeof PermissionExpression.of>[0]]>([
    ['empty resource', { resource: '' }],
    ['dot in object', { resource: 'users', object: 'a.b' }],
    ['partial wildcard', { resource: 'user*' }],
    ['whitespace', { subject: ' u1' }],
    ['unicode', { action: 'lésen' }],
    ['bad escape', { object: '%zz' }],
    ['too long', { resource: 'users', object: 'x'.repeat(MAX_PERMISSION_LENGTH) }],
    ['non-string at runtime', { resource: 7 as unknown as string }],
  ])('of rejects %s', (_label, parts) => {
    expectInvalid(() => PermissionExpression.of(parts));
  });

  it('withSubject replaces only the subject and keeps the original unchanged', () => {
    const e = p('users.read.abc');
    const bound = e.withSubject('Alice');
    expect(bound.toString()).toBe('Alice.users.read.abc');
    expect(e.toString()).toBe('*.users.read.abc');
    expect(bound.withSubject('*').toString()).toBe('*.users.read.abc');
  });

  it.each([[''], ['a.b'], ['a b'], ['al*']])('withSubject(%j) is invalid', (subject) => {
    expectInvalid(() => p('users.read').withSubject(subject));
  });
});

describe('PermissionExpression.covers', () => {
  it.each<[string, string, boolean]>([
    // the contract's examples
    ['users.read', 'users.read.abc', true],
    ['users.read.abc', 'users.read', false],
    ['users.read', 'users.*', false],
    // identity and full wildcard
    ['users.read', 'users.read', true],
    ['*', 'u1.users.read.abc', true],
    ['*', '*', true],
    ['*.*.*.*', 'users', true],
    // a '*' in the required one needs a '*'
    ['users', 'users.read', true],
    ['users.read.abc', 'users.read.*', false],
    ['u1.users.read.*', 'users.read', false],
    ['users.read', 'u1.users.read.*', true],
    ['users.*.abc', 'users.delete.abc', true],
    ['users.*.abc', 'users.delete.xyz', false],
    ['*.read', 'roles.read', true],
    ['*.read', 'roles.update', false],
    // subject and object exact, resource and action case-insensitive
    ['USERS.READ', 'users.read', true],
    ['users.read', 'Users.Read', true],
    ['users.read.ABC', 'users.read.abc', false],
    ['Alice.users.read.*', 'alice.users.read.*', false],
    ['alice.users.read.*', 'alice.users.read.x', true],
    // different segments
    ['users.read', 'roles.read', false],
    ['users.read', 'users.update', false],
    ['bob.users.read.*', 'alice.users.read.*', false],
    // escapes: compare normalized, and an escaped star is a literal, not a wildcard
    ['users.read.a%2eb', 'users.read.a%2Eb', true],
    ['users.read.%41', 'users.read.A', true],
    ['users.read.%2A', 'users.read.abc', false],
    ['users.read.%2A', 'users.read.*', false],
    ['users.read', 'users.read.%2A', true],
    ['users.read.a%2Eb', 'users.read.a', false],
  ])('%s covers %s: %s', (have, need, expected) => {
    expect(p(have).covers(p(need))).toBe(expected);
  });
});

describe('escapePermissionSegment', () => {
  it.each<[string, string]>([
    // what a segment may hold stays as it is
    ['abc-1_2:3', 'abc-1_2:3'], ['', ''],
    // anything else is percent-escaped as UTF-8, hex upper-cased: a dot or a star would change the meaning
    ['a.b', 'a%2Eb'], ['*', '%2A'], ['%', '%25'], ['a b', 'a%20b'], ['é', '%C3%A9'],
  ])('%j -> %j', (value, escaped) => {
    expect(escapePermissionSegment(value)).toBe(escaped);
  });

  it('produces segments that parse and keep their value distinct', () => {
    const object = escapePermissionSegment('a.b*c');
    const e = PermissionExpression.of({ resource: 'users', action: 'read', object });
    expect(e.object).toBe('a%2Eb%2Ac');
    expect(e.covers(PermissionExpression.of({ resource: 'users', action: 'read', object: 'abc' }))).toBe(false);
  });
});
