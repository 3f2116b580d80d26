import { validOperationId } from './document-rules';
import { canonicalJson, sortKeysDeep } from './openapi';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order, so equal documents print equal', () => {
    const one = { paths: { '/b': { post: {}, get: {} }, '/a': {} }, info: { version: '1', title: 'T' }, tags: [{ name: 'z' }, { name: 'a' }] };
    const two = { info: { title: 'T', version: '1' }, tags: [{ name: 'z' }, { name: 'a' }], paths: { '/a': {}, '/b': { get: {}, post: {} } } };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
    expect(Object.keys((sortKeysDeep(one) as { paths: object }).paths)).toEqual(['/a', '/b']);
    expect(canonicalJson(one)).toContain('"tags": [\n    {\n      "name": "z"');
    expect(canonicalJson(one).endsWith('}\n')).toBe(true);
  });

  it('leaves scalars and nulls alone', () => {
    expect(sortKeysDeep(null)).toBeNull();
    expect(sortKeysDeep([3, 'a', true])).toEqual([3, 'a', true]);
    expect(canonicalJson({ b: null, a: 0 })).toBe('{\n  "a": 0,\n  "b": null\n}\n');
  });
});

describe('validOperationId', () => {
  it('keeps an identifier and names a multi-path handler\'s operation after its path', () => {
    expect(validOperationId('Users_list', '/memberships/{membershipId}/users')).toBe('Users_list');
    expect(validOperationId('Token_me[0]', '/me')).toBe('Token_me');
    expect(validOperationId('Token_me[1]', '/whoami')).toBe('Token_whoami');
    expect(validOperationId('Codes_token[1]', '/memberships/{m}/codes/token')).toBe('Codes_membershipsCodesToken');
    expect(validOperationId(undefined, '/x')).toBeUndefined();
  });
});
