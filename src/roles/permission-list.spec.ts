import { DomainError } from '../common/errors';
import { validatePermissionList } from './permission-list';
import { likePattern } from './role.repository';

function failure(list: string[]): DomainError {
  try {
    validatePermissionList('permissions', list);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('validatePermissionList', () => {
  it('answers [] for a missing list', () => {
    expect(validatePermissionList('permissions', undefined)).toEqual([]);
    expect(validatePermissionList('permissions', null)).toEqual([]);
  });

  it('keeps valid expressions as written, trimmed', () => {
    expect(validatePermissionList('forbidden', [' Users.Read ', '*', 'a.users.read.b', 'users.read.id%2Ewith%2Edots'])).toEqual([
      'Users.Read',
      '*',
      'a.users.read.b',
      'users.read.id%2Ewith%2Edots',
    ]);
  });

  it.each(['users read', 'a.b.c.d.e', 'user*.read', 'users..read', '', 'users.re\tad', 'x'.repeat(600)])(
    'refuses %j with InvalidPermission naming the entry',
    (expression) => {
    const error = failure(['users.read', expression]);
    expect(error.code).toBe('InvalidPermission');
    expect(error.status).toBe(400);
    expect(error.message.startsWith('permissions[1] ')).toBe(true);
    expect(error.message.length).toBeLessThan(300);
    expect(error.errors).toEqual([{ field: 'permissions[1]', message: expect.stringMatching(/^Invalid permission: /) }]);
    },
  );
});

describe('likePattern', () => {
  it('matches the keyword literally anywhere', () => {
    expect(likePattern('abc')).toBe('%abc%');
    expect(likePattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});
