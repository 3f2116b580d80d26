import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** RFC 6749 5.2's error object, as the OpenID Provider's back-channel routes answer it (documentation only). */
export class OAuthErrorDto {
  @ApiProperty({ example: 'invalid_grant' }) error!: string;
  @ApiPropertyOptional({ example: 'The authorization code is not valid' }) error_description?: string;
}

/** The form body a UserInfo POST may carry instead of the Authorization header (RFC 6750 2.2). */
export class UserInfoForm {
  @ApiPropertyOptional({ description: 'The access token, when not in the Authorization header (never both)' }) access_token?: string;
}

/** The UserInfo answer (OpenID Connect Core 5.3.2): `sub` and the claims the access token's scopes release. */
export class UserInfoDto {
  @ApiProperty({ example: '3f0c6f1e-2b0a-4c1e-9d7e-5a8b6c4d2e10' }) sub!: string;
  @ApiPropertyOptional({ description: 'profile', example: 'Grace Hopper' }) name?: string;
  @ApiPropertyOptional({ description: 'profile', example: 'Grace' }) given_name?: string;
  @ApiPropertyOptional({ description: 'profile', example: 'Hopper' }) family_name?: string;
  @ApiPropertyOptional({ description: 'profile', example: 'grace' }) preferred_username?: string;
  @ApiPropertyOptional({ description: 'email', example: 'grace@example.com' }) email?: string;
  @ApiPropertyOptional({ description: 'email: true once the address was proven' }) email_verified?: boolean;
}
