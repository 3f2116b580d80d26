import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional, IsString, Length, MaxLength } from 'class-validator';

/** Sign-in (username + password) or, with a Bearer token, a scoped-token request (scopes). */
export class GenerateTokenDto {
  @ApiPropertyOptional({ description: 'Sign-in: the username or the e-mail address', minLength: 1, maxLength: 320, example: 'admin' })
  @IsOptional() @IsString() @Length(1, 320) username?: string;
  @ApiPropertyOptional({ description: 'Sign-in: the password', minLength: 1, maxLength: 1024, format: 'password', example: 'correct horse battery' })
  @IsOptional() @IsString() @Length(1, 1024) password?: string;
  /** Checked by the service, which answers ScopeRequired / InvalidScope as the specification says. */
  @ApiPropertyOptional({
    type: [String],
    description: 'Scoped token (with a Bearer access token, no credentials): permission expressions the new token is limited to',
    example: ['users.read'],
  })
  @IsOptional() @Allow() scopes?: unknown;
}

/** Body of POST /refresh-token, /verify-token and /revoke-token. */
export class TokenBodyDto {
  @ApiPropertyOptional({
    maxLength: 16384,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJleGFtcGxlIn0.c2lnbmF0dXJlLW9mLWFuLWV4YW1wbGU',
    description: 'The token. /verify-token also takes "Bearer <jwt>" or "Basic <id>:<secret>" (a bare JWT is read as Bearer)',
  })
  @IsOptional() @IsString() @MaxLength(16384) token?: string;
}

/** The token response object (documentation of TokenResponse). */
export class TokenResponseSchema {
  @ApiProperty({ enum: ['Bearer'] }) token_type!: 'Bearer';
  @ApiProperty({ description: 'JWT (HS256)' }) access_token!: string;
  @ApiProperty({ description: 'Seconds, counted from created_at' }) expires_in!: number;
  @ApiPropertyOptional({ description: 'Absent in scoped-token responses' }) refresh_token?: string;
  @ApiPropertyOptional({ description: 'Seconds, counted from created_at; absent in scoped-token responses' })
  refresh_token_expires_in?: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiPropertyOptional({ type: [String], description: 'Present in scoped-token responses only' }) scopes?: string[];
}

/** The verification response (documentation of VerificationResponse). */
export class VerificationResponseSchema {
  @ApiProperty({ enum: [true] }) verified!: true;
  @ApiProperty({ description: 'The token as presented' }) token!: string;
  @ApiPropertyOptional({ enum: ['access_token', 'refresh_token'], description: 'Bearer tokens only' })
  token_kind?: 'access_token' | 'refresh_token';
  @ApiPropertyOptional({ description: 'Seconds until expiry; Bearer tokens only' }) remaining_time?: number;
  @ApiPropertyOptional({
    type: [String],
    description: "The session's authentication methods (RFC 8176): pwd, otp, hwk, mfa; Bearer tokens of sessions that have them",
  })
  amr?: string[];
}

export interface TokenResponse {
  token_type: 'Bearer';
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
  created_at: string;
  scopes?: string[];
}

export type VerificationResponse =
  | { verified: true; token: string; token_kind: 'access_token' | 'refresh_token'; remaining_time: number; amr?: string[] }
  | { verified: true; token: string };

export interface SessionMetadata {
  ipAddress?: string;
  userAgent?: string;
  /** The client's own address (`request.ip`, see TRUST_PROXY), for the sign-in defenses; not stored with the session. */
  clientAddress?: string;
}

export class TokenSessionSchema {
  @ApiProperty({ description: 'Session id (the `sid` of its tokens)' }) _id!: string;
  @ApiProperty() user_id!: string;
  @ApiProperty({ nullable: true, type: String }) username!: string | null;
  @ApiProperty({
    enum: ['pair', 'scoped', 'oidc', 'browser'],
    description: 'pair: access + refresh token; scoped: a scoped access token; oidc: a token an OpenID Provider client got (see client_id); browser: the OpenID Provider single sign-on cookie',
  })
  kind!: string;
  @ApiProperty({ nullable: true, type: String, description: 'For a scoped token: the session it was derived from' }) parent_id!: string | null;
  @ApiProperty({ nullable: true, type: [String] }) scopes!: string[] | null;
  @ApiProperty() created_at!: string;
  @ApiProperty({ description: 'When the whole session dies (the later of the two expiries)' }) expires_at!: string;
  @ApiProperty() access_expires_at!: string;
  @ApiProperty({ nullable: true, type: String }) refresh_expires_at!: string | null;
  @ApiProperty({ nullable: true, type: String }) ip_address!: string | null;
  @ApiProperty({ nullable: true, type: String }) user_agent!: string | null;
  @ApiProperty() membership_id!: string;
  @ApiPropertyOptional({ description: 'Revoked listing only' }) revoked_at?: string;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Revoked listing only: who revoked it' }) revoked_by?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Revoked listing only: revoked, logout-all, refreshed, password-changed, ...' })
  revoke_reason?: string | null;
}
