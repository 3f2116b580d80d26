import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { Omittable, SlugReferenceField } from '../common/dto-fields';
import type { FieldError } from '../common/errors';
import { IsEmailAddress, IsUsername } from '../common/patterns';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-hasher';
import { fieldErrorsOf, requireJsonObject, splitBody, validateDto } from '../common/request-body';
import { validationFailure } from '../common/validation';

/** Own permissions or forbidden entries a user may carry; each is checked as a permission expression. */
export const MAX_USER_PERMISSIONS = 200;

/** The fields PUT replaces: everything of the create body except the password. */
export class UserFieldsDto {
  @ApiProperty({ example: 'alice', description: '1-128 letters, digits or ._@+-; unique in the membership, case-insensitive' })
  @IsString()
  @IsUsername()
  username!: string;

  @ApiProperty({ example: 'alice@example.com', description: 'Unique in the membership; stored lower case' })
  @IsEmailAddress()
  @MaxLength(254)
  email_address!: string;

  @ApiPropertyOptional({ type: String, maxLength: 128, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  firstname?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: 128, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  lastname?: string | null;

  @SlugReferenceField({ example: 'admin', description: 'Slug of an existing role of the membership' })
  role?: string | null;

  @SlugReferenceField({ description: 'Slug of an existing user type (for example `employee`); its properties validate the custom fields' })
  user_type?: string | null;

  @ApiPropertyOptional({ type: [String], example: ['webhooks.read'], description: 'Own permission expressions' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_USER_PERMISSIONS)
  permissions?: unknown[];

  @ApiPropertyOptional({ type: [String], example: [], description: 'Denied permission expressions' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_USER_PERMISSIONS)
  forbidden?: unknown[];

  @ApiPropertyOptional({
    description:
      'On create: defaults from the membership user_activation (active: true, passive: false). On PUT: left out keeps the current state.',
  })
  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

export class CreateUserFieldsDto extends UserFieldsDto {
  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH, format: 'password', example: 'correct horse battery' })
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH)
  password!: string;
}

/** For the API description: custom fields of the user type stand beside these at the top level. */
export class CreateUserBodyDto extends CreateUserFieldsDto {}
export class UpdateUserBodyDto extends UserFieldsDto {}

export class ChangePasswordDto {
  @ApiPropertyOptional({
    maxLength: MAX_PASSWORD_LENGTH,
    format: 'password',
    description: 'Required when users change their own password; not accepted from another caller',
  })
  @Omittable()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  current_password?: string;

  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH, format: 'password', example: 'a new long password' })
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH)
  password!: string;
}

export interface UserInput<T extends UserFieldsDto> {
  fields: T;
  /** Every other key of the body: custom fields, validated later against the user's type. */
  customFields: Record<string, unknown>;
}

const USER_FIELDS = [
  'username',
  'email_address',
  'firstname',
  'lastname',
  'role',
  'user_type',
  'permissions',
  'forbidden',
  'is_active',
] as const;

/** Fields of a user the service manages; a body naming one is refused with a reason. */
const SERVER_MANAGED: Record<string, string> = {
  _id: 'is assigned by the service and cannot be set',
  membership_id: 'is assigned by the service and cannot be set',
  sys: 'is managed by the service and cannot be set',
  source_provider: 'is set by the service for users who came from a provider',
  password_hash: 'cannot be set',
};

abstract class UserBodyPipe<T extends UserFieldsDto> implements PipeTransform<unknown, Promise<UserInput<T>>> {
  protected abstract readonly dto: new () => T;
  protected abstract readonly fieldNames: ReadonlySet<string>;
  protected abstract readonly refused: Record<string, string>;

  async transform(value: unknown, _metadata: ArgumentMetadata): Promise<UserInput<T>> {
    const body = requireJsonObject(value);
    const { known, rest } = splitBody(body, this.fieldNames);
    const errors: FieldError[] = [];
    for (const key of Object.keys(rest)) {
      if (Object.hasOwn(this.refused, key)) {
        errors.push({ field: key, message: this.refused[key] });
        delete rest[key];
      }
    }
    let fields: T | undefined;
    try {
      fields = await validateDto(this.dto, known);
    } catch (error) {
      errors.push(...fieldErrorsOf(error));
    }
    if (errors.length || !fields) throw validationFailure(errors);
    return { fields, customFields: rest };
  }
}

/** POST body: the user's own fields through the DTO; the rest are custom fields. */
@Injectable()
export class CreateUserBodyPipe extends UserBodyPipe<CreateUserFieldsDto> {
  protected readonly dto = CreateUserFieldsDto;
  protected readonly fieldNames: ReadonlySet<string> = new Set([...USER_FIELDS, 'password']);
  protected readonly refused = SERVER_MANAGED;
}

/** PUT body: as create, without the password (it has its own route). */
@Injectable()
export class UpdateUserBodyPipe extends UserBodyPipe<UserFieldsDto> {
  protected readonly dto = UserFieldsDto;
  protected readonly fieldNames: ReadonlySet<string> = new Set(USER_FIELDS);
  protected readonly refused: Record<string, string> = {
    ...SERVER_MANAGED,
    password: 'cannot be changed with PUT; use PUT /memberships/{membershipId}/users/{id}/change-password',
  };
}

/** The body of POST/GET /users/check-password. */
export class CheckPasswordDto {
  @ApiPropertyOptional({ format: 'password', example: 'correct horse battery', description: 'The password to check; wins over ?password=' })
  @IsOptional()
  @IsString()
  password?: string;
}

export class CheckPasswordAnswerSchema {
  @ApiProperty({ example: true }) valid!: boolean;
}
