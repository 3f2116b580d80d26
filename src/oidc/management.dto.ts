import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/* The answers of the membership API's OpenID Provider routes: a user's consents and the signing key rotation. */

export class ConsentSchema {
  @ApiProperty({ description: 'The client (application) id', example: '3f0c6f1e-2b0a-4c1e-9d7e-5a8b6c4d2e10' }) client_id!: string;
  @ApiProperty({ type: [String], example: ['openid', 'profile', 'email'] }) scopes!: string[];
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) created_at!: string;
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) updated_at!: string;
}

export class RotatedKeyDto {
  @ApiProperty({ example: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', description: 'The new current key (RFC 7638 thumbprint)' })
  kid!: string;
  @ApiProperty({ example: 'ES256' }) alg!: string;
  @ApiProperty({ type: String, nullable: true, description: 'The key it replaced, still in the JWKS until retired_until' })
  retired_kid!: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', description: 'When the replaced key leaves the JWKS: twice the longest token lifetime from now' })
  retired_until!: string | null;
}
