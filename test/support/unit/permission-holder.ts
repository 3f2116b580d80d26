import type { PermissionHolder } from '../../../src/permissions/decide';
import { PermissionExpression } from '../../../src/permissions/permission-expression';

/** The holder's id when a spec does not name one. */
export const HOLDER_ID = 'u-alice';

/** A permission holder for specs, its expressions given as text. */
export interface HolderSpec {
  id?: string;
  kind?: 'user' | 'application';
  own?: string[];
  ownForbidden?: string[];
  role?: string[];
  roleForbidden?: string[];
  /** Absent: no token scopes are set; null: set to "no restriction". */
  scopes?: string[] | null;
}

const list = (texts: readonly string[] = []): PermissionExpression[] => texts.map((text) => PermissionExpression.parse(text));

/** Builds a PermissionHolder (a user named HOLDER_ID unless told otherwise). */
export function holder(spec: HolderSpec = {}): PermissionHolder {
  const built: PermissionHolder = {
    id: spec.id ?? HOLDER_ID,
    kind: spec.kind ?? 'user',
    ownPermissions: list(spec.own),
    ownForbidden: list(spec.ownForbidden),
    rolePermissions: list(spec.role),
    roleForbidden: list(spec.roleForbidden),
  };
  if (spec.scopes !== undefined) built.scopes = spec.scopes === null ? null : list(spec.scopes);
  return built;
}

/** Another subject's id, for expressions that name someone other than the holder. */
export const OTHER_ID = 'u-bob';

/** One row of a table about a holder and an expression: why, the holder, the expression, held or not. */
export type HoldingRow = [label: string, holder: HolderSpec, expression: string, held: boolean];

/**
 * One test per row, named by its label: `holds` (holdsGrant, holdsScope, …) answers `held` for
 * the row's holder and its expression.
 */
export function itAnswersHolding(holds: (holder: PermissionHolder, expression: PermissionExpression) => boolean, rows: HoldingRow[]): void {
  it.each(rows)('%s', (_label, spec, expression, held) => {
    expect(holds(holder(spec), PermissionExpression.parse(expression))).toBe(held);
  });
}

/**
 * Where holding a grant (holdsGrant) and holding a scope (holdsScope) answer alike: both specs run
 * these rows, so the rules the two share are written once.
 */
export const HELD_ALIKE_AS_GRANT_AND_SCOPE: HoldingRow[] = [
  ['the same permission', { role: ['users.read'] }, 'users.read', true],
  ['a wider action (the contract example)', { role: ['users.read'] }, 'users.*', false],
  ['nothing held', {}, 'users.read', false],
  ['held for the holder by name', { own: [`${HOLDER_ID}.users.read.*`] }, 'users.read', true],
  ['held only for another subject', { own: [`${OTHER_ID}.users.read.*`] }, 'users.read', false],
  ['outside the scopes', { role: ['*'], scopes: ['users.read'] }, 'roles.read', false],
  ['wider than the scopes', { role: ['*'], scopes: ['users.read'] }, 'users.*', false],
];
