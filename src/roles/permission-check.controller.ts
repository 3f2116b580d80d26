import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { type ApiQueryOptions, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentCaller } from '../common/access-decorators';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError } from '../common/errors';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { escapePermissionSegment, PermissionExpression, type Decision } from '../permissions';
import { ApiRoute } from '../common/api-route';
import { CheckPermissionDto, PermissionDecisionSchema } from './permission-check.dto';

const permissionQuery = (required: boolean): ApiQueryOptions => ({
  name: 'permission',
  required,
  type: String,
  description: 'Permission expression (subject.resource.action.object; with fewer segments the subject is the caller)',
  example: 'users.read',
});

const CHECK_DESCRIPTION =
  'Applies the role, the caller\'s own permissions and forbidden list, and the token scopes. ' +
  'Answers 200 whether allowed or not; 400 PermissionRequired / InvalidPermission for a missing or invalid expression.';

/**
 * What client libraries ask before letting a request into a protected API. An expression
 * without a subject is checked for the caller itself.
 */
@ApiTags('permissions')
@ApiAuth()
@ApiErrors(400)
@Controller('roles')
export class PermissionCheckController {
  constructor(private readonly permissions: CallerPermissions) {}

  @Get('check-permission')
  @Authenticated()
  @ApiRoute({
    summary: 'Check a permission for the caller (expression in the query)',
    description: CHECK_DESCRIPTION,
    query: [permissionQuery(true)],
    answers: [{ status: 200, description: 'The decision', type: PermissionDecisionSchema }],
  })
  checkFromQuery(@CurrentCaller() caller: Caller, @Query('permission') permission: unknown): Promise<Decision> {
    return this.check(caller, permission);
  }

  @Post('check-permission')
  @Authenticated()
  @HttpCode(200)
  @ApiRoute({
    summary: 'Check a permission for the caller (expression in the body or the query)',
    description: CHECK_DESCRIPTION,
    query: [permissionQuery(false)],
    body: { model: CheckPermissionDto, required: false },
    answers: [{ status: 200, description: 'The decision', type: PermissionDecisionSchema }],
    errors: [413, 415],
  })
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
