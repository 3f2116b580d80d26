import { Controller, Param, UseInterceptors } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ActionRoute } from '../common/crud/crud-routes';
import { SearchableMembershipResourceController } from '../common/crud/membership-resource.controller';
import { ApplicationBodyDto, ApplicationSchema, ApplicationWithSecretSchema } from './application.dto';
import type { ApplicationResponse } from './application.mapper';
import { APPLICATION_SORTABLE_FIELDS } from './application.repository';
import { ApplicationsService, type ApplicationWithSecret } from './applications.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

@Controller('memberships/:membershipId/applications')
@UseInterceptors(EventRecordingInterceptor)
export class ApplicationsController extends SearchableMembershipResourceController<ApplicationBodyDto, ApplicationResponse, ApplicationWithSecret>({
  resource: 'applications',
  names: { one: 'an application', many: 'applications' },
  item: ApplicationSchema,
  body: ApplicationBodyDto,
  sortable: APPLICATION_SORTABLE_FIELDS,
  query: { summary: 'Query applications with where/select', example: { where: { is_active: true }, select: { name: 1, slug: 1 } } },
  search: { summary: 'Applications whose name, slug or description contain the keyword (case-insensitive)' },
  get: { summary: 'Get an application (never its secret)' },
  create: { summary: 'Create an application; the answer shows its secret once', answer: ApplicationWithSecretSchema },
  // Operation ids from before the shared handlers (update, bulkDelete), kept for generated clients.
  replace: { summary: 'Replace an application (the secret is kept)', operationId: 'Applications_update' },
  delete: { summary: 'Delete an application; its Basic token stops working at once' },
  deleteMany: { operationId: 'Applications_bulkDelete' },
}) {
  constructor(private readonly applications: ApplicationsService) {
    super(applications);
  }

  @ActionRoute({
    path: ':id/secret',
    permission: 'applications.update',
    summary: 'Rotate the secret: the answer shows the new one once; the old one stops working at once',
    answer: ApplicationWithSecretSchema,
  })
  rotateSecret(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ApplicationWithSecret> {
    return this.applications.rotateSecret(caller, membershipId, id);
  }
}
