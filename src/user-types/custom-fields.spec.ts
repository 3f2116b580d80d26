import type { FieldError } from '../common/errors';
import { domainErrorOf } from '../../test/support/unit/domain-error';
import {
  CUSTOM_FIELD_LIMITS,
  parsePropertyDefinitions,
  propertyNameProblem,
  requiredWithoutDefault,
  validateCustomFields,
  type CustomFieldSchema,
  type PropertyDefinitions,
} from './custom-fields';

/** Runs fn, expects a 400 ModelValidationError, answers its field errors. */
function errorsOf(fn: () => unknown): FieldError[] {
  const error = domainErrorOf(fn, 'ModelValidationError', 400);
  expect(error.message.length).toBeLessThan(1000);
  return error.errors ?? [];
}

function fieldsOf(fn: () => unknown): string[] {
  return errorsOf(fn).map((e) => e.field);
}

function schema(properties: Record<string, unknown>, allowAdditionalProperties = false): CustomFieldSchema {
  return { typeSlug: 'employee', properties: parsePropertyDefinitions(properties), allowAdditionalProperties };
}

function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { inner: value };
  return value;
}

describe('propertyNameProblem', () => {
  it.each(['department', 'employeeNo', 'a', 'x_1', 'A'.repeat(64)])('accepts %j', (name) => {
    expect(propertyNameProblem(name)).toBeUndefined();
  });

  it.each([
    [''],
    ['1abc'],
    ['_id'],
    ['__proto__'],
    ['a.b'],
    ['a-b'],
    ['a b'],
    ['$where'],
    ['A'.repeat(65)],
    ['ünicode'],
  ])('refuses the malformed name %j', (name) => {
    expect(propertyNameProblem(name)).toMatch(/not a valid property name/);
  });

  it.each(['username', 'Email_Address', 'role', 'user_type', 'permissions', 'forbidden', 'is_active', 'sys', 'membership_id', 'password', 'id'])(
    'refuses the built-in field %j (case-insensitively)',
    (name) => {
      expect(propertyNameProblem(name)).toMatch(/built-in/);
    },
  );

  it.each(['token', 'secret', 'Secret_Key', 'reset_token', 'api_key', 'new_password', 'constructor', 'prototype'])('refuses the reserved name %j', (name) => {
    expect(propertyNameProblem(name)).toMatch(/reserved/);
  });
});

describe('parsePropertyDefinitions', () => {
  it('normalizes definitions: required and unique default to false', () => {
    expect(
      parsePropertyDefinitions({
        department: { type: 'enum', values: ['sales', 'it'], required: true },
        employee_no: { type: 'integer', unique: true },
        nickname: { type: 'string', default: 'none', description: 'what friends say' },
      }),
    ).toEqual({
      department: { type: 'enum', values: ['sales', 'it'], required: true, unique: false },
      employee_no: { type: 'integer', required: false, unique: true },
      nickname: { type: 'string', required: false, unique: false, default: 'none', description: 'what friends say' },
    });
  });

  it('accepts every type', () => {
    const all = parsePropertyDefinitions({
      s: { type: 'string' },
      i: { type: 'integer' },
      n: { type: 'number' },
      b: { type: 'boolean' },
      d: { type: 'date' },
      e: { type: 'email' },
      u: { type: 'uri' },
      en: { type: 'enum', values: [1, 'two'] },
      o: { type: 'object' },
      a: { type: 'array' },
    });
    expect(Object.keys(all)).toHaveLength(10);
  });

  it('accepts an empty object', () => {
    expect(parsePropertyDefinitions({})).toEqual({});
  });

  it.each([[null], [[]], ['x'], [5]])('refuses properties that are not an object: %j', (input) => {
    expect(fieldsOf(() => parsePropertyDefinitions(input))).toEqual(['properties']);
  });

  it('refuses more than the maximum number of properties', () => {
    const many = Object.fromEntries(Array.from({ length: CUSTOM_FIELD_LIMITS.maxProperties + 1 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(errorsOf(() => parsePropertyDefinitions(many))[0].message).toMatch(/at most 100/);
  });

  it('names each problem with its path', () => {
    const errors = errorsOf(() =>
      parsePropertyDefinitions({
        a: { type: 'text' },
        b: { type: 'enum' },
        c: { type: 'enum', values: [] },
        d: { type: 'string', values: ['x'] },
        e: { type: 'integer', default: 'seven' },
        f: { type: 'boolean', unique: true },
        g: { type: 'string', required: 'yes' },
        h: { type: 'string', min: 3 },
        i: 'string',
        username: { type: 'string' },
        'bad name': { type: 'string' },
        j: { type: 'enum', values: ['x', 'x'] },
        k: { type: 'email', default: 'not an address' },
        l: { type: 'string', unique: true, default: 'x' },
        m: { type: 'string', default: null },
        n: { type: 'enum', values: ['a', 'b'], default: 'c' },
        o: { type: 'object', default: [] },
        p: { type: 'enum', values: [{}] },
      }),
    );
    expect(errors.map((e) => e.field)).toEqual([
      'properties.a.type',
      'properties.b.values',
      'properties.c.values',
      'properties.d.values',
      'properties.e.default',
      'properties.f.unique',
      'properties.g.required',
      'properties.h.min',
      'properties.i',
      'properties.username',
      'properties.bad name',
      'properties.j.values',
      'properties.k.default',
      'properties.l.default',
      'properties.m.default',
      'properties.n.default',
      'properties.o.default',
      'properties.p.values',
    ]);
    expect(errors[0].message).toMatch(/must be one of string, integer/);
    expect(errors[4].message).toMatch(/does not match the property: must be an integer/);
  });

  it('refuses a __proto__ property and does not touch any prototype', () => {
    const input = JSON.parse('{"__proto__": {"type": "string"}}') as unknown;
    expect(fieldsOf(() => parsePropertyDefinitions(input))).toEqual(['properties.__proto__']);
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });

  it('cuts long names short in error fields', () => {
    const long = 'x'.repeat(10_000);
    const [error] = errorsOf(() => parsePropertyDefinitions({ [long]: { type: 'string' } }));
    expect(error.field.length).toBeLessThan(100);
  });

  it('lower-cases an e-mail default', () => {
    expect(parsePropertyDefinitions({ contact: { type: 'email', default: 'Boss@Example.COM' } }).contact.default).toBe('boss@example.com');
  });
});

describe('requiredWithoutDefault', () => {
  it('names exactly the required properties without a default: what validateCustomFields({}) refuses', () => {
    const properties = parsePropertyDefinitions({
      badge: { type: 'string', required: true },
      team: { type: 'string', required: true, default: 'blue' },
      note: { type: 'string' },
      level: { type: 'integer', required: true },
    });
    expect(requiredWithoutDefault(properties)).toEqual(['badge', 'level']);
    const refused = errorsOf(() => validateCustomFields({}, { typeSlug: 't', properties, allowAdditionalProperties: false }));
    expect(refused.map((error) => error.field)).toEqual(['badge', 'level']);
    expect(requiredWithoutDefault(parsePropertyDefinitions({ team: { type: 'string', required: true, default: 'blue' } }))).toEqual([]);
  });
});

describe('validateCustomFields', () => {
  const employee = schema({
    department: { type: 'enum', values: ['sales', 'it'], required: true },
    employee_no: { type: 'integer', unique: true },
    salary: { type: 'number' },
    remote: { type: 'boolean', default: false },
    born: { type: 'date' },
    contact: { type: 'email', unique: true },
    homepage: { type: 'uri' },
    nickname: { type: 'string' },
    address: { type: 'object' },
    tags: { type: 'array' },
  });

  it('accepts valid values, fills defaults and reports unique values', () => {
    const given = {
      department: 'it',
      employee_no: 7,
      salary: 1234.5,
      born: '1990-02-28',
      contact: 'Ada@Example.com',
      homepage: 'https://example.com/ada',
      nickname: 'ada',
      address: { city: 'Oslo', lines: ['a', 'b'] },
      tags: ['x', 1, { y: true }],
    };
    const result = validateCustomFields(given, employee);
    // As given, but with the default of `remote` filled in and the e-mail address lower-cased.
    expect(result.values).toEqual({ ...given, remote: false, contact: 'ada@example.com' });
    expect(result.unique).toEqual([
      { name: 'employee_no', value: 7 },
      { name: 'contact', value: 'ada@example.com' },
    ]);
  });

  it('requires required properties, counting null as absent', () => {
    expect(errorsOf(() => validateCustomFields({}, employee))).toEqual([{ field: 'department', message: 'is required' }]);
    expect(fieldsOf(() => validateCustomFields({ department: null }, employee))).toEqual(['department']);
  });

  it('drops null values of optional properties and keeps a given value over the default', () => {
    const result = validateCustomFields({ department: 'sales', nickname: null, remote: true }, employee);
    expect(result.values).toEqual({ department: 'sales', remote: true });
    expect(result.unique).toEqual([]);
  });

  it.each([
    ['department', 'hr', /must be one of "sales", "it"/],
    ['department', 1, /must be one of/],
    ['employee_no', 1.5, /must be an integer/],
    ['employee_no', '7', /must be an integer/],
    ['employee_no', 2 ** 53, /must be an integer/],
    ['salary', '12', /must be a number/],
    ['remote', 'true', /must be true or false/],
    ['born', '1990-02-30', /ISO 8601/],
    ['born', '1990-01-01T10:00:00', /ISO 8601/],
    ['born', 19900101, /ISO 8601/],
    ['contact', 'not-an-address', /e-mail/],
    ['contact', `${'a'.repeat(250)}@example.com`, /e-mail/],
    ['homepage', 'ftp://example.com/file', /http or https/],
    ['homepage', 'javascript:alert(1)', /http or https/],
    ['homepage', 'example.com', /http or https/],
    ['homepage', 'https://exa mple.com', /http or https/],
    ['homepage', `https://example.com/${'a'.repeat(2100)}`, /http or https/],
    ['nickname', 5, /must be a string/],
    ['nickname', 'x'.repeat(CUSTOM_FIELD_LIMITS.maxStringLength + 1), /at most 4096/],
    ['address', [], /must be a JSON object/],
    ['address', 'Oslo', /must be a JSON object/],
    ['tags', {}, /must be an array/],
  ])('refuses a bad %s (case %#)', (field, value, message) => {
    const errors = errorsOf(() => validateCustomFields({ department: 'it', [field]: value }, employee));
    expect(errors).toEqual([{ field, message: expect.stringMatching(message) }]);
  });

  it('reports every bad field at once', () => {
    expect(fieldsOf(() => validateCustomFields({ employee_no: 'x', salary: 'y' }, employee))).toEqual(['employee_no', 'salary', 'department']);
  });

  it('refuses fields the type does not define, unless it allows additional properties', () => {
    expect(errorsOf(() => validateCustomFields({ department: 'it', shoe_size: 44 }, employee))).toEqual([
      { field: 'shoe_size', message: 'is not a property of the user type "employee"' },
    ]);
    const open = schema({ department: { type: 'string' } }, true);
    expect(validateCustomFields({ shoe_size: 44, extra: { a: [1] } }, open).values).toEqual({ shoe_size: 44, extra: { a: [1] } });
  });

  it('refuses every field when the user has no type', () => {
    expect(errorsOf(() => validateCustomFields({ department: 'it' }, null))).toEqual([
      { field: 'department', message: 'is not a known field; custom fields need a user_type that defines them' },
    ]);
    expect(validateCustomFields({}, null)).toEqual({ values: {}, unique: [] });
  });

  it('refuses built-in, reserved and malformed names even when additional properties are allowed', () => {
    const open = schema({}, true);
    const input = JSON.parse('{"__proto__": {"polluted": true}, "_id": "x", "sys": {}, "token": "t", "a.b": 1, "constructor": 1}') as Record<string, unknown>;
    const errors = errorsOf(() => validateCustomFields(input, open));
    expect(errors.map((e) => e.field)).toEqual(['__proto__', '_id', 'sys', 'token', 'a.b', 'constructor']);
    expect(errors[0].message).toBe('is not allowed');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bounds object and array values: depth, size, strings, keys, __proto__', () => {
    const open = schema({ doc: { type: 'object' }, list: { type: 'array' } }, true);
    expect(validateCustomFields({ doc: nestedObject(CUSTOM_FIELD_LIMITS.maxDepth) }, open).values.doc).toBeDefined();
    expect(errorsOf(() => validateCustomFields({ doc: nestedObject(CUSTOM_FIELD_LIMITS.maxDepth + 1) }, open))[0].message).toMatch(/nested more than 5/);
    expect(errorsOf(() => validateCustomFields({ list: Array.from({ length: 1001 }, () => 1) }, open))[0].message).toMatch(/too large/);
    expect(errorsOf(() => validateCustomFields({ doc: { a: 'x'.repeat(5000) } }, open))[0].message).toMatch(/longer than 4096/);
    expect(errorsOf(() => validateCustomFields({ doc: { ['k'.repeat(200)]: 1 } }, open))[0].message).toMatch(/key longer than 128/);
    const polluted = JSON.parse('{"doc": {"a": {"__proto__": {"polluted": true}}}}') as Record<string, unknown>;
    expect(errorsOf(() => validateCustomFields(polluted, open))[0].message).toMatch(/__proto__/);
    // The node budget spans all fields of one user, not each field alone.
    const half = Array.from({ length: 600 }, () => 1);
    expect(errorsOf(() => validateCustomFields({ list: half, other: half }, open))[0].message).toMatch(/too large/);
    // Additional properties are bounded the same way.
    expect(errorsOf(() => validateCustomFields({ free: nestedObject(20) }, open))[0].message).toMatch(/nested/);
  });

  it('refuses custom fields larger than the total limit', () => {
    const open = schema({}, true);
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, 'x'.repeat(4000)]));
    expect(errorsOf(() => validateCustomFields(big, open))).toEqual([{ field: 'custom_fields', message: expect.stringMatching(/larger than 65536/) }]);
  });

  it('does not mutate the definitions or the input', () => {
    const definitions: PropertyDefinitions = parsePropertyDefinitions({ tags: { type: 'array', default: ['a'] } });
    const input = { tags: null };
    const result = validateCustomFields(input, { typeSlug: 't', properties: definitions, allowAdditionalProperties: false });
    expect(result.values).toEqual({ tags: ['a'] });
    expect(input).toEqual({ tags: null });
    expect(definitions.tags.default).toEqual(['a']);
  });
});
