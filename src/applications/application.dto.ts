import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { IsSlug } from '../common/patterns';
import { IsPermissionExpressionList } from '../roles/permission-list';

/** Body of POST and PUT .../applications. Expressions are checked by the service (400 InvalidPermission). */
export class ApplicationBodyDto {
  @ApiProperty({ example: 'Billing backend' })
  @IsString()
  @Length(1, 128)
  name!: string;

  @ApiPropertyOptional({ example: 'billing-backend', description: 'Unique in the membership; from the name on create when omitted, kept on update when omitted' })
  @IsOptional()
  @IsString()
  @IsSlug()
  slug?: string;

  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'admin', description: 'Slug of a role of the membership; none when omitted' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  role?: string | null;

  @ApiPropertyOptional({ type: [String], description: 'Own permission expressions; default []' })
  @IsPermissionExpressionList()
  permissions?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Own denied expressions; default []' })
  @IsPermissionExpressionList()
  forbidden?: string[];

  @ApiPropertyOptional({ default: true, description: 'An inactive application\'s Basic token answers 401 InvalidToken' })
  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}
