import { Controller, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActionRoute } from '../common/crud/crud-routes';
import { ApiAuth } from '../common/openapi';
import { MailProviderTestAnswerDto } from './mail-provider.dto';
import { MailProvidersService, type MailProviderTestAnswer } from './mail-providers.service';

@ApiTags('memberships')
@ApiAuth()
@Controller('memberships/:membershipId/mail-providers')
export class MailProvidersController {
  constructor(private readonly providers: MailProvidersService) {}

  // The mail providers are the membership's settings: testing one needs the right to change the membership.
  @ActionRoute({
    path: ':slug/test',
    object: 'membershipId',
    permission: 'memberships.update',
    summary: 'Test a mail provider: connect, TLS and AUTH (no mail is sent)',
    answer: MailProviderTestAnswerDto,
  })
  test(@Param('membershipId') membershipId: string, @Param('slug') slug: string): Promise<MailProviderTestAnswer> {
    return this.providers.test(membershipId, slug);
  }
}
