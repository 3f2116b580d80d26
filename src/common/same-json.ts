/**
 * Deep equality of JSON values, ignoring key order (jsonb does not keep it). A key holding
 * `undefined` counts as absent, as it does once serialized. Every "identical update" check
 * (409 IdenticalDocumentError) compares with this.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const aRecord = a as Record<string, unknown>;
    const bRecord = b as Record<string, unknown>;
    const aKeys = Object.keys(aRecord).filter((key) => aRecord[key] !== undefined);
    const bKeys = Object.keys(bRecord).filter((key) => bRecord[key] !== undefined);
    if (aKeys.length !== bKeys.length) return false;
    return aKeys.every((key) => bRecord[key] !== undefined && sameJson(aRecord[key], bRecord[key]));
  }
  return false;
}
