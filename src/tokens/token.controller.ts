import { Body, Controller, Get, Headers, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { type ApiHeaderOptions, type ApiQueryOptions, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, clientAddressOf, CurrentCaller, Public } from '../common/access-decorators';
import type { Caller } from '../common/caller';
import { parseAuthorization, withoutBearerPrefix } from '../common/authorization-header';
import { DomainError, validationError } from '../common/errors';
import { ApplicationSchema } from '../applications/application.dto';
import { UserResource } from '../openapi/resource-schemas';
import { parseBooleanParam } from '../common/params';
import type { UserResponse } from '../users/user.mapper';
import type { ApplicationResponse } from '../applications/application.mapper';
import {
  GenerateTokenDto,
  TokenBodyDto,
  TokenResponseSchema,
  VerificationResponseSchema,
  type SessionMetadata,
  type TokenResponse,
  type VerificationResponse,
} from './token.dto';
import { SignInSessions } from './sign-in-sessions';
import { TokenService } from './token.service';
import { ApiRoute } from '../common/api-route';

const MEMBERSHIP_HEADERS = ['x-service-alias', 'membership', 'membershipid'] as const;

const VERIFY_RECORDS =
  'Records TokenVerified, written just after the answer with the verifications of the same few milliseconds: a list or ' +
  '_query of the events on the same instance already shows it, another instance a few milliseconds later. A shutdown writes ' +
  'every pending one; a crash of the instance or of the database server may lose those of the last fraction of a second.';

export function membershipHeader(request: Request): string | undefined {
  for (const name of MEMBERSHIP_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return undefined;
}

/** The end user's address and agent as the calling application forwards them. */
export function sessionMetadata(request: Request): SessionMetadata {
  const ip = request.headers['x-ipaddress'];
  const agent = request.headers['x-useragent'];
  return {
    ipAddress: typeof ip === 'string' ? ip : undefined,
    userAgent: typeof agent === 'string' ? agent : undefined,
    clientAddress: clientAddressOf(request),
  };
}

/** End-user metadata stored with the session, sent by the application that signs its user in. */
export const SESSION_HEADERS: ApiHeaderOptions[] = [
  { name: 'X-IpAddress', required: false, description: 'End user IP address, stored with the session' },
  { name: 'X-UserAgent', required: false, description: 'End user user agent, stored with the session' },
];

const REVOKE_QUERY: ApiQueryOptions = {
  name: 'revoke',
  required: false,
  type: Boolean,
  description: 'Default true: the used refresh token works once. false keeps it usable',
};

const LOGOUT_ALL_QUERY: ApiQueryOptions = {
  name: 'logout-all',
  required: false,
  type: Boolean,
  description: 'Default false. true revokes every session of the user; a scoped token may not (403 AccessDenied)',
};

const REFRESH_DESCRIPTION =
  'The new pair belongs to the same sign-in session. A refresh token already rotated (used with revoke=true) answers ' +
  '401 RefreshTokenWasRevoked and revokes its whole session, the pair issued from it included (TokenRevoked, reason ' +
  '"refresh_token_reuse").';

const REVOKE_DESCRIPTION =
  "A pair's access or refresh token revokes its whole sign-in session: every pair refreshed in it and every scoped token " +
  'made from it. A scoped token revokes itself only.';

function bearerFrom(header: string | undefined): string | undefined {
  const credentials = parseAuthorization(header);
  return credentials?.scheme === 'bearer' ? credentials.token : undefined;
}

/**
 * The POST token routes take the token in the body or, when the body names none, in Authorization
 * (the specification: "no token in the header or body"). The body wins: a caller may authenticate
 * itself in Authorization while it asks about another token in the body, as RFC 7662 does.
 */
function tokenFromBodyOrHeader(body: TokenBodyDto | undefined, authorization: string | undefined): string | undefined {
  const inBody = body?.token?.trim();
  return inBody ? inBody : authorization?.trim() || undefined;
}


@ApiTags('tokens')
@Controller()
export class TokenController {
  constructor(
    private readonly tokens: TokenService,
    private readonly signIns: SignInSessions,
  ) {}

  @Post('generate-token')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Sign in, or get a scoped token',
    description:
      'Sign-in: header X-Service-Alias (or Membership, MembershipId) and body {username, password} (an Authorization ' +
      'header is then ignored); answers a token pair. Scoped token: Authorization: Bearer <access token>, body ' +
      '{scopes} and no username or password; answers an access token limited to the scopes (no refresh token). ' +
      'scopes with a username or password: 400. An unknown user and a wrong password answer alike. ' +
      "Wrong passwords count per login (an unknown name like a user) and per client address: past the membership's " +
      'sign_in_policy the login is locked, 429 TooManySignInAttempts with Retry-After, whatever the password.',
    security: ['bearer', 'none'],
    headers: [...SESSION_HEADERS, { name: 'X-Service-Alias', required: false, description: 'Membership id; required for sign-in' }],
    body: {
      model: GenerateTokenDto,
      examples: {
        signIn: { summary: 'Sign-in (no Authorization; X-Service-Alias: the membership id)', value: { username: 'admin', password: 'correct horse battery' } },
        scoped: { summary: 'Scoped token (Authorization: Bearer <access token>)', value: { scopes: ['users.read'] } },
      },
    },
    answers: [{ status: 201, description: 'Token pair (sign-in) or scoped token', type: TokenResponseSchema }],
    errors: [400, 401, 404, 413, 415, 429],
  })
  generate(@Req() request: Request, @Body() body: GenerateTokenDto): Promise<TokenResponse> {
    const authorization = request.headers.authorization;
    if (authorization && !hasSignInCredentials(body)) {
      const credentials = parseAuthorization(authorization);
      if (!credentials) throw new DomainError('InvalidToken', 'The Authorization header must be "Bearer <token>"');
      return this.tokens.issueScoped(credentials, body.scopes, sessionMetadata(request));
    }
    if (body.scopes !== undefined) {
      throw validationError('scopes', 'belongs to a scoped-token request, which sends an access token and no username or password');
    }
    return this.signIns.signIn(membershipHeader(request), body.username, body.password, sessionMetadata(request));
  }

  @Get('refresh-token')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Refresh: a new token pair for the refresh token in Authorization: Bearer',
    description: REFRESH_DESCRIPTION,
    security: ['bearer'],
    headers: [...SESSION_HEADERS],
    query: [REVOKE_QUERY],
    answers: [{ status: 201, description: 'A new token pair; scopes are kept', type: TokenResponseSchema }],
    errors: [400, 401],
  })
  refreshFromHeader(@Headers('authorization') authorization: string | undefined, @Query('revoke') revoke: unknown, @Req() request: Request): Promise<TokenResponse> {
    return this.tokens.refresh(bearerFrom(authorization), parseBooleanParam('revoke', revoke, true), sessionMetadata(request));
  }

  @Post('refresh-token')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Refresh: a new token pair for the refresh token in the body (or, without one, in Authorization: Bearer)',
    description: REFRESH_DESCRIPTION,
    security: ['none', 'bearer'],
    headers: [...SESSION_HEADERS],
    query: [REVOKE_QUERY],
    answers: [{ status: 201, description: 'A new token pair; scopes are kept', type: TokenResponseSchema }],
    errors: [400, 401, 413, 415],
  })
  refreshFromBody(@Body() body: TokenBodyDto, @Query('revoke') revoke: unknown, @Req() request: Request): Promise<TokenResponse> {
    const presented = tokenFromBodyOrHeader(body, request.headers.authorization);
    const token = presented ? withoutBearerPrefix(presented) : undefined;
    return this.tokens.refresh(token, parseBooleanParam('revoke', revoke, true), sessionMetadata(request));
  }

  @Get('verify-token')
  @Public()
  @ApiRoute({
    summary: 'Verify the Bearer or Basic token in Authorization',
    description: VERIFY_RECORDS,
    security: 'token',
    answers: [{ status: 200, description: 'The token is valid', type: VerificationResponseSchema }],
  })
  verifyFromHeader(@Headers('authorization') authorization: string | undefined): Promise<VerificationResponse> {
    return this.verify(authorization);
  }

  @Post('verify-token')
  @Public()
  @HttpCode(200)
  @ApiRoute({
    summary: 'Verify the token in the body ("Bearer <jwt>", "Basic <id>:<secret>" or a bare JWT), or, without one, in Authorization',
    description: VERIFY_RECORDS,
    security: ['none', 'bearer', 'basic'],
    answers: [{ status: 200, description: 'The token is valid', type: VerificationResponseSchema }],
    errors: [400, 401, 413, 415],
  })
  verifyFromBody(@Body() body: TokenBodyDto, @Headers('authorization') authorization: string | undefined): Promise<VerificationResponse> {
    // A bare JWT is read as a Bearer token.
    const token = tokenFromBodyOrHeader(body, authorization);
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
  @ApiRoute({
    summary: 'Revoke the access or refresh token in Authorization: Bearer (with its session)',
    description: REVOKE_DESCRIPTION,
    security: ['bearer'],
    query: [LOGOUT_ALL_QUERY],
    answers: [{ status: 204, description: 'Revoked' }],
    errors: [400, 401, 403],
  })
  async revokeFromHeader(@Headers('authorization') authorization: string | undefined, @Query('logout-all') logoutAll: unknown, @Res() response: Response): Promise<void> {
    await this.tokens.revoke(bearerFrom(authorization), parseBooleanParam('logout-all', logoutAll, false));
    response.status(204).end();
  }

  @Post('revoke-token')
  @Public()
  @ApiRoute({
    summary: 'Revoke the access or refresh token in the body (or, without one, in Authorization: Bearer), with its session',
    description: REVOKE_DESCRIPTION,
    security: ['none', 'bearer'],
    query: [LOGOUT_ALL_QUERY],
    answers: [{ status: 204, description: 'Revoked' }],
    errors: [400, 401, 403, 413, 415],
  })
  async revokeFromBody(
    @Body() body: TokenBodyDto,
    @Headers('authorization') authorization: string | undefined,
    @Query('logout-all') logoutAll: unknown,
    @Res() response: Response,
  ): Promise<void> {
    const presented = tokenFromBodyOrHeader(body, authorization);
    const token = presented ? withoutBearerPrefix(presented) : undefined;
    await this.tokens.revoke(token, parseBooleanParam('logout-all', logoutAll, false));
    response.status(204).end();
  }

  @Get(['me', 'whoami'])
  @Authenticated({ profile: true })
  @ApiRoute({
    summary: 'The caller: the user (Bearer) or the application without its secret (Basic)',
    description: '/me and /whoami are the same endpoint.',
    security: 'token',
    extraModels: [UserResource, ApplicationSchema],
    answers: [
      {
        status: 200,
        description: 'The user for a Bearer token, the application for a Basic token',
        schema: { oneOf: [{ $ref: getSchemaPath(UserResource) }, { $ref: getSchemaPath(ApplicationSchema) }] },
      },
    ],
  })
  me(@CurrentCaller() caller: Caller): UserResponse | ApplicationResponse {
    if (!caller.profile) throw new Error('/me must be declared with @Authenticated({ profile: true })');
    return caller.profile;
  }
}

/**
 * A username or password in the body makes a sign-in, whatever Authorization says: the
 * specification's scoped-token request sends an access token and no credentials, and a client
 * that attaches its last token to every call (an HTTP interceptor) must still be able to sign in.
 */
function hasSignInCredentials(body: GenerateTokenDto): boolean {
  return body.username !== undefined || body.password !== undefined;
}
