import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { MailProvidersService, type MailProviderTestAnswer } from './mail-providers.service';

class MailProviderTestAnswerDto {
  @ApiProperty({ example: false }) ok!: boolean;
  @ApiPropertyOptional({ example: '535 Authentication failed', description: 'SMTP code and text, or the network error (at most 500 characters); only when ok is false' })
  error?: string;
}

@ApiTags('memberships')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@ApiParam({ name: 'slug' })
@Controller('memberships/:membershipId/mail-providers')
export class MailProvidersController {
  constructor(private readonly providers: MailProvidersService) {}

  @Post(':slug/test')
  @HttpCode(200)
  @RequirePermission('memberships.update', { object: 'membershipId' })
  @ApiOperation({ summary: 'Test a mail provider: connect, TLS and AUTH (no mail is sent)' })
  @ApiResponse({ status: 200, type: MailProviderTestAnswerDto })
  @ApiErrors(403, 404)
  test(@Param('membershipId') membershipId: string, @Param('slug') slug: string): Promise<MailProviderTestAnswer> {
    return this.providers.test(membershipId, slug);
  }
}
