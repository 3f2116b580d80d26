export {
  PermissionExpression,
  MAX_PERMISSION_LENGTH,
  WILDCARD,
  escapePermissionSegment,
  segmentsCover,
} from './permission-expression';
export type { PermissionSegments } from './permission-expression';
export { decide, holdsScope, isScopeSubset, OWN_RECORD_ACTIONS } from './decide';
export type { Decision, DecisionReason, PermissionHolder } from './decide';
