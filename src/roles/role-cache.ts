import { Inject, Injectable } from '@nestjs/common';
import { membershipScopedKey, RowCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { PermissionExpression } from '../permissions';
import { RoleRepository } from './role.repository';

export interface RolePermissions {
  permissions: readonly PermissionExpression[];
  forbidden: readonly PermissionExpression[];
}

/**
 * Roles change rarely and are read on every request: cached per instance for up to 5 minutes. A
 * change on another instance is heard within about a second (event-log/cached-settings.ts drops
 * the membership's roles on its NOTIFY); this lifetime bounds a change whose notification was lost.
 */
export const ROLE_CACHE_TTL_MS = 5 * 60 * 1000;

const NO_ROLE: RolePermissions = { permissions: [], forbidden: [] };

/** Stored expressions were validated on write; one that no longer parses grants nothing. */
export function parseStored(expressions: readonly string[]): PermissionExpression[] {
  const parsed: PermissionExpression[] = [];
  for (const text of expressions) {
    const expression = PermissionExpression.tryParse(text);
    if (expression) parsed.push(expression);
  }
  return parsed;
}

@Injectable()
export class RoleCache extends RowCache<RolePermissions> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly roles: RoleRepository,
  ) {
    super(config, { ttlMs: ROLE_CACHE_TTL_MS });
  }

  /** Role slugs come from stored users and applications, not from request text. */
  async permissionsOf(membershipId: string, slug: string | null): Promise<RolePermissions> {
    if (!slug) return NO_ROLE;
    // A missing role is remembered as NO_ROLE (it grants nothing), so the lookup always finds a value.
    const value = await this.read(membershipScopedKey(membershipId, slug), async () => {
      const role = await this.roles.findBySlug(membershipId, slug);
      return role ? { permissions: parseStored(role.permissions), forbidden: parseStored(role.forbidden) } : NO_ROLE;
    });
    return value ?? NO_ROLE;
  }

  /** Called by the instance that changed the role, so the change is visible there at once. */
  invalidate(membershipId: string, slug: string): void {
    this.forgetKey(membershipScopedKey(membershipId, slug));
  }

  /** Another instance changed a role of the membership (it does not say which). */
  forgetMembership(membershipId: string): void {
    this.forgetMembershipScoped(membershipId);
  }
}
