import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import type { Caller } from '../common/caller';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { type ConsentView, Consents } from './consents';

class ConsentSchema {
  @ApiProperty({ description: 'The client (application) id', example: '3f0c6f1e-2b0a-4c1e-9d7e-5a8b6c4d2e10' }) client_id!: string;
  @ApiProperty({ type: [String], example: ['openid', 'profile', 'email'] }) scopes!: string[];
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) created_at!: string;
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) updated_at!: string;
}

/** Remembered consent to OpenID Provider clients (contract "Single sign-on"): the user itself, or users.read / users.update. */
@ApiTags('openid-provider')
@ApiParam({ name: 'membershipId' })
@ApiParam({ name: 'id', description: 'The user id' })
@Controller('memberships/:membershipId/users/:id/consents')
export class ConsentsController {
  constructor(private readonly consents: Consents) {}

  @Get()
  @RequirePermission('users.read', { object: 'id' })
  @ApiOperation({ summary: "A user's remembered consents to OpenID Connect clients", description: 'The user itself, or a caller holding users.read.{id}.' })
  @ApiAuth()
  @ApiResponse({ status: 200, type: [ConsentSchema] })
  @ApiErrors(403, 404)
  list(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ConsentView[]> {
    return this.consents.list(membershipId, id);
  }

  @Get(':clientId')
  @RequirePermission('users.read', { object: 'id' })
  @ApiOperation({ summary: "A user's consent to one client", description: 'The user itself, or a caller holding users.read.{id}.' })
  @ApiParam({ name: 'clientId', description: 'The client (application) id' })
  @ApiAuth()
  @ApiResponse({ status: 200, type: ConsentSchema })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('clientId') clientId: string): Promise<ConsentView> {
    return this.consents.get(membershipId, id, clientId);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiOperation({ summary: "Forget all of a user's consents", description: 'The user itself, or a caller holding users.update.{id}. OidcConsentRevoked per client.' })
  @ApiAuth()
  @ApiResponse({ status: 204, description: 'Forgotten' })
  @ApiErrors(403, 404)
  async revokeAll(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.consents.revoke(membershipId, id, caller.id);
  }

  @Delete(':clientId')
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiOperation({ summary: "Forget a user's consent to one client", description: 'The user itself, or a caller holding users.update.{id}. OidcConsentRevoked; the next authorization asks again.' })
  @ApiParam({ name: 'clientId', description: 'The client (application) id' })
  @ApiAuth()
  @ApiResponse({ status: 204, description: 'Forgotten' })
  @ApiErrors(403, 404)
  async revoke(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('clientId') clientId: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.consents.revoke(membershipId, id, caller.id, clientId);
  }
}
