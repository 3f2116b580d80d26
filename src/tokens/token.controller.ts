import { Body, Controller, Get, Headers, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Authenticated, CurrentCaller, Public } from '../auth/decorators';
import type { Caller } from '../auth/caller';
import { parseAuthorization, withoutBearerPrefix } from '../auth/authorization-header';
import { DomainError } from '../common/errors';
import { parseBooleanParam } from '../common/params';
import { toUserResponse, type UserResponse } from '../users/user.mapper';
import { toApplicationResponse, type ApplicationResponse } from '../applications/application.mapper';
import { GenerateTokenDto, TokenBodyDto, type SessionMetadata, type TokenResponse, type VerificationResponse } from './token.dto';
import { TokenService } from './token.service';

const MEMBERSHIP_HEADERS = ['x-service-alias', 'membership', 'membershipid'] as const;

function membershipHeader(request: Request): string | undefined {
  for (const name of MEMBERSHIP_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return undefined;
}

function sessionMetadata(request: Request): SessionMetadata {
  const ip = request.headers['x-ipaddress'];
  const agent = request.headers['x-useragent'];
  return {
    ipAddress: typeof ip === 'string' ? ip : undefined,
    userAgent: typeof agent === 'string' ? agent : undefined,
  };
}

function bearerFrom(header: string | undefined): string | undefined {
  const credentials = parseAuthorization(header);
  return credentials?.scheme === 'bearer' ? credentials.token : undefined;
}

@Controller()
export class TokenController {
  constructor(private readonly tokens: TokenService) {}

  @Post('generate-token')
  @Public()
  @HttpCode(201)
  generate(@Req() request: Request, @Body() body: GenerateTokenDto): Promise<TokenResponse> {
    const authorization = request.headers.authorization;
    if (authorization) {
      const credentials = parseAuthorization(authorization);
      if (!credentials) throw new DomainError('InvalidToken', 'The Authorization header must be "Bearer <token>"');
      return this.tokens.issueScoped(credentials, body.scopes, sessionMetadata(request));
    }
    return this.tokens.signIn(membershipHeader(request), body.username, body.password, sessionMetadata(request));
  }

  @Get('refresh-token')
  @Public()
  @HttpCode(201)
  refreshFromHeader(@Headers('authorization') authorization: string | undefined, @Query('revoke') revoke: unknown, @Req() request: Request): Promise<TokenResponse> {
    return this.tokens.refresh(bearerFrom(authorization), parseBooleanParam('revoke', revoke, true), sessionMetadata(request));
  }

  @Post('refresh-token')
  @Public()
  @HttpCode(201)
  refreshFromBody(@Body() body: TokenBodyDto, @Query('revoke') revoke: unknown, @Req() request: Request): Promise<TokenResponse> {
    const token = body.token ? withoutBearerPrefix(body.token) : undefined;
    return this.tokens.refresh(token, parseBooleanParam('revoke', revoke, true), sessionMetadata(request));
  }

  @Get('verify-token')
  @Public()
  verifyFromHeader(@Headers('authorization') authorization: string | undefined): Promise<VerificationResponse> {
    return this.verify(authorization);
  }

  @Post('verify-token')
  @Public()
  @HttpCode(200)
  verifyFromBody(@Body() body: TokenBodyDto): Promise<VerificationResponse> {
    // A bare JWT in the body is read as a Bearer token.
    const token = body.token?.trim();
    return this.verify(token && !/^(bearer|basic)\s/i.test(token) ? `Bearer ${token}` : token);
  }

  private verify(presented: string | undefined): Promise<VerificationResponse> {
    if (!presented) throw new DomainError('InvalidToken', 'A Bearer or Basic token is required');
    const credentials = parseAuthorization(presented);
    if (!credentials) throw new DomainError('InvalidToken', 'The token must be "Bearer <token>" or "Basic <id>:<secret>"');
    const token = credentials.scheme === 'bearer' ? credentials.token : presented.trim().replace(/^basic\s+/i, '');
    return this.tokens.verify(credentials, token);
  }

  @Get('revoke-token')
  @Public()
  async revokeFromHeader(@Headers('authorization') authorization: string | undefined, @Query('logout-all') logoutAll: unknown, @Res() response: Response): Promise<void> {
    await this.tokens.revoke(bearerFrom(authorization), parseBooleanParam('logout-all', logoutAll, false));
    response.status(204).end();
  }

  @Post('revoke-token')
  @Public()
  async revokeFromBody(@Body() body: TokenBodyDto, @Query('logout-all') logoutAll: unknown, @Res() response: Response): Promise<void> {
    const token = body.token ? withoutBearerPrefix(body.token) : undefined;
    await this.tokens.revoke(token, parseBooleanParam('logout-all', logoutAll, false));
    response.status(204).end();
  }

  @Get(['me', 'whoami'])
  @Authenticated()
  me(@CurrentCaller() caller: Caller): UserResponse | ApplicationResponse {
    return caller.kind === 'user' ? toUserResponse(caller.user) : toApplicationResponse(caller.application);
  }
}
