/**
 * Helpers for the webhook and event e2e tests: webhooks, users and events over the real HTTP API,
 * and polling with a deadline for what arrives asynchronously.
 */
import type { TestApp } from './app';
import { unique } from './factories';
import type { ApiCaller } from './resources';

/** A JSON object the API answered: tests read its fields freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON from the wire
export type Json = Record<string, any>;

export const webhooksPath = (membershipId: string): string => `/memberships/${membershipId}/webhooks`;
export const eventsPath = (membershipId: string): string => `/memberships/${membershipId}/events`;

/** A valid create body; `overrides` replace top-level fields, `request` is merged. */
export function webhookBody(url: string, overrides: Json = {}): Json {
  const { request, ...rest } = overrides;
  return {
    name: unique('hook'),
    event: 'UserCreated',
    status: 'active',
    try_count: 1,
    ...rest,
    request: { method: 'POST', url, ...(request ?? {}) },
  };
}

export async function createWebhook(t: TestApp, caller: ApiCaller, url: string, overrides: Json = {}): Promise<Json> {
  const res = await t.http().post(webhooksPath(caller.membershipId)).set('Authorization', caller.auth).send(webhookBody(url, overrides));
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** POST /memberships/{m}/users; answers the created user. */
export async function createUser(t: TestApp, caller: ApiCaller, overrides: Record<string, unknown> = {}): Promise<Json> {
  const username = unique('user');
  const res = await t
    .http()
    .post(`/memberships/${caller.membershipId}/users`)
    .set('Authorization', caller.auth)
    .send({ username, email_address: `${username}@example.com`, password: 'a long enough password', ...overrides });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** POST /events/_query; answers the items (fails on any status but 200). */
export async function queryEvents(t: TestApp, caller: ApiCaller, where: Record<string, unknown>, query: Record<string, string> = {}): Promise<Json[]> {
  const res = await t.http().post(`${eventsPath(caller.membershipId)}/_query`).query(query).set('Authorization', caller.auth).send({ where });
  if (res.status !== 200) throw new Error(`query events failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items;
}

/** Polls `check` until it answers a value that is not undefined, or fails after the deadline. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The result events (WebhookRequestSent/Failed) of one webhook, oldest first, once there are at least `count`. */
export async function waitForResults(t: TestApp, caller: ApiCaller, webhookId: string, count: number, timeoutMs = 5000): Promise<Json[]> {
  return eventually(
    async () => {
      const items = await queryEvents(
        t,
        caller,
        { event_type: { $in: ['WebhookRequestSent', 'WebhookRequestFailed'] }, 'document.webhook_id': webhookId },
        { sort: 'event_time asc' },
      );
      return items.length >= count ? items : undefined;
    },
    `${count} result event(s) of webhook ${webhookId}`,
    timeoutMs,
  );
}
