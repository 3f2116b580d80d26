import { ConfigError, loadConfig } from './config';

/** The passkeys' relying party settings (contract, configuration of "Beyond the specification"). */
describe('WEBAUTHN_RP_ID and WEBAUTHN_ORIGINS', () => {
  const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'memory://', ...env });

  it('default to localhost and the service on localhost at its port', () => {
    const config = load({ PORT: '4100' });
    expect(config.webauthnRpId).toBe('localhost');
    expect(config.webauthnOrigins).toEqual(['http://localhost:4100']);
  });

  it('take a host name and a list of origins', () => {
    const config = load({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://example.com, https://login.example.com:8443' });
    expect(config.webauthnRpId).toBe('example.com');
    expect(config.webauthnOrigins).toEqual(['https://example.com', 'https://login.example.com:8443']);
  });

  it.each([
    ['WEBAUTHN_RP_ID', 'https://example.com'],
    ['WEBAUTHN_RP_ID', 'example.com:443'],
    ['WEBAUTHN_RP_ID', 'Example.COM'],
    ['WEBAUTHN_RP_ID', 'exa mple.com'],
    ['WEBAUTHN_ORIGINS', 'https://example.com/login'],
    ['WEBAUTHN_ORIGINS', 'example.com'],
    ['WEBAUTHN_ORIGINS', 'ftp://example.com'],
  ])('stop the start on %s=%s, naming the variable', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });
});

describe('WEBHOOK_DISPATCH and WEBHOOK_CLAIM_INTERVAL_MS', () => {
  const server = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/portcullis' };

  it('dispatch by default, every second', () => {
    const config = loadConfig(server);
    expect(config.webhookDispatch).toBe(true);
    expect(config.webhookClaimIntervalMs).toBe(1000);
  });

  it('off only on a PostgreSQL server: on the embedded database no other instance could call', () => {
    expect(loadConfig({ ...server, WEBHOOK_DISPATCH: 'off' }).webhookDispatch).toBe(false);
    expect(() => loadConfig({ WEBHOOK_DISPATCH: 'off' })).toThrow(/^Invalid configuration: WEBHOOK_DISPATCH may be off only with DATABASE_URL/);
    expect(() => loadConfig({ ...server, WEBHOOK_DISPATCH: 'no' })).toThrow(/^Invalid configuration: WEBHOOK_DISPATCH /);
    expect(() => loadConfig({ ...server, WEBHOOK_CLAIM_INTERVAL_MS: '10' })).toThrow(/^Invalid configuration: WEBHOOK_CLAIM_INTERVAL_MS /);
  });
});

describe('PUBLIC_URL', () => {
  const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'memory://', ...env });

  it('defaults to the service on localhost and drops a trailing slash', () => {
    expect(load({ PORT: '4100' }).publicUrl).toBe('http://localhost:4100');
    expect(load({ PUBLIC_URL: 'https://id.example.com/auth/' }).publicUrl).toBe('https://id.example.com/auth');
  });

  it.each(['id.example.com', 'ftp://id.example.com', 'https://id.example.com/?x=1', 'https://id.example.com/#x', 'https://u:p@id.example.com'])(
    'refuses %s',
    (value) => {
      expect(() => load({ PUBLIC_URL: value })).toThrow(/PUBLIC_URL/);
    },
  );
});
