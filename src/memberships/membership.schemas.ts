import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SysSchema } from '../common/api-docs';
import { MailProviderSchema } from './mail-provider';
import { OtpSettingsDto } from './otp-settings';
import { SignInPolicyDto } from './sign-in-policy';

/** OpenAPI description of a membership answer (built by toMembershipResponse). */
export class MembershipSchema {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiPropertyOptional({ description: 'Only for holders of memberships.read on this membership' }) secret_key?: string;
  @ApiProperty() expires_in!: number;
  @ApiProperty() refresh_token_expires_in!: number;
  @ApiProperty({ nullable: true, type: Number }) scoped_token_expires_in!: number | null;
  @ApiProperty({ enum: ['ARGON2ID'] }) hash_algorithm!: string;
  @ApiProperty({ enum: ['active', 'passive'] }) user_activation!: string;
  @ApiProperty({ enum: ['optional', 'required'], description: 'Second factors at sign-in' }) mfa_policy!: string;
  @ApiProperty({ type: [MailProviderSchema] }) mail_providers!: MailProviderSchema[];
  @ApiProperty({ type: OtpSettingsDto, description: 'One-time passwords in reset mails (every field filled in)' }) otp_settings!: OtpSettingsDto;
  @ApiProperty({ type: SignInPolicyDto, description: 'Sign-in defenses of the membership (every field filled in)' }) sign_in_policy!: SignInPolicyDto;
  @ApiProperty({ type: String, nullable: true, description: 'Slug of the token code policy device codes follow; null: the defaults' }) code_policy!: string | null;
  @ApiProperty() is_system!: boolean;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}

/** 201 of POST /memberships (and of POST /setup). */
export class ProvisionedMembershipSchema {
  @ApiProperty({ type: MembershipSchema }) membership!: MembershipSchema;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The first admin user, when one was given' }) user?: object;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The admin role' }) role!: object;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The application, with `secret` shown once' }) application?: object;
}
