import { SseParser, type ServerSentEvent } from './event-stream';
import { StreamCache, tokenExpiry } from './stream-cache';

const event = (type: string, document: object, prior: object | null = null): ServerSentEvent => ({
  id: '1.x',
  event: type,
  data: JSON.stringify({ _id: 'e', event_type: type, document, prior }),
});

describe('StreamCache', () => {
  let now = 1_000_000;
  const cache = () => new StreamCache<string>(60_000, 3, () => now);

  it('keeps an answer for at most the TTL and never past the token exp', () => {
    const c = cache();
    expect(c.set('a', 'A', 'u1', c.generation, now + 10_000)).toBe(true);
    expect(c.set('b', 'B', 'u1', c.generation, Number.POSITIVE_INFINITY)).toBe(true);
    now += 10_000;
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBe('B');
    now += 50_000;
    expect(c.get('b')).toBeUndefined();
    // No readable exp, or already expired: not kept.
    expect(c.set('c', 'C', 'u1', c.generation, undefined)).toBe(false);
    expect(c.set('c', 'C', 'u1', c.generation, now)).toBe(false);
  });

  it('does not keep an answer fetched while something was dropped', () => {
    const c = cache();
    const generation = c.generation;
    c.apply(event('UserUpdated', { _id: 'someone' }));
    expect(c.set('a', 'A', 'u1', generation, Number.POSITIVE_INFINITY)).toBe(false);
  });

  it('is bounded: the oldest stored goes first', () => {
    const c = cache();
    for (const key of ['a', 'b', 'c', 'd']) c.set(key, key, 'u', c.generation, Number.POSITIVE_INFINITY);
    expect(c.size).toBe(3);
    expect(c.get('a')).toBeUndefined();
    expect(c.get('d')).toBe('d');
  });

  it('TokenRevoked, TokenRefreshed and User* drop that user; a deletion names it in prior; Role*, Application*, UserType* drop everything', () => {
    const c = cache();
    const fill = () => {
      c.set('u1-token', 'x', 'u1', c.generation, Number.POSITIVE_INFINITY);
      c.set('u2-token', 'y', 'u2', c.generation, Number.POSITIVE_INFINITY);
    };
    fill();
    c.apply(event('TokenRevoked', { user_id: 'u1', session_id: 's' }));
    expect([c.get('u1-token'), c.get('u2-token')]).toEqual([undefined, 'y']);
    fill();
    c.apply(event('UserDeleted', {}, { _id: 'u2' }));
    expect([c.get('u1-token'), c.get('u2-token')]).toEqual(['x', undefined]);
    fill();
    // A refresh that rotated the pair ended its access token too; the event names the user in document.user.
    c.apply(event('TokenRefreshed', { user: { _id: 'u2', username: 'u2' }, token_type: 'Bearer' }));
    expect([c.get('u1-token'), c.get('u2-token')]).toEqual(['x', undefined]);
    fill();
    c.apply(event('TokenRefreshed', { token_type: 'Bearer' }));
    expect(c.size).toBe(0);
    for (const type of ['RoleUpdated', 'ApplicationDeleted', 'UserTypeUpdated', 'MembershipUpdated']) {
      fill();
      c.apply(event(type, { _id: 'whatever' }));
      expect(c.size).toBe(0);
    }
    fill();
    c.apply({ id: undefined, event: 'UserUpdated', data: 'not json' });
    expect(c.size).toBe(0);
    fill();
    c.apply(event('TokenGenerated', { user_id: 'u1' }));
    expect(c.size).toBe(2);
  });
});

describe('tokenExpiry', () => {
  const jwt = (claims: object) => `Bearer h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;
  it('reads exp (ms) from a Bearer JWT, undefined otherwise', () => {
    expect(tokenExpiry(jwt({ exp: 1700000000 }))).toBe(1_700_000_000_000);
    expect(tokenExpiry(jwt({}))).toBeUndefined();
    expect(tokenExpiry('Bearer opaque')).toBeUndefined();
    expect(tokenExpiry('Bearer a.%%%.c')).toBeUndefined();
    expect(tokenExpiry('Basic a:b')).toBeUndefined();
  });
});

describe('SseParser', () => {
  it('parses events split anywhere, with CRLF, comments, multi-line data and retry', () => {
    const events: ServerSentEvent[] = [];
    const parser = new SseParser((e) => events.push(e));
    const text = ': connected\r\nretry: 1000\r\n\r\nid: 7.a\nevent: UserUpdated\ndata: {"a":1}\n\ndata: one\ndata:two\n\n';
    for (const char of text) parser.push(char);
    expect(parser.retryMs).toBe(1000);
    expect(events).toEqual([
      { id: '7.a', event: 'UserUpdated', data: '{"a":1}' },
      { id: '7.a', event: 'message', data: 'one\ntwo' },
    ]);
  });

  it('refuses an endless line', () => {
    const parser = new SseParser(() => undefined);
    expect(() => parser.push('x'.repeat(1024 * 1024 + 1))).toThrow(/longer than/);
  });
});
