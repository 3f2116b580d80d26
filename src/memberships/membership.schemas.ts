import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SysSchema } from '../common/api-docs';
import { MailProviderSchema } from './mail-provider';

/** `otp_settings` as a membership answer shows it: every field filled in (defaults included). */
export class OtpSettingsSchema {
  @ApiProperty({ example: false }) enabled!: boolean;
  @ApiProperty({ example: 6, description: 'Characters' }) length!: number;
  @ApiProperty({ example: false }) contains_letters!: boolean;
  @ApiProperty({ example: true }) contains_digits!: boolean;
  @ApiProperty({ example: 600, description: 'Lifetime, seconds' }) expires_in!: number;
}

/** `sign_in_policy` as a membership answer shows it: every field filled in (defaults included). */
export class SignInPolicySchema {
  @ApiProperty({ example: 10, description: 'Failures of one login within the window that lock it' }) max_failures!: number;
  @ApiProperty({ example: 900, description: 'The window, seconds' }) window_seconds!: number;
  @ApiProperty({ example: 60, description: 'The first lock, seconds; each further lock without a success in between doubles it, up to 86400' })
  lock_seconds!: number;
}

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
  @ApiProperty({ type: OtpSettingsSchema, description: 'One-time passwords in reset mails' }) otp_settings!: OtpSettingsSchema;
  @ApiProperty({ type: SignInPolicySchema, description: 'Sign-in defenses of the membership' }) sign_in_policy!: SignInPolicySchema;
  @ApiProperty({ type: String, nullable: true, description: 'Slug of the token code policy device codes follow; null: the defaults' }) code_policy!: string | null;
  @ApiProperty() is_system!: boolean;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}

/** 201 of POST /memberships. */
export class ProvisionedMembershipSchema {
  @ApiProperty({ type: MembershipSchema }) membership!: MembershipSchema;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The first admin user, when one was given' }) user?: object;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The admin role' }) role!: object;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The application, with `secret` shown once' }) application?: object;
}

/** 201 of POST /setup: as POST /memberships answers, and its first admin user is always given, so always answered. */
export class SetUpInstallationSchema {
  @ApiProperty({ type: MembershipSchema }) membership!: MembershipSchema;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The first admin user' }) user!: object;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The admin role' }) role!: object;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The application, with `secret` shown once' }) application?: object;
}
