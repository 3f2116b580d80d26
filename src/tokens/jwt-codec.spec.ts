import { JwtCodec, MAX_TOKEN_LENGTH } from './jwt-codec';

const SECRET = 'a-membership-secret-key-of-some-length-0123456789';
const expected = { issuer: 'Acme', audience: 'acme' };
const claims = {
  sub: 'usr_1',
  prn: 'mbr_1',
  jti: 'jti_1',
  sid: 'ses_1',
  iss: 'Acme',
  aud: 'acme',
  unique_name: 'ada',
  email: 'ada@example.com',
};
const now = () => Math.floor(Date.now() / 1000);
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('JwtCodec', () => {
  const codec = new JwtCodec();
  const token = codec.sign(claims, now(), 3600, SECRET);
  afterAll(() => codec.onModuleDestroy());

  describe('peek', () => {
    it('reads the membership and token record of a token without checking it', () => {
      expect(codec.peek(codec.sign({ ...claims, tid: 'tok_1' }, now(), 3600, SECRET))).toEqual({ prn: 'mbr_1', tokenId: 'tok_1' });
      const [header, , signature] = token.split('.');
      expect(codec.peek(`${header}.${segment({ prn: 'other', sid: 'x', tid: 'y' })}.${signature}`)).toEqual({ prn: 'other', tokenId: 'y' });
    });

    it('reads the session id as the record of a token issued before sessions (no tid)', () => {
      expect(codec.peek(token)).toEqual({ prn: 'mbr_1', tokenId: 'ses_1' });
    });

    it.each([
      ['no dots', 'abc'],
      ['two segments', 'abc.def'],
      ['four segments', `${token}.extra`],
      ['an empty payload', 'abc..def'],
      ['a payload that is not JSON', `abc.${Buffer.from('not json').toString('base64url')}.def`],
      ['a payload that is not an object', `abc.${segment('text')}.def`],
      ['claims of the wrong type', `abc.${segment({ prn: 1, sid: 'x' })}.def`],
      ['a missing sid', `abc.${segment({ prn: 'm' })}.def`],
      ['a tid of the wrong type', `abc.${segment({ prn: 'm', sid: 's', tid: 5 })}.def`],
      ['overlong ids', `abc.${segment({ prn: 'm'.repeat(65), sid: 's' })}.def`],
      ['an oversized token', `abc.${segment({ prn: 'm', sid: 's', pad: 'x'.repeat(MAX_TOKEN_LENGTH) })}.def`],
    ])('answers null for %s', (_case, value) => {
      expect(codec.peek(value)).toBeNull();
    });
  });

  describe('verify', () => {
    it('accepts its own token and answers the claims', () => {
      const result = codec.verify(token, SECRET, expected);
      expect(result).toMatchObject({ ok: true, claims: { sub: 'usr_1', sid: 'ses_1' } });
    });

    it('rejects another key, issuer or audience, a tampered payload and alg none', () => {
      expect(codec.verify(token, `${SECRET}x`, expected)).toEqual({ ok: false, reason: 'invalid' });
      expect(codec.verify(token, SECRET, { ...expected, issuer: 'Other' })).toEqual({ ok: false, reason: 'invalid' });
      expect(codec.verify(token, SECRET, { ...expected, audience: 'other' })).toEqual({ ok: false, reason: 'invalid' });
      const [header, , signature] = token.split('.');
      const tampered = `${header}.${segment({ ...claims, sub: 'usr_2', iat: now(), exp: now() + 60 })}.${signature}`;
      expect(codec.verify(tampered, SECRET, expected)).toEqual({ ok: false, reason: 'invalid' });
      const unsigned = `${segment({ alg: 'none', typ: 'JWT' })}.${segment({ ...claims, iat: now(), exp: now() + 60 })}.`;
      expect(codec.verify(unsigned, SECRET, expected)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('says "expired" only for a good signature past its expiry', () => {
      const expired = codec.sign(claims, now() - 120, 60, SECRET);
      expect(codec.verify(expired, SECRET, expected)).toEqual({ ok: false, reason: 'expired' });
      expect(codec.verify(expired, `${SECRET}x`, expected)).toEqual({ ok: false, reason: 'invalid' });
    });
  });

  describe('a token checked before (remembered by its text)', () => {
    afterEach(() => jest.useRealTimers());

    it('is refused at once with the key, issuer or audience changed', () => {
      const fresh = new JwtCodec();
      const remembered = fresh.sign({ ...claims, jti: 'jti_r1' }, now(), 3600, SECRET);
      expect(fresh.verify(remembered, SECRET, expected)).toMatchObject({ ok: true });
      // The membership's key was rotated (or its name or slug changed) since: the next check fails.
      expect(fresh.verify(remembered, 'a-rotated-secret-key-0123456789-0123456789', expected)).toEqual({ ok: false, reason: 'invalid' });
      expect(fresh.verify(remembered, SECRET, { ...expected, issuer: 'Renamed' })).toEqual({ ok: false, reason: 'invalid' });
      expect(fresh.verify(remembered, SECRET, { ...expected, audience: 'renamed' })).toEqual({ ok: false, reason: 'invalid' });
      expect(fresh.verify(remembered, SECRET, expected)).toMatchObject({ ok: true });
      fresh.onModuleDestroy();
    });

    it('is expired once its exp has passed, though it was remembered', () => {
      jest.useFakeTimers({ now: Date.now(), doNotFake: ['setInterval', 'setTimeout'] });
      const fresh = new JwtCodec();
      const shortLived = fresh.sign({ ...claims, jti: 'jti_r2' }, now(), 30, SECRET);
      expect(fresh.verify(shortLived, SECRET, expected)).toMatchObject({ ok: true });
      jest.setSystemTime(Date.now() + 30_000);
      expect(fresh.verify(shortLived, SECRET, expected)).toEqual({ ok: false, reason: 'expired' });
      fresh.onModuleDestroy();
    });

    it('is not valid before its nbf, though a token with the same text was remembered', () => {
      jest.useFakeTimers({ now: Date.now(), doNotFake: ['setInterval', 'setTimeout'] });
      const fresh = new JwtCodec();
      const later = fresh.sign({ ...claims, jti: 'jti_r3' }, now() + 60, 3600, SECRET);
      expect(fresh.verify(later, SECRET, expected)).toEqual({ ok: false, reason: 'invalid' });
      jest.setSystemTime(Date.now() + 61_000);
      expect(fresh.verify(later, SECRET, expected)).toMatchObject({ ok: true });
      jest.setSystemTime(Date.now() - 61_000);
      expect(fresh.verify(later, SECRET, expected)).toEqual({ ok: false, reason: 'invalid' });
      fresh.onModuleDestroy();
    });

    it('answers claims no caller can change for the next', () => {
      const fresh = new JwtCodec();
      const withAmr = fresh.sign({ ...claims, jti: 'jti_r4', amr: ['pwd'] }, now(), 3600, SECRET);
      const first = fresh.verify(withAmr, SECRET, expected);
      if (!first.ok) throw new Error('expected a good token');
      expect(() => Object.assign(first.claims, { sub: 'usr_other' })).toThrow(TypeError);
      expect(() => first.claims.amr?.push('hwk')).toThrow(TypeError);
      expect(fresh.verify(withAmr, SECRET, expected)).toMatchObject({ ok: true, claims: { sub: 'usr_1', amr: ['pwd'] } });
      fresh.onModuleDestroy();
    });
  });

  describe('challenge tokens (reset, activation)', () => {
    const challenge = { typ: 'reset' as const, sub: 'usr_1', prn: 'mbr_1', jti: 'jti_9', iss: 'Acme', aud: 'acme' };

    it('verifies a token of the expected typ only', () => {
      const reset = codec.sign(challenge, now(), 600, SECRET);
      expect(codec.verifyChallenge(reset, SECRET, { ...expected, typ: 'reset' })).toMatchObject({ ok: true, claims: { typ: 'reset', jti: 'jti_9' } });
      expect(codec.verifyChallenge(reset, SECRET, { ...expected, typ: 'activation' })).toEqual({ ok: false, reason: 'invalid' });
      expect(codec.verifyChallenge(token, SECRET, { ...expected, typ: 'reset' })).toEqual({ ok: false, reason: 'invalid' });
    });

    it('never verifies a token with a typ as an access or refresh token, even one with a sid', () => {
      const withSid = codec.sign({ ...claims, typ: 'reset' } as unknown as typeof claims, now(), 600, SECRET);
      expect(codec.verify(withSid, SECRET, expected)).toEqual({ ok: false, reason: 'invalid' });
      expect(codec.peek(codec.sign(challenge, now(), 600, SECRET))).toBeNull();
    });

    it('tells an expired challenge token from a bad one', () => {
      const expired = codec.sign(challenge, now() - 7200, 60, SECRET);
      expect(codec.verifyChallenge(expired, SECRET, { ...expected, typ: 'reset' })).toEqual({ ok: false, reason: 'expired' });
      expect(codec.verifyChallenge(expired, 'another key', { ...expected, typ: 'reset' })).toEqual({ ok: false, reason: 'invalid' });
    });
  });
});
