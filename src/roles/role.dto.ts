import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { IsSlug } from '../common/patterns';
import { IsPermissionExpressionList } from './permission-list';

/** Body of POST and PUT .../roles. Expressions are checked by the service (400 InvalidPermission). */
export class RoleBodyDto {
  @ApiProperty({ example: 'Support agents' })
  @IsString()
  @Length(1, 128)
  name!: string;

  @ApiPropertyOptional({ example: 'support-agents', description: 'Derived from the name on create when omitted; cannot change afterwards. `admin` is reserved' })
  @IsOptional()
  @IsString()
  @IsSlug()
  slug?: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string | null;

  @ApiPropertyOptional({ type: [String], example: ['users.read', 'events.read'], description: 'Permission expressions; default []' })
  @IsPermissionExpressionList()
  permissions?: string[];

  @ApiPropertyOptional({ type: [String], example: ['users.delete'], description: 'Denied expressions; default []' })
  @IsPermissionExpressionList()
  forbidden?: string[];
}
