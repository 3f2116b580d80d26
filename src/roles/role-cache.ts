import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import { PermissionExpression } from '../permissions';
import { RoleRepository } from './role.repository';

export interface RolePermissions {
  permissions: readonly PermissionExpression[];
  forbidden: readonly PermissionExpression[];
}

/** Roles change rarely and are read on every request: cached per instance for up to 5 minutes. */
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
export class RoleCache {
  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    private readonly roles: RoleRepository,
  ) {}

  private key(membershipId: string, slug: string): string {
    return `role:${membershipId}:${slug}`;
  }

  async permissionsOf(membershipId: string, slug: string | null): Promise<RolePermissions> {
    if (!slug) return NO_ROLE;
    const key = this.key(membershipId, slug);
    const cached = await this.cache.get<RolePermissions>(key);
    if (cached) return cached;
    const role = await this.roles.findBySlug(membershipId, slug);
    const value: RolePermissions = role
      ? { permissions: parseStored(role.permissions), forbidden: parseStored(role.forbidden) }
      : NO_ROLE;
    await this.cache.set(key, value, ROLE_CACHE_TTL_MS);
    return value;
  }

  /** Called by the instance that changed the role, so the change is visible there at once. */
  async invalidate(membershipId: string, slug: string): Promise<void> {
    await this.cache.del(this.key(membershipId, slug));
  }
}
