import { ApiPropertyOptional } from '@nestjs/swagger';
import { DescriptionField, NameField, SlugField } from '../common/dto-fields';
import { IsPermissionExpressionList } from './permission-list';

/** Body of POST and PUT .../roles. Expressions are checked by the service (400 InvalidPermission). */
export class RoleBodyDto {
  @NameField({ example: 'Support agents' })
  name!: string;

  @SlugField({ example: 'support-agents', description: 'Derived from the name on create when omitted; cannot change afterwards. `admin` is reserved' })
  slug?: string;

  @DescriptionField(1024)
  description?: string | null;

  @ApiPropertyOptional({ type: [String], example: ['users.read', 'events.read'], description: 'Permission expressions; default []' })
  @IsPermissionExpressionList()
  permissions?: string[];

  @ApiPropertyOptional({ type: [String], example: ['users.delete'], description: 'Denied expressions; default []' })
  @IsPermissionExpressionList()
  forbidden?: string[];
}
