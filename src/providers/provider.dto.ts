import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { DocumentedDescriptionField, NameField, NamedBodyDto, OptionalBooleanField, SlugField, SlugReferenceField } from '../common/dto-fields';
import { NamedResourceSchema, SysSchema } from '../common/api-docs';

export const PROVIDER_TYPES = ['oidc'] as const;

const ISSUER_DESCRIPTION =
  'https URL (http only for an IP literal that OUTBOUND_ALLOW permits); must equal the `issuer` of its discovery document. ' +
  'Presets (all generic OpenID Connect): Google `https://accounts.google.com`, Microsoft `https://login.microsoftonline.com/<tenant id>/v2.0`, ' +
  'Apple `https://appleid.apple.com`. Nothing is fetched when the provider is stored.';

class ProviderSettingsDto {
  @ApiProperty({ enum: PROVIDER_TYPES, example: 'oidc' })
  @IsDefined({ message: 'is required' })
  @IsIn(PROVIDER_TYPES)
  type!: (typeof PROVIDER_TYPES)[number];

  @ApiProperty({ example: 'https://accounts.google.com', description: ISSUER_DESCRIPTION })
  @IsDefined({ message: 'is required' })
  @IsString()
  @MaxLength(2048)
  issuer!: string;

  @ApiProperty({ example: '1234567890-abc.apps.googleusercontent.com', description: 'Must be in the id token\'s `aud`' })
  @IsDefined({ message: 'is required' })
  @IsString()
  @Length(1, 512)
  client_id!: string;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    writeOnly: true,
    maxLength: 4096,
    description:
      'Write-only, used only to exchange an authorization code. Never returned (see `has_client_secret`). On replace: omitted keeps it, null clears it; ' +
      'a replace that changes issuer or client_id must send it again (or null), else 400.',
  })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  client_secret?: string | null;

  @SlugReferenceField({
    example: null,
    description: 'Slug of a role of the membership, given to users signed up through this provider; counts as granted by the caller (again when issuer or client_id changes)',
  })
  default_role?: string | null;

  @SlugReferenceField({ example: null, description: 'Slug of a user type of the membership, for users signed up through this provider; its required custom fields must all have defaults' })
  default_user_type?: string | null;

  @OptionalBooleanField({ default: true, description: 'false: sign-in answers 403 ProviderDisabled' })
  is_active?: boolean;

  @OptionalBooleanField({
    default: false,
    description:
      'May link a sign-in to an existing user with the same verified e-mail address. Setting it (or changing issuer or client_id while it is set) counts as granting *: ' +
      'the caller must hold every permission of the membership\'s admin role, else 403',
  })
  trust_email?: boolean;
}

/** Body of POST and PUT .../providers (contract "External identity providers"). */
export class ProviderBodyDto extends NamedBodyDto(ProviderSettingsDto, {
  // Written as `@NameField(...) @IsDefined(...)` would apply them: IsDefined first.
  name: applyDecorators(IsDefined({ message: 'is required' }), NameField({ example: 'Google' })),
  slug: SlugField({ example: 'google', description: 'The `{slug}` of the login route; from the name on create when omitted; immutable' }),
  description: DocumentedDescriptionField(2000),
}) {}

export class ProviderSchema extends NamedResourceSchema {
  @ApiProperty({ enum: PROVIDER_TYPES }) type!: string;
  @ApiProperty() issuer!: string;
  @ApiProperty() client_id!: string;
  @ApiProperty({ description: 'Whether a client secret is set (the secret itself is never returned)' }) has_client_secret!: boolean;
  @ApiProperty({ nullable: true, type: String }) default_role!: string | null;
  @ApiProperty({ nullable: true, type: String }) default_user_type!: string | null;
  @ApiProperty() is_active!: boolean;
  @ApiProperty() trust_email!: boolean;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}
