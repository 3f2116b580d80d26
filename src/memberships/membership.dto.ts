import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { NameField, NestedObject, NestedObjects, OptionalIntField, OptionalNestedField, SlugField } from '../common/dto-fields';
import { IsUsername } from '../common/patterns';
import { MAX_MAIL_PROVIDERS, MailProviderDto } from './mail-provider';
import { OtpSettingsDto } from './otp-settings';
import { SignInPolicyDto } from './sign-in-policy';

/** `active`: new users start active; `passive`: new users start inactive (contract, "Memberships"). */
export const USER_ACTIVATION_MODES = ['active', 'passive'] as const;
export type UserActivationMode = (typeof USER_ACTIVATION_MODES)[number];
/** `optional`: a user signs in with a second factor once it has one; `required`: every user does (contract, "Second factors"). */
export const MFA_POLICIES = ['optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];
/** The only password hash the service offers for now. */
export const HASH_ALGORITHMS = ['ARGON2ID'] as const;

/** What a membership gets when its body leaves a setting out (on create and on a replacing PUT). */
export const MEMBERSHIP_DEFAULTS = {
  expiresIn: 3600,
  refreshTokenExpiresIn: 86400,
  scopedTokenExpiresIn: null,
  userActivation: 'active',
  mfaPolicy: 'optional',
  hashAlgorithm: 'ARGON2ID',
} as const;

const MAX_LIFETIME = 31_536_000;

/** The membership's own settings: the `membership` part of setup / POST /memberships, and the body of PUT /memberships/{id}. */
export class NewMembershipDto {
  @NameField({ example: 'Acme', description: 'Display name; also the token issuer (iss)' })
  name!: string;

  @SlugField({ example: 'acme', description: 'Token audience (aud); derived from the name on create when omitted, kept on update when omitted' })
  slug?: string;

  @OptionalIntField(1, MAX_LIFETIME, { example: 3600, description: 'Access token lifetime, seconds (default 3600)' })
  expires_in?: number;

  @OptionalIntField(1, MAX_LIFETIME, { example: 86400, description: 'Refresh token lifetime, seconds (default 86400)' })
  refresh_token_expires_in?: number;

  @OptionalIntField(1, MAX_LIFETIME, { type: 'integer', example: 43200, nullable: true, description: 'Scoped token lifetime, seconds (unset: 43200 applies)' })
  scoped_token_expires_in?: number | null;

  @ApiPropertyOptional({ enum: USER_ACTIVATION_MODES, description: 'active (default): new users start active; passive: new users start inactive' })
  @IsOptional()
  @IsIn(USER_ACTIVATION_MODES)
  user_activation?: UserActivationMode;

  @ApiPropertyOptional({
    enum: MFA_POLICIES,
    description: 'optional (default): users with a second factor use it at sign-in; required: every user signs in with one, enrolling TOTP at sign-in if it has none. Omitted on PUT: kept',
  })
  @IsOptional()
  @IsIn(MFA_POLICIES)
  mfa_policy?: MfaPolicy;

  @ApiPropertyOptional({ enum: HASH_ALGORITHMS, description: 'Password hash; ARGON2ID (default) is the only value for now' })
  @IsOptional()
  @IsIn(HASH_ALGORITHMS)
  hash_algorithm?: (typeof HASH_ALGORITHMS)[number];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 64, description: 'Slug of the token code policy device codes follow; null: the policy defaults' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  code_policy?: string | null;
}

/** A settings object of PUT /memberships/{id} that an omitted field keeps; null is not an object (IsOptional would let it through). */
const KeptSettingsField = (dto: new () => object, description: string): PropertyDecorator =>
  applyDecorators(ApiPropertyOptional({ type: dto, description }), ValidateIf((_, value) => value !== undefined), NestedObject(dto));

/** Body of PUT /memberships/{id}: the mutable fields, replaced as a whole. */
export class UpdateMembershipDto extends NewMembershipDto {
  @ApiPropertyOptional({
    type: [MailProviderDto],
    maxItems: MAX_MAIL_PROVIDERS,
    description: 'SMTP servers for mail hooks. Omitted: kept. Removing one a mail hook names: 409 MailProviderInUse',
  })
  // Omitted keeps the list; null is not a list (IsOptional would let it through to the service).
  @ValidateIf((_, value) => value !== undefined)
  @IsArray()
  @ArrayMaxSize(MAX_MAIL_PROVIDERS)
  @NestedObjects(MailProviderDto)
  mail_providers?: MailProviderDto[];

  @KeptSettingsField(OtpSettingsDto, 'One-time passwords in reset mails. Omitted: kept. contains_letters and contains_digits both false: 400')
  otp_settings?: OtpSettingsDto;

  @KeptSettingsField(SignInPolicyDto, 'Failed sign-ins per login before a lock, their window and the first lock (doubling up to a day). Omitted: kept')
  sign_in_policy?: SignInPolicyDto;
}

export class FirstAdminUserDto {
  @ApiProperty({ example: 'admin' })
  @IsString()
  @IsUsername()
  username!: string;

  @ApiProperty({ example: 'admin@acme.test' })
  @IsEmail()
  @MaxLength(254)
  email_address!: string;

  @ApiProperty({ example: 'correct horse battery', minLength: 8, maxLength: 256 })
  @IsString()
  @Length(8, 256)
  password!: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) firstname?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) lastname?: string;
}

export class FirstApplicationDto {
  @NameField({ example: 'backend' })
  name!: string;
}

/** Body of POST /setup: the first admin user is required there. */
export class ProvisionMembershipDto {
  @ApiProperty({ type: NewMembershipDto }) @IsDefined() @NestedObject(NewMembershipDto) membership!: NewMembershipDto;
  @ApiProperty({ type: FirstAdminUserDto }) @IsDefined() @NestedObject(FirstAdminUserDto) user!: FirstAdminUserDto;
  @OptionalNestedField(FirstApplicationDto)
  application?: FirstApplicationDto;
}

/**
 * Body of POST /memberships: the setup shape, but the first admin user is optional (a membership
 * may be provisioned empty and managed through an application, or filled in later).
 */
export class CreateMembershipDto {
  @ApiProperty({ type: NewMembershipDto }) @IsDefined() @NestedObject(NewMembershipDto) membership!: NewMembershipDto;
  @OptionalNestedField(FirstAdminUserDto)
  user?: FirstAdminUserDto;
  @OptionalNestedField(FirstApplicationDto)
  application?: FirstApplicationDto;
}

/** What the provisioner needs: setup's body and POST /memberships' body both fit. */
export type MembershipProvisionInput = CreateMembershipDto;
