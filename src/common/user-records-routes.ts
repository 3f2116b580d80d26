import { applyDecorators, Controller, Get, type Type } from '@nestjs/common';
import { ApiParam, type ApiParamOptions } from '@nestjs/swagger';
import { RequirePermission } from './access-decorators';
import { ApiRoute } from './api-route';

/*
 * Routes of one user's own records under `memberships/{membershipId}/users/{id}/...` (second
 * factors, consents to OpenID Connect clients): who may read them is one rule, written once.
 */

/** The controller of such records at `path`, with both path parameters described once. */
export function UserRecordsController(path: string): ClassDecorator {
  return applyDecorators(Controller(`memberships/:membershipId/users/:id/${path}`), ApiParam({ name: 'id', description: 'The user id' }), ApiParam({ name: 'membershipId' }));
}

/** `GET <path>` of such records: the user itself, or a caller holding users.read.{id}; 200 with `type`, 403, 404. */
export function ReadUserRecordsRoute(docs: { path?: string; summary: string; type: Type<unknown> | [Type<unknown>]; params?: ApiParamOptions[] }): MethodDecorator {
  return applyDecorators(
    Get(docs.path),
    RequirePermission('users.read', { object: 'id' }),
    ApiRoute({
      summary: docs.summary,
      description: 'The user itself, or a caller holding users.read.{id}.',
      ...(docs.params === undefined ? {} : { params: docs.params }),
      answers: [{ status: 200, type: docs.type }],
      errors: [403, 404],
    }),
  );
}
