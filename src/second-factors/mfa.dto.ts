import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { Omittable } from '../common/dto-fields';
import { MAX_PASSWORD_LENGTH } from '../users/password-hasher';

/** Typed codes are short; anything longer is refused before any work. */
const MAX_CODE_LENGTH = 64;
/** An mfa_token is `<membership id>.<43 base64url characters>`. */
const MAX_MFA_TOKEN_LENGTH = 256;

/** `current_password`: may be left out (the service says where it is required), never null. */
const CurrentPassword = (required: boolean): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      maxLength: MAX_PASSWORD_LENGTH,
      format: 'password',
      description: required ? 'Required when users act on their own factors' : 'Checked when sent',
    }),
    Omittable(),
    IsString(),
    MaxLength(MAX_PASSWORD_LENGTH),
  );

/** Body of the self routes that need the current password (start TOTP, passkey options, new recovery codes, a self DELETE). */
export class CurrentPasswordDto {
  @CurrentPassword(true)
  current_password?: string;
}

export class ConfirmTotpDto {
  @ApiProperty({ example: '123456', maxLength: MAX_CODE_LENGTH, description: 'The 6-digit code the authenticator app shows now' })
  @IsString()
  @Length(1, MAX_CODE_LENGTH)
  code!: string;

  @CurrentPassword(false)
  current_password?: string;
}

export class RegisterPasskeyDto {
  @ApiProperty({ example: 'Laptop', minLength: 1, maxLength: 128, description: 'A name the user recognises the passkey by' })
  @IsString()
  @Length(1, 128)
  name!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The RegistrationResponseJSON of navigator.credentials.create (e.g. @simplewebauthn/browser startRegistration)' })
  @IsObject()
  response!: Record<string, unknown>;

  @CurrentPassword(false)
  current_password?: string;
}

/** Body of POST /generate-token/mfa: the mfa_token and exactly one factor. */
export class SecondStepDto {
  @ApiProperty({ maxLength: MAX_MFA_TOKEN_LENGTH, description: 'From the 401 MfaRequired answer of the first step' })
  @IsString()
  @MaxLength(MAX_MFA_TOKEN_LENGTH)
  mfa_token!: string;

  @ApiPropertyOptional({ example: '123456', maxLength: MAX_CODE_LENGTH, description: 'A TOTP code' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CODE_LENGTH)
  totp?: string;

  @ApiPropertyOptional({ example: 'BCDF-GH2345', maxLength: MAX_CODE_LENGTH, description: 'A recovery code (any case; spaces and dashes ignored)' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CODE_LENGTH)
  recovery_code?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'An AuthenticationResponseJSON for the options of /generate-token/mfa/webauthn-options' })
  @IsOptional()
  @IsObject()
  webauthn?: Record<string, unknown>;
}

/** Body of the second step's helper routes (passkey options, TOTP enrollment). */
export class MfaTokenDto {
  @ApiProperty({ maxLength: MAX_MFA_TOKEN_LENGTH })
  @IsString()
  @MaxLength(MAX_MFA_TOKEN_LENGTH)
  mfa_token!: string;
}

export class FactorStateSchema {
  @ApiProperty({
    type: 'object',
    properties: { enabled: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' } },
    required: ['enabled'],
  })
  totp!: { enabled: boolean; created_at?: string };

  @ApiProperty({
    type: 'array',
    items: {
      type: 'object',
      properties: {
        _id: { type: 'string' },
        name: { type: 'string' },
        created_at: { type: 'string', format: 'date-time' },
        last_used_at: { type: 'string', format: 'date-time', nullable: true },
      },
    },
  })
  webauthn!: PasskeyView[];

  @ApiProperty({ description: 'Unused recovery codes' })
  recovery_codes_left!: number;
}

export class TotpSecretSchema {
  @ApiProperty({ description: 'Base32 shared secret, shown only in this answer' }) secret!: string;
  @ApiProperty({ example: 'otpauth://totp/Acme:ada?secret=JBSWY3DPEHPK3PXP&issuer=Acme&algorithm=SHA1&digits=6&period=30' }) otpauth_uri!: string;
}

export class RecoveryCodesSchema {
  @ApiProperty({ type: [String], description: '10 single-use codes, shown only in this answer' }) recovery_codes!: string[];
}

export class PasskeySchema {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export interface PasskeyView {
  _id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface FactorState {
  totp: { enabled: boolean; created_at?: string };
  webauthn: PasskeyView[];
  recovery_codes_left: number;
}
