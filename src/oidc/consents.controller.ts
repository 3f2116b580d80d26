import { Delete, HttpCode, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import type { Caller } from '../common/caller';
import { ApiRoute } from '../common/api-route';
import { ReadUserRecordsRoute, UserRecordsController } from '../common/user-records-routes';
import { ApiAuth } from '../common/openapi';
import { type ConsentView, Consents } from './consents';
import { ConsentSchema } from './management.dto';

const CLIENT_ID_PARAM = { name: 'clientId', description: 'The client (application) id' };
const FORGOTTEN = { status: 204, description: 'Forgotten' };

/** Remembered consent to OpenID Provider clients (contract "Single sign-on"): the user itself, or users.read / users.update. */
@ApiTags('openid-provider')
@ApiAuth()
@UserRecordsController('consents')
export class ConsentsController {
  constructor(private readonly consents: Consents) {}

  @ReadUserRecordsRoute({ summary: "A user's remembered consents to OpenID Connect clients", type: [ConsentSchema] })
  list(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ConsentView[]> {
    return this.consents.list(membershipId, id);
  }

  @ReadUserRecordsRoute({ path: ':clientId', summary: "A user's consent to one client", params: [CLIENT_ID_PARAM], type: ConsentSchema })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('clientId') clientId: string): Promise<ConsentView> {
    return this.consents.get(membershipId, id, clientId);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiRoute({
    summary: "Forget all of a user's consents",
    description:
      "The user itself, or a caller holding users.update.{id}. OidcConsentRevoked per client; each client's grants to the user end (TokenRevoked, reason consent_revoked) with its codes not yet exchanged.",
    answers: [FORGOTTEN],
    errors: [403, 404],
  })
  async revokeAll(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.consents.revoke(membershipId, id, caller.id);
  }

  @Delete(':clientId')
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiRoute({
    summary: "Forget a user's consent to one client",
    description:
      "The user itself, or a caller holding users.update.{id}. OidcConsentRevoked; the client's grants to the user end (TokenRevoked, reason consent_revoked) with its codes not yet exchanged; the next authorization asks again.",
    params: [CLIENT_ID_PARAM],
    answers: [FORGOTTEN],
    errors: [403, 404],
  })
  async revoke(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('clientId') clientId: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.consents.revoke(membershipId, id, caller.id, clientId);
  }
}
