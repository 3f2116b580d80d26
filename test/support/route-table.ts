import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AUTHENTICATED_ONLY, IS_PUBLIC, type PermissionRequirement, REQUIRED_PERMISSION } from '../../src/common/access-decorators';

/** One route the HTTP server answers, with who may call it. */
export interface RouteEntry {
  method: string;
  /** Express path template, e.g. /memberships/:membershipId/users/:id */
  path: string;
  /**
   * `public`, `authenticated`, `permission <resource>.<action>[.:<param>]`, each followed by
   * ` + <Guard>` for extra guards; `NONE` when the route declares nothing (the access guard then
   * denies it) and `NOT A NEST ROUTE` for a route registered outside Nest (nothing guards it).
   */
  access: string;
}

type Handler = (...args: unknown[]) => unknown;
type Layer = { route?: { path: unknown; methods: Record<string, boolean> } };

/** Nest and Express keep a path as a string or a list of strings. */
const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : typeof value === 'string' ? [value] : [''];

function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((part) => part.split('/'))
    .filter((segment) => segment !== '')
    .join('/');
  return `/${joined}`;
}

/** The metadata lookup the access guard does: the handler's declaration wins over the class's. */
function declared<T>(key: string, handler: Handler, controller: object): T | undefined {
  const onHandler = Reflect.getMetadata(key, handler) as T | undefined;
  return onHandler !== undefined ? onHandler : (Reflect.getMetadata(key, controller) as T | undefined);
}

function accessOf(handler: Handler, controller: object): string {
  let access: string;
  if (declared<boolean>(IS_PUBLIC, handler, controller)) access = 'public';
  else {
    const requirement = declared<PermissionRequirement>(REQUIRED_PERMISSION, handler, controller);
    if (requirement) {
      access = `permission ${requirement.resource}.${requirement.action}${requirement.objectParam ? `.:${requirement.objectParam}` : ''}`;
    } else if (declared<boolean>(AUTHENTICATED_ONLY, handler, controller)) access = 'authenticated';
    else access = 'NONE';
  }
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? []),
  ];
  for (const guard of guards) access += ` + ${typeof guard === 'function' ? guard.name : 'guard'}`;
  return access;
}

/** Access declarations of every Nest controller route, by `METHOD path`. */
function nestDeclarations(app: NestExpressApplication): Map<string, string> {
  const declarations = new Map<string, string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => object) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      const names = new Set<string>();
      for (let proto: object | null = prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
        for (const name of Object.getOwnPropertyNames(proto)) names.add(name);
      }
      for (const name of names) {
        if (name === 'constructor') continue;
        const handler = prototype[name];
        if (typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const access = accessOf(handler as Handler, controller);
        for (const base of asList(Reflect.getMetadata(PATH_METADATA, controller))) {
          for (const sub of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
            declarations.set(`${RequestMethod[method]} ${joinPath(base, sub)}`, access);
          }
        }
      }
    }
  }
  return declarations;
}

/** Every route of the running app's Express router, sorted by path then method. */
export function routeTable(app: NestExpressApplication): RouteEntry[] {
  const declarations = nestDeclarations(app);
  const router = (app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } }).router;
  const entries: RouteEntry[] = [];
  for (const layer of router.stack) {
    if (!layer.route) continue;
    for (const path of asList(layer.route.path)) {
      for (const [method, enabled] of Object.entries(layer.route.methods)) {
        if (!enabled) continue;
        const upper = method === '_all' ? 'ALL' : method.toUpperCase();
        const normalized = joinPath(path);
        entries.push({ method: upper, path: normalized, access: declarations.get(`${upper} ${normalized}`) ?? 'NOT A NEST ROUTE' });
      }
    }
  }
  const order = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort((a, b) => order(a.path, b.path) || order(a.method, b.method));
}

/** The table as the lines the routes test keeps: `METHOD path  access`, columns aligned. */
export function formatRouteTable(entries: readonly RouteEntry[]): string[] {
  const methodWidth = Math.max(...entries.map((entry) => entry.method.length));
  const pathWidth = Math.max(...entries.map((entry) => entry.path.length));
  return entries.map((entry) => `${entry.method.padEnd(methodWidth)} ${entry.path.padEnd(pathWidth)} ${entry.access}`);
}
