import { randomBytes } from 'node:crypto';
import { TEST_SETUP_TOKEN, type TestApp } from './app';

export const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

export interface SignedIn {
  membershipId: string;
  userId: string;
  username: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  /** `Bearer <access token>` */
  auth: string;
}

/** API answers in tests: JSON objects whose fields the assertions read. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are untyped JSON; tests assert on them
type Json = Record<string, any>;

export interface Installation {
  /** The system membership created by setup. */
  membership: Json;
  admin: SignedIn;
  application: { id: string; secret: string; basic: string };
  setupResponse: Json;
}

export interface MembershipOptions {
  expires_in?: number;
  refresh_token_expires_in?: number;
  scoped_token_expires_in?: number;
}

export async function signIn(t: TestApp, membershipId: string, username: string, password: string): Promise<SignedIn> {
  const res = await t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password });
  if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    membershipId,
    userId: '',
    username,
    password,
    accessToken: res.body.access_token,
    refreshToken: res.body.refresh_token,
    auth: `Bearer ${res.body.access_token}`,
  };
}

/** POST /setup on a fresh app: the system membership, its admin (signed in) and an application. */
export async function setupInstallation(t: TestApp, membership: MembershipOptions = {}): Promise<Installation> {
  const username = unique('admin');
  const password = 'correct horse battery';
  const res = await t
    .http()
    .post('/setup')
    .set('X-Setup-Token', TEST_SETUP_TOKEN)
    .send({
      membership: { name: unique('System'), ...membership },
      user: { username, email_address: `${username}@example.com`, password, firstname: 'Ada', lastname: 'Admin' },
      application: { name: unique('app') },
    });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${JSON.stringify(res.body)}`);
  const membershipId = res.body.membership._id as string;
  const admin = await signIn(t, membershipId, username, password);
  admin.userId = res.body.user._id;
  const application = res.body.application as { _id: string; secret: string };
  return {
    membership: res.body.membership,
    admin,
    application: { id: application._id, secret: application.secret, basic: `Basic ${application._id}:${application.secret}` },
    setupResponse: res.body,
  };
}
