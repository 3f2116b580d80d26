import { QUERY_LIMITS, invalidQuery, isPlainObject, quote, resolvePath } from './field-path';
import type { QuerySchema } from './query-schema';

/** A parsed `select`: the response fields to keep (include) or drop (exclude), as dotted paths split. */
export interface Projection {
  mode: 'include' | 'exclude';
  paths: string[][];
}

const ID = '_id';

function selectValue(path: string, value: unknown): boolean {
  if (value === 1 || value === true) return true;
  if (value === 0 || value === false) return false;
  throw invalidQuery('select', `the value for ${quote(path)} must be 1 (include) or 0 (exclude)`);
}

/**
 * Parses `select` ({"event_type": 1, "document.username": 1}): all values 1/true (include) or all
 * 0/false (exclude). Undefined when absent, null or empty. Unknown and hidden fields are refused.
 */
export function parseSelect(schema: QuerySchema, select: unknown): Projection | undefined {
  if (select === undefined || select === null) return undefined;
  if (!isPlainObject(select)) throw invalidQuery('select', 'must be a JSON object such as {"field": 1}');
  const keys = Object.keys(select);
  if (keys.length === 0) return undefined;
  if (keys.length > QUERY_LIMITS.maxSelectPaths) {
    throw invalidQuery('select', `has more than ${QUERY_LIMITS.maxSelectPaths} fields`);
  }

  let mode: Projection['mode'] | undefined;
  const paths: string[][] = [];
  for (const key of keys) {
    const include = selectValue(key, select[key]);
    const keyMode = include ? 'include' : 'exclude';
    if (mode !== undefined && mode !== keyMode) {
      throw invalidQuery('select', 'values must be all 1 (fields to return) or all 0 (fields to leave out), not both');
    }
    mode = keyMode;
    // _id is always there; it needs no schema entry to be named.
    if (key !== ID) resolvePath(schema, key, 'select');
    paths.push(key.split('.'));
  }
  return mode === undefined ? undefined : { mode, paths };
}

/** A path tree: `true` takes the whole value at that key, a subtree projects below it. */
type PathTree = Map<string, PathTree | true>;

function buildTree(paths: readonly string[][]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    let node = root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i];
      const existing = node.get(key);
      if (i === path.length - 1) {
        node.set(key, true); // the whole value wins over any deeper path
        break;
      }
      if (existing === true) break; // already taken whole
      if (existing === undefined) {
        const child: PathTree = new Map();
        node.set(key, child);
        node = child;
      } else {
        node = existing;
      }
    }
  }
  return root;
}

/** Sets a property without ever touching a prototype, whatever the key (`__proto__` included). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function includeObject(source: Record<string, unknown>, tree: PathTree, keepId: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Walking the source keeps the response's own field order.
  for (const key of Object.keys(source)) {
    const sub = tree.get(key);
    if (sub === true || (keepId && key === ID)) put(out, key, source[key]);
    else if (sub !== undefined) {
      const projected = includeValue(source[key], sub);
      if (projected !== undefined) put(out, key, projected);
    }
  }
  return out;
}

/** As MongoDB: a path into an array projects each object in it; a path into a scalar yields nothing. */
function includeValue(value: unknown, tree: PathTree): unknown {
  if (isPlainObject(value)) return includeObject(value, tree, false);
  if (Array.isArray(value)) {
    return value
      .map((item: unknown) => includeValue(item, tree))
      .filter((item: unknown) => item !== undefined);
  }
  return undefined;
}

function excludeObject(source: Record<string, unknown>, tree: PathTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const sub = tree.get(key);
    if (sub === true) continue;
    put(out, key, sub === undefined ? source[key] : excludeValue(source[key], sub));
  }
  return out;
}

function excludeValue(value: unknown, tree: PathTree): unknown {
  if (isPlainObject(value)) return excludeObject(value, tree);
  if (Array.isArray(value)) return value.map((item: unknown) => excludeValue(item, tree));
  return value;
}

/**
 * Applies a projection to an already-built response object (same field names as the schema).
 * Include mode always keeps `_id`; dotted paths project into nested objects. The input is not modified.
 */
export function applyProjection<T extends Record<string, unknown>>(
  doc: T,
  projection: Projection | undefined,
): Record<string, unknown> {
  if (projection === undefined) return doc;
  const tree = buildTree(projection.paths);
  return projection.mode === 'include' ? includeObject(doc, tree, true) : excludeObject(doc, tree);
}
