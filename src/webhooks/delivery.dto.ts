import { ApiProperty } from '@nestjs/swagger';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;

/** One webhook delivery: the call an event owes one webhook, and how its attempts went. */
export class DeliveryResponseDto {
  @ApiProperty({ description: 'Sent as X-Webhook-Delivery on every attempt and redelivery' }) _id!: string;
  @ApiProperty() membership_id!: string;
  @ApiProperty() webhook_id!: string;
  @ApiProperty({ description: 'The event the call is made for' }) event_id!: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status!: string;
  @ApiProperty({ description: 'Attempts finished (an attempt cut by a crash or a stop is not counted)' }) attempts!: number;
  @ApiProperty({ format: 'date-time', description: 'When the next attempt is due (while an attempt runs: when its lease ends)' }) next_attempt_at!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  @ApiProperty({ type: Number, nullable: true, description: 'HTTP status of the last answer' }) last_status!: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why the last attempt failed' }) last_error!: string | null;
}
