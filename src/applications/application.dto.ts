import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NamedResourceSchema, SysSchema } from '../common/api-docs';
import { DescriptionField, NameField, NamedBodyDto, OptionalBooleanField, OptionalNestedField, SlugField, SlugReferenceField } from '../common/dto-fields';
import { ApplicationOidcDto } from './application-oidc';
import { IsPermissionExpressionList } from '../roles/permission-list';

class ApplicationGrantsDto {
  @SlugReferenceField({ example: 'admin', description: 'Slug of a role of the membership; none when omitted' })
  role?: string | null;

  @ApiPropertyOptional({ type: [String], description: 'Own permission expressions; default []' })
  @IsPermissionExpressionList()
  permissions?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Own denied expressions; default []' })
  @IsPermissionExpressionList()
  forbidden?: string[];

  @OptionalBooleanField({ default: true, description: 'An inactive application\'s Basic token answers 401 InvalidToken' })
  is_active?: boolean;

  /** The application as a client of its membership's OpenID Provider (docs/oidc.md); omitted or null: not one. */
  @OptionalNestedField(ApplicationOidcDto)
  oidc?: ApplicationOidcDto | null;
}

/** Body of POST and PUT .../applications. Expressions are checked by the service (400 InvalidPermission). */
export class ApplicationBodyDto extends NamedBodyDto(ApplicationGrantsDto, {
  name: NameField({ example: 'Billing backend' }),
  slug: SlugField({ example: 'billing-backend', description: 'Unique in the membership; from the name on create when omitted, kept on update when omitted' }),
  description: DescriptionField(1024),
}) {}

/** What the routes answer; `description` is always there, null when not set. */
export class ApplicationSchema extends NamedResourceSchema {
  // Always in the answer, null without a role: required like description and oidc.
  @ApiProperty({ nullable: true, type: String }) role!: string | null;
  @ApiProperty({ type: [String] }) permissions!: string[];
  @ApiProperty({ type: [String] }) forbidden!: string[];
  @ApiProperty() is_active!: boolean;
  @ApiProperty({ type: ApplicationOidcDto, nullable: true, description: 'The application as a client of its membership\'s OpenID Provider (defaults filled in); null: not one' })
  oidc!: ApplicationOidcDto | null;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}

export class ApplicationWithSecretSchema extends ApplicationSchema {
  @ApiProperty({ description: 'Shown only in this answer; Basic token: `<_id>:<secret>`' }) secret!: string;
}
