import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/* The answer of a mail provider's connection test. */

export class MailProviderTestAnswerDto {
  @ApiProperty({ example: false }) ok!: boolean;
  @ApiPropertyOptional({ example: '535 Authentication failed', description: 'SMTP code and text, or the network error (at most 500 characters); only when ok is false' })
  error?: string;
}
