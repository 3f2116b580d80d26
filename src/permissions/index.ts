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
export { assertHoldsGrants, grantedBy, grantedByAssignment, holdsGrant, segmentsMeet, segmentsOverlap } from './grants';
export type { Assignment, GrantedLists, Granter } from './grants';
export { firstDeniedObject, forbiddenObjectIds, objectDecision, objectPermission } from './object-access';
