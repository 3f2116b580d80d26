import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional } from 'class-validator';
import type { Decision } from '../permissions';

/* The body and the answer of the permission check (`/roles/check-permission`). */

export class CheckPermissionDto {
  @ApiPropertyOptional({ type: String, description: 'Permission expression; wins over the query parameter', example: 'users.read' })
  @IsOptional() @Allow() permission?: unknown;
}

export class PermissionDecisionSchema {
  @ApiProperty() allowed!: boolean;
  @ApiProperty({ description: 'The normalized expression that was checked', example: 'f3c9a1.users.read.*' }) permission!: string;
  @ApiProperty({ enum: ['role_permission', 'own_permission', 'own_record', 'forbidden', 'no_permission', 'scope'] })
  reason!: Decision['reason'];
}
