/**
 * What the access guard decided for a request, as the request carries it (`CurrentDecision`).
 * The shape lives here, below permissions/, because common's request decorators hand it on;
 * permissions/decide.ts computes it.
 */
export type DecisionReason = 'role_permission' | 'own_permission' | 'own_record' | 'forbidden' | 'no_permission' | 'scope';

export interface Decision {
  allowed: boolean;
  reason: DecisionReason;
  /** The normalized required expression. */
  permission: string;
}
