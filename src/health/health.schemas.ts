import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/* The body of `/health` and `/ready`. */

export class HealthStatusSchema {
  @ApiProperty({ enum: ['Healthy', 'Unhealthy'] }) status!: 'Healthy' | 'Unhealthy';
  @ApiPropertyOptional({ example: 'The installation has not been set up yet', description: 'Why it is unhealthy; never failure details' })
  message?: string;
}
