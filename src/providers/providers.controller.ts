import { Controller } from '@nestjs/common';
import { MembershipResourceController } from '../common/crud/membership-resource.controller';
import { ProviderBodyDto, ProviderSchema } from './provider.dto';
import type { ProviderResponse } from './provider.mapper';
import { PROVIDER_SORTABLE_FIELDS } from './provider.repository';
import { ProvidersService } from './providers.service';

/**
 * No EventRecordingInterceptor: the service opens its own transaction for each change, so that it
 * forgets the cached provider only once the change has committed (ProviderCache).
 */
@Controller('memberships/:membershipId/providers')
export class ProvidersController extends MembershipResourceController<ProviderBodyDto, ProviderResponse>({
  resource: 'providers',
  names: { one: 'a provider', many: 'providers' },
  item: ProviderSchema,
  body: ProviderBodyDto,
  sortable: PROVIDER_SORTABLE_FIELDS,
  list: { summary: 'List external identity providers' },
  query: { example: { where: { is_active: true }, select: { name: 1, issuer: 1 } }, bodyRequired: false },
  get: { summary: 'Get a provider (never its client secret)' },
  create: { summary: 'Create a provider (generic OpenID Connect; nothing is fetched from the issuer yet)' },
  replace: { summary: 'Replace a provider (same body as create; the slug is immutable); 409 IdenticalDocumentError when nothing changes' },
  delete: { summary: 'Delete a provider and its links to users (the users and their sessions stay)' },
}) {
  constructor(providers: ProvidersService) {
    super(providers);
  }
}
