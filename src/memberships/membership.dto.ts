import { Type } from 'class-transformer';
import {
  IsEmail,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const USERNAME_PATTERN = /^[A-Za-z0-9._@+-]{1,128}$/;

export class NewMembershipDto {
  @IsString() @Length(1, 128) name!: string;
  @IsOptional() @IsString() @Matches(SLUG_PATTERN, { message: 'must be lower-case letters, digits and dashes (1-64)' })
  slug?: string;
  @IsOptional() @IsInt() @Min(1) @Max(31_536_000) expires_in?: number;
  @IsOptional() @IsInt() @Min(1) @Max(31_536_000) refresh_token_expires_in?: number;
  @IsOptional() @IsInt() @Min(1) @Max(31_536_000) scoped_token_expires_in?: number;
}

export class FirstAdminUserDto {
  @IsString() @Matches(USERNAME_PATTERN, { message: 'must be 1-128 letters, digits or ._@+-' }) username!: string;
  @IsEmail() @MaxLength(254) email_address!: string;
  @IsString() @Length(8, 256) password!: string;
  @IsOptional() @IsString() @MaxLength(128) firstname?: string;
  @IsOptional() @IsString() @MaxLength(128) lastname?: string;
}

export class FirstApplicationDto {
  @IsString() @Length(1, 128) name!: string;
}

/** Body of POST /setup; POST /memberships takes the same shape. */
export class ProvisionMembershipDto {
  @ValidateNested() @Type(() => NewMembershipDto) membership!: NewMembershipDto;
  @ValidateNested() @Type(() => FirstAdminUserDto) user!: FirstAdminUserDto;
  @IsOptional() @ValidateNested() @Type(() => FirstApplicationDto) application?: FirstApplicationDto;
}
