import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Allow, IsOptional } from 'class-validator';
import { Authenticated, CurrentCaller } from '../auth/decorators';
import type { Caller } from '../auth/caller';
import { CallerPermissions } from '../auth/caller-permissions';
import { DomainError } from '../common/errors';
import { escapePermissionSegment, PermissionExpression, type Decision } from '../permissions';

export class CheckPermissionDto {
  @IsOptional() @Allow() permission?: unknown;
}

/**
 * What client libraries ask before letting a request into a protected API. An expression
 * without a subject is checked for the caller itself.
 */
@Controller('roles')
export class PermissionCheckController {
  constructor(private readonly permissions: CallerPermissions) {}

  @Get('check-permission')
  @Authenticated()
  checkFromQuery(@CurrentCaller() caller: Caller, @Query('permission') permission: unknown): Promise<Decision> {
    return this.check(caller, permission);
  }

  @Post('check-permission')
  @Authenticated()
  @HttpCode(200)
  checkFromBody(@CurrentCaller() caller: Caller, @Body() body: CheckPermissionDto, @Query('permission') permission: unknown): Promise<Decision> {
    return this.check(caller, body.permission ?? permission);
  }

  private async check(caller: Caller, permission: unknown): Promise<Decision> {
    if (permission === undefined || permission === null || permission === '') {
      throw new DomainError('PermissionRequired', 'The permission to check is required (query ?permission= or body {"permission"})');
    }
    if (typeof permission !== 'string') throw new DomainError('InvalidPermission', 'The permission must be a string');
    let required = PermissionExpression.parse(permission);
    if (permission.split('.').length < 4) required = required.withSubject(escapePermissionSegment(caller.id));
    const decision = await this.permissions.decide(caller, required);
    return { allowed: decision.allowed, permission: decision.permission, reason: decision.reason };
  }
}
