import { Controller, Param } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { ActionRoute } from '../common/crud/crud-routes';
import { ApiAuth } from '../common/openapi';
import { MailProvidersService, type MailProviderTestAnswer } from './mail-providers.service';

class MailProviderTestAnswerDto {
  @ApiProperty({ example: false }) ok!: boolean;
  @ApiPropertyOptional({ example: '535 Authentication failed', description: 'SMTP code and text, or the network error (at most 500 characters); only when ok is false' })
  error?: string;
}

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
