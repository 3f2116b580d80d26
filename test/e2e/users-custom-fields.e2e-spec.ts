import { as, authHeader, createUser, createUserType, eventsAbout, putBodyOf, useInstallation, userBody, type UserDoc, usersPath, type UserTypeDoc } from '../support/api';

/** The users API: custom fields from user types. (Split by behaviour; the other parts are users-create.e2e-spec.ts, users-read.e2e-spec.ts, users-update.e2e-spec.ts.) */
describe('users API', () => {
  const suite = useInstallation();
  const base = (): string => usersPath(suite.admin.membershipId);
  const { post, put } = as(() => suite.t, () => suite.admin);

  describe('custom fields', () => {
    let employee: UserTypeDoc;

    beforeAll(async () => {
      employee = await createUserType(suite.t, suite.admin, {
        properties: {
          department: { type: 'enum', values: ['sales', 'it'], required: true },
          employee_no: { type: 'integer', unique: true },
          remote: { type: 'boolean', default: false },
          born: { type: 'date' },
          contact: { type: 'email' },
          homepage: { type: 'uri' },
          address: { type: 'object' },
          tags: { type: 'array' },
          salary: { type: 'number' },
          nickname: { type: 'string' },
        },
      });
    });

    it('returns custom fields at the top level, defaults applied, and filters on them', async () => {
      const fields = {
        user_type: employee.slug,
        department: 'it',
        employee_no: 1001,
        born: '1990-02-28',
        contact: 'Desk@Example.com',
        homepage: 'https://example.com/me',
        address: { city: 'Oslo' },
        tags: ['a', 'b'],
        salary: 12.5,
      };
      const user = await createUser(suite.t, suite.admin, fields);
      // As sent, but the email field lower-cased and the unsent boolean at its default.
      expect(user).toEqual(expect.objectContaining({ ...fields, contact: 'desk@example.com', remote: false }));
      expect(user).not.toHaveProperty('custom_fields');
      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserCreated', user._id);
      expect(event.document).toMatchObject({ department: 'it', employee_no: 1001 });
    });

    it.each([
      ['a missing required field', { department: undefined }, 'department', /required/],
      ['a wrong enum value', { department: 'hr' }, 'department', /one of/],
      ['a non-integer', { employee_no: 1.5 }, 'employee_no', /integer/],
      ['a string for a number', { salary: '12' }, 'salary', /number/],
      ['a string for a boolean', { remote: 'no' }, 'remote', /true or false/],
      ['an invalid date', { born: '1990-02-30' }, 'born', /ISO 8601/],
      ['an invalid e-mail', { contact: 'desk' }, 'contact', /e-mail/],
      ['an ftp uri', { homepage: 'ftp://example.com' }, 'homepage', /http or https/],
      ['a javascript uri', { homepage: 'javascript:alert(1)' }, 'homepage', /http or https/],
      ['an array for an object', { address: ['Oslo'] }, 'address', /object/],
      ['a string for an array', { tags: 'a,b' }, 'tags', /array/],
      ['a field the type does not define', { shoe_size: 44 }, 'shoe_size', /not a property/],
      ['a huge string', { nickname: 'n'.repeat(100_000) }, 'nickname', /at most/],
      ['a deeply nested object', { address: JSON.parse(`${'{"a":'.repeat(10)}1${'}'.repeat(10)}`) as object }, 'address', /nested/],
      // The body budget (2000 array elements in all) refuses it before the user type's rules.
      ['a huge array', { tags: Array.from({ length: 5000 }, (_, i) => i) }, 'request.body', /at most 2000 array elements/],
    ])('refuses %s: 400 naming the field', async (_case, overrides, field, message) => {
      const res = await post(base(), userBody({ user_type: employee.slug, department: 'it', ...overrides }));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect(res.body.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
    });

    it('refuses a __proto__ key inside an object value', async () => {
      const body = JSON.stringify(userBody({ user_type: employee.slug, department: 'it' })).replace(/}$/, ',"address":{"__proto__":{"x":1}}}');
      const res = await suite.t.http().post(base()).set(authHeader(suite.admin)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'address', message: expect.stringMatching(/__proto__/) }]);
    });

    it('enforces unique fields among users of the type, also under concurrency', async () => {
      await createUser(suite.t, suite.admin, { user_type: employee.slug, department: 'it', employee_no: 2001 });
      const duplicate = await post(base(), userBody({ user_type: employee.slug, department: 'sales', employee_no: 2001 }));
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual({
        statusCode: 409,
        errorCode: 'UserAlreadyExists',
        message: expect.any(String),
        errors: [{ field: 'employee_no', message: expect.stringMatching(/unique/) }],
      });

      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          post(base(), userBody({ user_type: employee.slug, department: 'it', employee_no: 3001 })),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);

      // PUTs need no hashing, so they reach the database together: exactly one may take the value.
      const racers: UserDoc[] = [];
      for (let i = 0; i < 8; i++) racers.push(await createUser(suite.t, suite.admin, { user_type: employee.slug, department: 'it', employee_no: 4000 + i }));
      const puts = await Promise.all(racers.map((u) => put(`${base()}/${u._id}`, putBodyOf(u, { employee_no: 4100 }))));
      expect(puts.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);

      // Updating a user keeps its own value without colliding with itself.
      const holder = results.find((r) => r.status === 201)?.body as UserDoc;
      const update = await put(`${base()}/${holder._id}`, putBodyOf(holder, { nickname: 'keeps 3001' }));
      expect(update.status).toBe(200);
      const steal = await createUser(suite.t, suite.admin, { user_type: employee.slug, department: 'it', employee_no: 3002 });
      const stolen = await put(`${base()}/${steal._id}`, putBodyOf(steal, { employee_no: 3001 }));
      expect(stolen.status).toBe(409);
    });

    it('checks custom fields on update and drops those the new type does not define', async () => {
      const user = await createUser(suite.t, suite.admin, { user_type: employee.slug, department: 'it', nickname: 'nick' });
      const bad = await put(`${base()}/${user._id}`, putBodyOf(user, { department: 'hr' }));
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ field: 'department', message: expect.any(String) }]);

      const cleared = await put(`${base()}/${user._id}`, putBodyOf(user, { nickname: null }));
      expect(cleared.status).toBe(200);
      expect(cleared.body).not.toHaveProperty('nickname');

      const untyped = await put(`${base()}/${user._id}`, { username: user.username, email_address: user.email_address, user_type: null });
      expect(untyped.status).toBe(200);
      expect(untyped.body).not.toHaveProperty('department');
      expect(untyped.body.user_type).toBeNull();
    });
  });
});
