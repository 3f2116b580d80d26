import { createHmac } from 'node:crypto';
import { signWebhookBody, verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from './signature';

const SECRET = 'whsec_test_secret';
const BODY = JSON.stringify({ document: { _id: 'u1', name: 'Zoë 日本' }, prior: null, payload: { a: 1 } });
const T = 1_714_557_600;

describe('signWebhookBody', () => {
  it('produces t=<seconds>,v1=<hex hmac of "t.body">', () => {
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`, 'utf8').digest('hex');
    expect(signWebhookBody(SECRET, BODY, T)).toBe(`t=${T},v1=${expected}`);
  });

  it('matches fixed vectors computed with openssl dgst -sha256 -hmac', () => {
    expect(signWebhookBody('key', '', 0)).toBe('t=0,v1=85841b4efc3cd7776c3c8f9b7cca9e281c550e5d19889d78e9e669c6337f000d');
    expect(signWebhookBody('s3cret', '{"a":1}', 1_700_000_000)).toBe(
      't=1700000000,v1=1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940',
    );
  });

  it('changes with the secret, body and timestamp', () => {
    const base = signWebhookBody(SECRET, BODY, T);
    expect(signWebhookBody('other', BODY, T)).not.toBe(base);
    expect(signWebhookBody(SECRET, BODY + ' ', T)).not.toBe(base);
    expect(signWebhookBody(SECRET, BODY, T + 1).split(',')[1]).not.toBe(base.split(',')[1]);
  });

  it('rejects an empty secret and bad timestamps', () => {
    expect(() => signWebhookBody('', BODY, T)).toThrow(TypeError);
    expect(() => signWebhookBody(SECRET, BODY, 1.5)).toThrow(RangeError);
    expect(() => signWebhookBody(SECRET, BODY, -1)).toThrow(RangeError);
    expect(() => signWebhookBody(SECRET, BODY, Number.NaN)).toThrow(RangeError);
    // A caller that forgets to floor Date.now() / 1000; not Date.now() itself, whose
    // milliseconds make the sum whole one time in a thousand.
    expect(() => signWebhookBody(SECRET, BODY, Math.floor(Date.now() / 1000) + 0.25)).toThrow(RangeError);
  });

  it('exports the header name', () => {
    expect(WEBHOOK_SIGNATURE_HEADER).toBe('X-Webhook-Signature');
  });
});

describe('verifyWebhookSignature', () => {
  const header = signWebhookBody(SECRET, BODY, T);
  const v1 = header.split(',')[1].slice(3);

  it('accepts a valid signature within tolerance, in both directions', () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, T + 300)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, T - 300)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, 0, T)).toBe(true);
  });

  it('rejects timestamps outside the tolerance', () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, T + 301)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, T - 301)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, 0, T + 1)).toBe(false);
  });

  it('rejects a wrong secret, a changed body or a changed timestamp', () => {
    expect(verifyWebhookSignature('wrong', BODY, header, 300, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY.replace('u1', 'u2'), header, 300, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, `${BODY} `, header, 300, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T + 1},v1=${v1}`, 300, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, `t=0${T},v1=${v1}`, 300, T)).toBe(false); // the text is signed
    const flipped = v1.slice(0, -1) + (v1.endsWith('0') ? '1' : '0');
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${flipped}`, 300, T)).toBe(false);
  });

  it('tolerates spaces, key order, upper-case hex, unknown keys and several v1 values', () => {
    expect(verifyWebhookSignature(SECRET, BODY, ` v1=${v1} , t=${T} `, 300, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v1=${v1.toUpperCase()}`, 300, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},v0=abc,v1=${v1}`, 300, T)).toBe(true);
    const other = signWebhookBody('old-secret', BODY, T).split(',')[1];
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},${other},v1=${v1}`, 300, T)).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, `t=${T},${other}`, 300, T)).toBe(false);
  });

  it.each([
    '',
    'garbage',
    `v1=${'a'.repeat(64)}`,
    `t=${T}`,
    `t=${T},v1=`,
    `t=${T},v1=zz${'a'.repeat(62)}`,
    `t=${T},v1=${'a'.repeat(63)}`,
    `t=${T},v1=${'a'.repeat(66)}`,
    `t=abc,v1=${'a'.repeat(64)}`,
    `t=-1,v1=${'a'.repeat(64)}`,
    `t=1.5,v1=${'a'.repeat(64)}`,
    `t=${T},t=${T},v1=${'a'.repeat(64)}`,
    `t=${T},,v1=${'a'.repeat(64)}`,
    `t=${T},v1=${'a'.repeat(64)},` + 'x'.repeat(5000),
  ])('rejects malformed header %j without throwing', (bad) => {
    expect(verifyWebhookSignature(SECRET, BODY, bad, 300, T)).toBe(false);
  });

  it('rejects an empty secret and invalid tolerance or clock values', () => {
    const emptySigned = `t=${T},v1=${createHmac('sha256', '').update(`${T}.${BODY}`).digest('hex')}`;
    expect(verifyWebhookSignature('', BODY, emptySigned, 300, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, -1, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, Number.NaN, T)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, 300, Number.NaN)).toBe(false);
  });

  it('round-trips bodies with unicode and control characters', () => {
    for (const body of ['', '{}', 'é', '🚀\u0000\r\n', 'x'.repeat(100_000)]) {
      const h = signWebhookBody(SECRET, body, T);
      expect(verifyWebhookSignature(SECRET, body, h, 1, T)).toBe(true);
    }
  });
});
