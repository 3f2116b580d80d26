import { Body, Controller, HttpCode, Param, Put, Query } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { ClientAddress, CurrentActor, CurrentCaller, CurrentDecision, type RequestActor, RequirePermission } from '../common/access-decorators';
import { ActionRoute, BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ReplaceRoute, SearchRoute } from '../common/crud/crud-routes';
import { type Listing, ListingRoutes } from '../common/crud/listing-routes';
import { UserResource } from '../openapi/resource-schemas';
import type { ListPage, ListRequest } from '../common/query';
import type { Decision } from '../permissions';
import {
  ChangePasswordDto,
  CreateUserBodyDto,
  CreateUserBodyPipe,
  type CreateUserFieldsDto,
  UpdateUserBodyDto,
  UpdateUserBodyPipe,
  type UserFieldsDto,
  type UserInput,
} from './user.dto';
import type { UserResponse } from './user.mapper';
import { UserPasswordService } from './user-password.service';
import { UsersService } from './users.service';
import { ApiRoute } from '../common/api-route';

const SORTABLE = '_id, email_address, role, sys.created_at';

const WITH_CUSTOM_FIELDS = 'The user with its custom fields';

const CUSTOM_FIELDS_NOTE =
  'Custom fields of the user type stand at the top level beside these fields; they are checked against the type (unknown fields are 400).';

/** POST :id/activate and :id/freeze: one route but for the state it sets. */
function SetActiveRoute(action: 'activate' | 'freeze', summary: string): MethodDecorator {
  return ActionRoute({ path: `:id/${action}`, permission: 'users.update', summary, answer: UserResource, answerDescription: WITH_CUSTOM_FIELDS });
}

@Controller('memberships/:membershipId/users')
@ListingRoutes({
  tag: 'users',
  permission: 'users.read',
  sortable: SORTABLE,
  items: UserResource,
  list: { summary: 'List users (skip, limit, with_count, sort)' },
  query: {
    summary: 'Query users with {where, select}; custom fields are filtered by their names (dotted paths go inside them)',
    example: { where: { is_active: true, role: 'admin' }, select: { username: 1, email_address: 1 } },
  },
})
export class UsersController implements Listing {
  constructor(
    private readonly users: UsersService,
    private readonly passwords: UserPasswordService,
  ) {}

  listPage(caller: Caller, { query, ...body }: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>> {
    return this.users.list(caller, membershipId, query, body);
  }

  @SearchRoute({
    permission: 'users.read',
    summary: 'Users whose username, e-mail address, first or last name contains the keyword (case-insensitive)',
    sortable: SORTABLE,
    items: UserResource,
    keywordExample: 'ada',
  })
  search(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query('keyword') keyword: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.users.search(caller, membershipId, keyword, query);
  }

  @CreateRoute({
    permission: 'users.create',
    summary: 'Create a user',
    description: CUSTOM_FIELDS_NOTE,
    body: CreateUserBodyDto,
    answer: UserResource,
    answerDescription: 'The user with its custom fields (never the password hash)',
  })
  create(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    @Body(CreateUserBodyPipe) input: UserInput<CreateUserFieldsDto>,
  ): Promise<UserResponse> {
    return this.users.create(membershipId, caller, input);
  }

  @GetRoute({ permission: 'users.read', summary: 'Get a user (a user may read itself)', answer: UserResource, answerDescription: WITH_CUSTOM_FIELDS })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<UserResponse> {
    return this.users.get(membershipId, id);
  }

  @ReplaceRoute({
    permission: 'users.update',
    summary: 'Replace a user (not its password)',
    description: `${CUSTOM_FIELDS_NOTE} A user may change its own firstname, lastname and custom fields; anything else needs users.update.`,
    body: UpdateUserBodyDto,
    answer: UserResource,
    answerDescription: WITH_CUSTOM_FIELDS,
  })
  update(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @CurrentDecision() decision: Decision | undefined,
    @Body(UpdateUserBodyPipe) input: UserInput<UserFieldsDto>,
  ): Promise<UserResponse> {
    return this.users.update(membershipId, id, caller, decision, input);
  }

  @Put(':id/change-password')
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiRoute({
    summary: "Change a user's password",
    description:
      'The user itself sends {current_password, password} (a wrong current password is 400 InvalidCurrentPassword and a failed sign-in; a locked user answers 429); ' +
      'another caller holding users.update.{id} sends {password} alone. The new password may not equal the current one. ' +
      "Revokes the user's sessions: all of them, or all but the caller's own when users change their own password.",
    answers: [{ status: 204, description: 'Changed' }],
    errors: [400, 403, 404, 429],
  })
  async changePassword(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: ChangePasswordDto,
    @ClientAddress() clientAddress: string,
  ): Promise<void> {
    await this.passwords.changePassword(membershipId, id, caller, body, clientAddress);
  }

  @SetActiveRoute('activate', 'Activate a user (is_active = true)')
  activate(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: RequestActor): Promise<UserResponse> {
    return this.users.setActive(membershipId, id, actor.caller, actor.decision, true);
  }

  @SetActiveRoute('freeze', 'Freeze a user (is_active = false) and revoke all its tokens')
  freeze(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: RequestActor): Promise<UserResponse> {
    return this.users.setActive(membershipId, id, actor.caller, actor.decision, false);
  }

  @DeleteRoute({ permission: 'users.delete', summary: 'Delete a user and revoke its tokens' })
  async remove(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.users.remove(membershipId, id, caller);
  }

  @BulkDeleteRoute({ permission: 'users.delete', summary: 'Delete several users: {"ids": [...]}' })
  removeMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    @Body() body: unknown,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.users.removeMany(membershipId, body, caller);
  }
}
