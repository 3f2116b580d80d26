import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional, IsString, MaxLength } from 'class-validator';

/** Body of POST /memberships/{m}/codes. */
export class CreateTokenCodeDto {
  /** Checked by the service (keys, value lengths, control characters): one error list for all of it. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 256 },
    maxProperties: 20,
    description: 'What the device says about itself (keys ^[a-z0-9_]{1,64}$); `name` is its display name. Untrusted: shown escaped',
    example: { name: 'Living room TV' },
  })
  @IsOptional() @Allow() client_info?: unknown;
}

/** Body of POST /memberships/{m}/codes/token. */
export class PollTokenCodeDto {
  @ApiProperty({ description: 'The device code of the create answer', maxLength: 256, example: 'kXo0ylgtk5HwXk0Xx0mkNs6QDvnkpOWhbp6H8MK8O8A' })
  @IsString() @MaxLength(256) device_code!: string;
}

export class DeviceAuthorizationSchema {
  @ApiProperty({ description: 'Shown once: the device keeps it and polls with it' }) device_code!: string;
  @ApiProperty({ description: 'What the user enters on the approval page', example: 'WDJBMJHT' }) user_code!: string;
  @ApiProperty({ format: 'uri', example: 'http://localhost:3000/device?membership_id=8f14e45f-ceea-467a-9575-9bd0c8c1b1a1' }) verification_uri!: string;
  @ApiProperty({ format: 'uri', example: 'http://localhost:3000/device?membership_id=8f14e45f-ceea-467a-9575-9bd0c8c1b1a1&user_code=WDJBMJHT' })
  verification_uri_complete!: string;
  @ApiProperty({ description: 'Seconds the code lives', example: 600 }) expires_in!: number;
  @ApiProperty({ description: 'Seconds to wait between polls', example: 5 }) interval!: number;
}

export class TokenCodeViewSchema {
  @ApiProperty({ example: 'WDJBMJHT' }) user_code!: string;
  @ApiProperty({ enum: ['pending', 'approved', 'denied', 'consumed'] }) state!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { name: 'Living room TV' } }) client_info!: Record<string, string>;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
}
