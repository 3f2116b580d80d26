import argon2 from 'argon2';
import { loadConfig } from '../config/config';
import { hasNoPassword, noPasswordHash, PasswordHasher } from './password-hasher';

const hasherFor = (nodeEnv: string) => new PasswordHasher(loadConfig({ NODE_ENV: nodeEnv, DATABASE_URL: 'memory://' }));

describe('PasswordHasher parameters', () => {
  it.each(['production', 'development'])('NODE_ENV=%s hashes with argon2id at OWASP\'s minimum (m=19456, t=2, p=1)', async (nodeEnv) => {
    const hash = await hasherFor(nodeEnv).hash('a password of eight');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('NODE_ENV=test hashes with argon2id at its cheapest (m=1024, t=1, p=1), for the test suite only', async () => {
    const hash = await hasherFor('test').hash('a password of eight');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
  });

  it('verifies a hash whatever parameters made it (a hash names its own)', async () => {
    const strong = await hasherFor('production').hash('a password of eight');
    const cheap = await hasherFor('test').hash('a password of eight');
    for (const hasher of [hasherFor('production'), hasherFor('test')]) {
      await expect(hasher.verify(strong, 'a password of eight')).resolves.toBe(true);
      await expect(hasher.verify(cheap, 'a password of eight')).resolves.toBe(true);
      await expect(hasher.verify(cheap, 'another password')).resolves.toBe(false);
    }
  });

  it('verifies nothing against a user with no password, yet spends a real argon2 verify on it as on a wrong password', async () => {
    const hash = noPasswordHash();
    expect(hasNoPassword(hash)).toBe(true);
    expect(hash).not.toBe(noPasswordHash());
    // Answering at once would tell a guesser, by the time alone, that this user signs in through a provider.
    const verify = jest.spyOn(argon2, 'verify');
    try {
      await expect(hasherFor('test').verify(hash, hash)).resolves.toBe(false);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0][0]).toMatch(/^\$argon2id\$/);
    } finally {
      verify.mockRestore();
    }
  });
});
