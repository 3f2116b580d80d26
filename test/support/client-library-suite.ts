/**
 * The fixture of the client-library acceptance tests, shared by their files: the real service,
 * a recording proxy in front of it (test/support/protected-apps.ts), a NestJS and an Express
 * third-party API protected by the library through that proxy, and three users whose
 * permissions come from roles made with the service's own API.
 */
import type { PortcullisSettings } from '@portcullis/client';
import { bootInstallation, type Installation } from './api';
import type { TestApp } from './app';
import { type ApiKind, createUserWithRole, type ProtectedApi, ServiceProxy, startTestApi, type UserWithRole } from './protected-apps';

export const KINDS: readonly ApiKind[] = ['nest', 'express'];

export const ACCESS_DENIED = { statusCode: 403, errorCode: 'AccessDenied', message: expect.any(String) };
export const UNAVAILABLE = { statusCode: 503, errorCode: 'AuthenticationServiceUnavailable', message: expect.any(String) };
/** supertest's own body check compares strictly; this one accepts jest matchers. */
export const hasBody = (expected: unknown) => (res: { body: unknown }): void => {
  expect(res.body).toEqual(expected);
};

export interface ClientLibrarySuite {
  t: TestApp;
  inst: Installation;
  membershipId: string;
  /** Between the protected APIs and the service; reset before each test. */
  proxy: ServiceProxy;
  apis: Record<ApiKind, ProtectedApi>;
  /** Role: orders.read (every order), orders.delete.o-1, reports-eu.*, drafts.write. */
  clerk: UserWithRole;
  /** Role: orders.read.o-1 only, audit.read. */
  reader: UserWithRole;
  /** Role: the kept-as-written literals orders.read.%7BorderId%7D and admin.manage.%7Bsection%7D. */
  lister: UserWithRole;
  /** Library settings pointing at the proxy and the membership. */
  settings: (overrides?: Partial<PortcullisSettings>) => PortcullisSettings;
  /** Starts one more protected API, closed after all. */
  extraApi: (kind: ApiKind, settings: PortcullisSettings) => Promise<ProtectedApi>;
  /** Starts one more proxy, closed after all. */
  extraProxy: (target: string, prefix?: string) => Promise<ServiceProxy>;
  /** Anything else a test starts that must be closed after all. */
  closeAfterAll: (closable: { close: () => Promise<void> }) => void;
}

/**
 * Registers the suite's beforeAll, beforeEach and afterAll (REGION=eu for the placeholder tests,
 * restored after) and answers the suite object, whose fields are set once beforeAll has run.
 */
export function useClientLibrarySuite(): ClientLibrarySuite {
  const extras: Array<{ close: () => Promise<void> }> = [];
  const savedRegion = process.env['REGION'];
  const suite = {
    apis: {} as Record<ApiKind, ProtectedApi>,
    settings: (overrides: Partial<PortcullisSettings> = {}): PortcullisSettings => ({ BaseUrl: suite.proxy.baseUrl, MembershipId: suite.membershipId, ...overrides }),
    extraApi: async (kind: ApiKind, settings: PortcullisSettings) => {
      const api = await startTestApi(kind, settings);
      extras.push(api);
      return api;
    },
    extraProxy: async (target: string, prefix?: string) => {
      const proxy = await ServiceProxy.start(target, prefix);
      extras.push(proxy);
      return proxy;
    },
    closeAfterAll: (closable: { close: () => Promise<void> }) => {
      extras.push(closable);
    },
  } as ClientLibrarySuite;

  beforeAll(async () => {
    process.env['REGION'] = 'eu';
    ({ t: suite.t, inst: suite.inst } = await bootInstallation());
    suite.membershipId = suite.inst.membership._id as string;
    suite.proxy = await ServiceProxy.start(suite.t.url);
    suite.apis.nest = await startTestApi('nest', suite.settings());
    suite.apis.express = await startTestApi('express', suite.settings());
    suite.clerk = await createUserWithRole(suite.t, suite.inst, 'clerk', ['orders.read', 'orders.delete.o-1', 'reports-eu.*', 'drafts.write']);
    suite.reader = await createUserWithRole(suite.t, suite.inst, 'reader', ['orders.read.o-1', 'audit.read']);
    suite.lister = await createUserWithRole(suite.t, suite.inst, 'lister', ['orders.read.%7BorderId%7D', 'admin.manage.%7Bsection%7D']);
  });
  beforeEach(() => {
    suite.proxy.reset();
    process.env['REGION'] = 'eu';
  });
  afterAll(async () => {
    if (savedRegion === undefined) delete process.env['REGION'];
    else process.env['REGION'] = savedRegion;
    for (const closable of [...extras, suite.apis.nest, suite.apis.express, suite.proxy]) await closable?.close();
    await suite.t?.close();
  });
  return suite;
}
