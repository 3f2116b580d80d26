import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NamedResourceSchema, SysSchema } from '../common/api-docs';
import { DescriptionField, NameField, NamedBodyDto, SlugField } from '../common/dto-fields';
import { IsPermissionExpressionList } from './permission-list';

class RoleListsDto {
  @ApiPropertyOptional({ type: [String], example: ['users.read', 'events.read'], description: 'Permission expressions; default []' })
  @IsPermissionExpressionList()
  permissions?: string[];

  @ApiPropertyOptional({ type: [String], example: ['users.delete'], description: 'Denied expressions; default []' })
  @IsPermissionExpressionList()
  forbidden?: string[];
}

/** Body of POST and PUT .../roles. Expressions are checked by the service (400 InvalidPermission). */
export class RoleBodyDto extends NamedBodyDto(RoleListsDto, {
  name: NameField({ example: 'Support agents' }),
  slug: SlugField({ example: 'support-agents', description: 'Derived from the name on create when omitted; cannot change afterwards. `admin` is reserved' }),
  description: DescriptionField(1024),
}) {}

/** What the routes answer; `description` is always there, null when not set. */
export class RoleSchema extends NamedResourceSchema {
  @ApiProperty({ type: [String] }) permissions!: string[];
  @ApiProperty({ type: [String] }) forbidden!: string[];
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}
