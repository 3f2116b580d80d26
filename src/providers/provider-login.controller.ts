import { Body, Controller, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/access-decorators';
import { SESSION_HEADERS, membershipHeader, sessionMetadata } from '../tokens/token.controller';
import { TokenResponseSchema, type TokenResponse } from '../tokens/token.dto';
import { ProviderSignIn } from './provider-sign-in';
import { ApiRoute } from '../common/api-route';

@ApiTags('providers')
@Controller('oauth')
export class ProviderLoginController {
  constructor(private readonly signIn: ProviderSignIn) {}

  @Post(':slug/login')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Sign in with an external OpenID Connect provider',
    description:
      'Body exactly one of {id_token, nonce?} or {code, redirect_uri, code_verifier?, nonce?} (the code is exchanged at the ' +
      "provider's token endpoint). The identity comes only from the verified id token: found by its link, linked by a " +
      'verified e-mail when the provider has trust_email, or signed up. Answers a token pair (a new session). No token is needed.',
    security: 'public',
    params: [{ name: 'slug', description: 'The provider slug' }],
    headers: [...SESSION_HEADERS, { name: 'X-Service-Alias', required: false, description: 'Membership id, when membership_id is not given' }],
    query: [{ name: 'membership_id', required: false, type: String, description: 'The membership id (or header X-Service-Alias)' }],
    answers: [{ status: 201, description: 'Token pair', type: TokenResponseSchema }],
    errors: [400, 404, 409, 413, 415],
    errorExamples: {
      401: {
        description: 'ProviderTokenInvalid (any id token check failed, or the token endpoint refused the code), UserInactive',
        errorCode: 'ProviderTokenInvalid',
        message: 'The identity provider token is not valid',
      },
      403: { description: 'ProviderDisabled', errorCode: 'ProviderDisabled', message: 'The provider is disabled' },
      502: {
        description: 'ProviderUnavailable: discovery, keys or token endpoint unreachable, slow, refused or broken',
        errorCode: 'ProviderUnavailable',
        message: 'The identity provider could not be reached or gave an unusable answer',
      },
    },
  })
  login(
    @Req() request: Request,
    @Param('slug') slug: string,
    @Query('membership_id') membershipId: unknown,
    // Raw: the service accepts exactly one of the two bodies and answers the contract's error.
    @Body() body: unknown,
  ): Promise<TokenResponse> {
    const fromQuery = typeof membershipId === 'string' && membershipId.trim() !== '' ? membershipId.trim() : undefined;
    return this.signIn.login(fromQuery ?? membershipHeader(request), slug, body, sessionMetadata(request));
  }
}
