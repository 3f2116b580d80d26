import { Allow, IsOptional, IsString, Length, MaxLength } from 'class-validator';

/** Sign-in (username + password) or, with a Bearer token, a scoped-token request (scopes). */
export class GenerateTokenDto {
  @IsOptional() @IsString() @Length(1, 320) username?: string;
  @IsOptional() @IsString() @Length(1, 1024) password?: string;
  /** Checked by the service, which answers ScopeRequired / InvalidScope as the specification says. */
  @IsOptional() @Allow() scopes?: unknown;
}

/** Body of POST /refresh-token, /verify-token and /revoke-token. */
export class TokenBodyDto {
  @IsOptional() @IsString() @MaxLength(16384) token?: string;
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
  | { verified: true; token: string; token_kind: 'access_token' | 'refresh_token'; remaining_time: number }
  | { verified: true; token: string };

export interface SessionMetadata {
  ipAddress?: string;
  userAgent?: string;
}
