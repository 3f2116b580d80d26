import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';
import { IsEmailAddress } from '../common/patterns';
import { NamedResourceSchema, SysSchema } from '../common/api-docs';
import { DocumentedDescriptionField, NestedObjects, OptionalBooleanField } from '../common/dto-fields';
import { TRIGGER_EVENT_TYPES } from '../webhooks/webhook-template-rules';
import { MAX_SUBJECT_LENGTH } from './mail-template-rules';

export const MAIL_FORMATS = ['html', 'text'] as const;
export const MAX_RECIPIENTS = 50;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused (they would forge headers)
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
const PLAIN_TEXT = /^(?![\s\S]*\{\{)[^\u0000-\u001f\u007f]*$/; // eslint-disable-line no-control-regex -- as above

export class MailRecipientDto {
  @ApiPropertyOptional({ maxLength: 128, example: 'Support desk' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(PLAIN_TEXT, { message: 'must not hold control characters or placeholders' })
  display_name?: string;

  @ApiProperty({ example: 'support@example.com' })
  @IsDefined({ message: 'is required' })
  @IsEmailAddress()
  @MaxLength(254)
  email_address!: string;
}

/** Create and replace (PUT) take the same body. */
export class MailhookBodyDto {
  @ApiProperty({ example: 'Password reset mail', maxLength: 200 })
  @IsDefined({ message: 'is required' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @DocumentedDescriptionField(2000)
  description?: string | null;

  @ApiProperty({ enum: TRIGGER_EVENT_TYPES, example: 'UserPasswordReset', description: 'Any event type but a hook result' })
  @IsDefined({ message: 'is required' })
  @IsString()
  event!: string;

  @OptionalBooleanField({ default: true, description: 'Inactive hooks are kept, never sent' })
  is_active?: boolean;

  @ApiProperty({ example: 'relay', description: "Slug of an entry of the membership's mail_providers" })
  @IsDefined({ message: 'is required' })
  @IsString()
  mail_provider!: string;

  @ApiProperty({ example: 'no-reply@example.com' })
  @IsDefined({ message: 'is required' })
  @IsEmailAddress()
  @MaxLength(254)
  from_address!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 128, example: 'Acme accounts' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(NO_CONTROL, { message: 'must not hold control characters' })
  from_name?: string | null;

  @ApiProperty({ maxLength: MAX_SUBJECT_LENGTH, example: 'Reset your password, {{user.firstname}}', description: 'Placeholders allowed; mail-only values are not' })
  @IsDefined({ message: 'is required' })
  @IsString()
  mail_subject!: string;

  @ApiPropertyOptional({ enum: MAIL_FORMATS, default: 'html', description: 'html: values HTML-escaped; text: raw' })
  @IsOptional()
  @IsIn(MAIL_FORMATS, { message: `must be one of ${MAIL_FORMATS.join(', ')}` })
  mail_format?: (typeof MAIL_FORMATS)[number];

  @ApiProperty({
    example: '<p>Your reset link: https://app.example.com/reset?token={{reset_token}}</p>',
    description: 'At most 64 KiB and 1000 placeholders',
  })
  @IsDefined({ message: 'is required' })
  @IsString()
  mail_template!: string;

  @OptionalBooleanField({ default: false, example: true, description: 'Also mail the subject user of the event' })
  send_to_utilizer?: boolean;

  @ApiPropertyOptional({ type: [MailRecipientDto], maxItems: MAX_RECIPIENTS, description: 'Fixed addresses (no placeholders)' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_RECIPIENTS)
  @NestedObjects(MailRecipientDto)
  recipients?: MailRecipientDto[];
}

class MailRecipientSchema {
  @ApiPropertyOptional() display_name?: string;
  @ApiProperty() email_address!: string;
}

export class MailhookResponseDto extends NamedResourceSchema {
  @ApiProperty({ enum: TRIGGER_EVENT_TYPES }) event!: string;
  @ApiProperty() is_active!: boolean;
  @ApiProperty() mail_provider!: string;
  @ApiProperty() from_address!: string;
  @ApiProperty({ nullable: true, type: String }) from_name!: string | null;
  @ApiProperty() mail_subject!: string;
  @ApiProperty({ enum: MAIL_FORMATS }) mail_format!: string;
  @ApiProperty() mail_template!: string;
  @ApiProperty() send_to_utilizer!: boolean;
  @ApiProperty({ type: [MailRecipientSchema] }) recipients!: MailRecipientSchema[];
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}
