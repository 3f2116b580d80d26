import { MASKED_VALUE } from '../events/sanitize';
import { deliveryEvent } from '../../test/support/unit/delivery-event';
import { type DeliveryWebhook, maskHeaders, maskUrl, prepareDeliveryRequest, USER_AGENT } from './delivery-request';
import { verifyWebhookSignature } from './signature';
import { TemplateError } from './template';

const NOW = 1_780_000_000;

function webhook(overrides: Partial<DeliveryWebhook> = {}, request: Partial<DeliveryWebhook['request']> = {}): DeliveryWebhook {
  return {
    id: 'wh-1',
    membershipId: 'm-1',
    tryCount: 1,
    secret: null,
    ...overrides,
    request: { method: 'POST', url: 'https://example.com/hook', ...request },
  };
}

describe('prepareDeliveryRequest', () => {
  it('wraps the rendered body as {document, prior, payload} by default', () => {
    const prepared = prepareDeliveryRequest(webhook({}, { body: { who: '{{document.firstname}}', was: '{{prior.firstname}}', n: 1 } }), deliveryEvent(), NOW);
    expect(prepared.method).toBe('POST');
    expect(JSON.parse(prepared.body!)).toEqual({
      document: deliveryEvent().document,
      prior: deliveryEvent().prior,
      payload: { who: 'Ada', was: 'A', n: 1 },
    });
    expect(prepared.headers).toEqual({ 'Content-Type': 'application/json', 'User-Agent': USER_AGENT });
  });

  it('sends prior and payload as null when there are none', () => {
    const prepared = prepareDeliveryRequest(webhook(), deliveryEvent({ prior: null }), NOW);
    expect(JSON.parse(prepared.body!)).toEqual({ document: deliveryEvent().document, prior: null, payload: null });
  });

  it('sends the configured body alone when uncoveredBody is true, and nothing without a body', () => {
    const alone = prepareDeliveryRequest(webhook({}, { uncoveredBody: true, body: { id: '{{document._id}}' } }), deliveryEvent(), NOW);
    expect(alone.body).toBe('{"id":"u-1"}');
    const none = prepareDeliveryRequest(webhook({}, { uncoveredBody: true }), deliveryEvent(), NOW);
    expect(none.body).toBeUndefined();
    expect(none.headers['Content-Type']).toBeUndefined();
  });

  it.each(['GET', 'HEAD', 'get'])('sends no body with %s', (method) => {
    const prepared = prepareDeliveryRequest(webhook({}, { method, body: { a: 1 } }), deliveryEvent(), NOW);
    expect(prepared.method).toBe(method.toUpperCase());
    expect(prepared.body).toBeUndefined();
  });

  it('renders URL and headers with the event values, URL-encoded in the URL only', () => {
    const prepared = prepareDeliveryRequest(
      webhook({}, { url: 'https://example.com/{{event_type}}?t={{event_time}}&by={{utilizer_id}}&n={{document.note}}', headers: { 'X-Note': '{{document.note}}', 'X-M': '{{membership_id}}' } }),
      deliveryEvent({ document: { note: 'a b&c=d/é' } }),
      NOW,
    );
    expect(prepared.url).toBe('https://example.com/UserUpdated?t=2026-03-04T05%3A06%3A07.089Z&by=u-9&n=a%20b%26c%3Dd%2F%C3%A9');
    expect(prepared.headers['X-Note']).toBe('a b&c=d/é');
    expect(prepared.headers['X-M']).toBe('m-1');
  });

  it('leaves out a header whose value would contain a line break and says so', () => {
    const prepared = prepareDeliveryRequest(
      webhook({}, { headers: { 'X-Name': '{{document.name}}', 'X-Ok': 'fine' } }),
      deliveryEvent({ document: { name: 'evil\r\nX-Injected: 1' } }),
      NOW,
    );
    expect(prepared.headers['X-Name']).toBeUndefined();
    expect(prepared.headers['X-Ok']).toBe('fine');
    expect(Object.keys(prepared.headers).some((name) => name.toLowerCase() === 'x-injected')).toBe(false);
    expect(prepared.skippedHeaders).toEqual(['X-Name']);
  });

  it('keeps a hostile value inside its JSON string', () => {
    const hostile = '"},"admin":true,"x":{"';
    const prepared = prepareDeliveryRequest(webhook({}, { body: { name: '{{document.firstname}}' } }), deliveryEvent({ document: { firstname: hostile } }), NOW);
    const parsed = JSON.parse(prepared.body!);
    expect(parsed.payload).toEqual({ name: hostile });
    expect(Object.keys(parsed).sort()).toEqual(['document', 'payload', 'prior']);
  });

  it('signs the exact body with the secret; the service header replaces a configured one', () => {
    const prepared = prepareDeliveryRequest(
      webhook({ secret: 'whsec-0123456789abcdef' }, { headers: { 'user-agent': 'mine/1', 'content-type': 'application/vnd.x+json' } }),
      deliveryEvent(),
      NOW,
    );
    const header = prepared.headers['X-Webhook-Signature'];
    expect(header).toMatch(new RegExp(`^t=${NOW},v1=[0-9a-f]{64}$`));
    expect(verifyWebhookSignature('whsec-0123456789abcdef', prepared.body!, header, 0, NOW)).toBe(true);
    expect(prepared.headers['user-agent']).toBe('mine/1');
    expect(prepared.headers['content-type']).toBe('application/vnd.x+json');
    expect(prepared.headers['Content-Type']).toBeUndefined();
  });

  it('signs an empty body for GET', () => {
    const prepared = prepareDeliveryRequest(webhook({ secret: 'whsec-0123456789abcdef' }, { method: 'GET' }), deliveryEvent(), NOW);
    expect(verifyWebhookSignature('whsec-0123456789abcdef', '', prepared.headers['X-Webhook-Signature'], 0, NOW)).toBe(true);
  });

  it('bounds URL and headers together, and the rendered body, failing with TemplateOutputTooLarge before anything is sent', () => {
    const half = 'h'.repeat(40_000);
    const both = webhook({}, { url: 'https://example.com/?a={{document.half}}', headers: { 'X-Half': '{{document.half}}' } });
    expect(() => prepareDeliveryRequest(both, deliveryEvent({ document: { half } }), NOW)).toThrow(
      expect.objectContaining({ code: 'TemplateOutputTooLarge', message: expect.stringContaining('URL and headers') }),
    );
    const urlOnly = webhook({}, { url: 'https://example.com/?a={{document.half}}' });
    expect(prepareDeliveryRequest(urlOnly, deliveryEvent({ document: { half } }), NOW).url).toContain(half);

    const big = 'b'.repeat(60_000);
    const amplified = webhook({}, { body: { blob: '{{document.big}}'.repeat(1000) } });
    expect(() => prepareDeliveryRequest(amplified, deliveryEvent({ document: { big } }), NOW)).toThrow(
      expect.objectContaining({ code: 'TemplateOutputTooLarge', message: expect.stringContaining('Body') }),
    );
  });

  it('throws TemplateError when the URL does not render to an absolute http(s) URL', () => {
    expect(() => prepareDeliveryRequest(webhook({}, { url: 'http://{{document.host}}.localhost/' }), deliveryEvent({ document: { host: 'a b' } }), NOW)).toThrow(TemplateError);
    expect(() => prepareDeliveryRequest(webhook({}, { url: 'http://127.0.0.1:{{document.port}}/' }), deliveryEvent({ document: { port: 'x' } }), NOW)).toThrow(TemplateError);
  });
});

describe('maskHeaders / maskUrl', () => {
  it('masks the signature header: a reader of result events must not get a signed request to replay', () => {
    const prepared = prepareDeliveryRequest(webhook({ secret: 'a-secret-of-16-chars' }), deliveryEvent(), NOW, 'd-1');
    expect(maskHeaders(prepared.headers)['X-Webhook-Signature']).toBe(MASKED_VALUE);
  });

  it('masks credential-carrying headers only', () => {
    expect(
      maskHeaders({ Authorization: 'Bearer x', Cookie: 'a=b', 'X-Api-Key': 'k', 'X-Session-Token': 't', 'Content-Type': 'application/json', 'X-Event': 'UserCreated' }),
    ).toEqual({
      Authorization: MASKED_VALUE,
      Cookie: MASKED_VALUE,
      'X-Api-Key': MASKED_VALUE,
      'X-Session-Token': MASKED_VALUE,
      'Content-Type': 'application/json',
      'X-Event': 'UserCreated',
    });
  });

  it('masks the whole user info and every query value, keeping the rest as written', () => {
    expect(maskUrl('https://user:pw@example.com/a?api_key=1&x=2&token=3&sig=4')).toBe(
      'https://masked:masked@example.com/a?api_key=%5Bmasked%5D&x=%5Bmasked%5D&token=%5Bmasked%5D&sig=%5Bmasked%5D',
    );
    expect(maskUrl('https://user:pass@host/path?token=abc')).toBe('https://masked:masked@host/path?token=%5Bmasked%5D');
    // A key as the user name alone (`https://<key>@api...`), an empty password, a bare query item.
    expect(maskUrl('https://sk_live_123@api.example.com/v1')).toBe('https://masked@api.example.com/v1');
    expect(maskUrl('https://user:@example.com/')).toBe('https://masked:@example.com/');
    expect(maskUrl('https://example.com/a?abcdef123&x=')).toBe('https://example.com/a?%5Bmasked%5D&x=%5Bmasked%5D');
    expect(maskUrl('https://example.com/a?x=2')).toBe('https://example.com/a?x=%5Bmasked%5D');
    expect(maskUrl('https://example.com/a#frag?x=1')).toBe('https://example.com/a#frag?x=1');
    expect(maskUrl('https://example.com/a')).toBe('https://example.com/a');
    expect(maskUrl('not a url')).toBe('not a url');
  });

  it('keeps placeholders of a URL template as written while masking around them', () => {
    expect(maskUrl('https://u:{{document.pw}}@{{document.tenant}}.example.com/{{event_type}}?id={{document._id}}#x')).toBe(
      'https://masked:masked@{{document.tenant}}.example.com/{{event_type}}?id=%5Bmasked%5D#x',
    );
  });

  it('uses the user info a URL parser sees: up to the last @, the password from the first colon', () => {
    expect(maskUrl('https://a@b:c:d@example.com/')).toBe('https://masked:masked@example.com/');
    expect(new URL(maskUrl('https://a@b:c:d@example.com/')).hostname).toBe('example.com');
  });

  it('still masks odd spellings a URL parser accepts', () => {
    for (const url of ['  https://user:pass@example.com/?t=abc', 'https:user:pass@example.com/?t=abc', 'ht\ttps://user:pass@example.com/?t=abc', 'https:\\\\user:pass@example.com\\p?t=abc']) {
      const masked = maskUrl(url);
      expect(masked).not.toMatch(/user|pass|abc/);
      const parsed = new URL(masked);
      expect(parsed.hostname).toBe('example.com');
      expect(parsed.searchParams.get('t')).toBe(MASKED_VALUE);
    }
  });

  it('is idempotent', () => {
    const once = maskUrl('https://user:pw@example.com/a?x=1&y');
    expect(maskUrl(once)).toBe(once);
  });
});
