import { applyDecorators, Controller, createParamDecorator, type ExecutionContext, Get, Headers, Param, Post, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { clientAddressOf, Public } from '../common/access-decorators';
import { ApiRoute } from '../common/api-route';
import { AuthorizationEndpoint } from './authorization-endpoint';
import { IssuerIdPipe } from './issuer-id.pipe';
import { EndSession } from './end-session';
import { INTERACTION_COOKIE, SSO_COOKIE } from './front-channel';
import { Interactions, type PageVisitor } from './interactions';
import { cookieOf, sendPageResult } from './page-result';
import { PAGES_STYLESHEET } from './pages';

const PAGE_RESPONSE = { status: 200, description: 'An HTML page (strict CSP, no script, frame-ancestors none, no-store)' };
const REDIRECT_RESPONSE = { status: 303, description: 'To the next page, or to the client\'s redirect_uri' };

/** What a step's form post hands the interactions: which interaction, its cookie, the form, who posted it. */
interface PostedStep {
  interactionId: string;
  cookie: string | undefined;
  form: Readonly<Record<string, unknown>>;
  visitor: PageVisitor;
}

/** A step's form post as one handler parameter (each of the three steps reads the same things). */
const InteractionPost = createParamDecorator((_data: unknown, context: ExecutionContext): PostedStep => {
  const request = context.switchToHttp().getRequest<Request>();
  const form: unknown = request.body;
  return {
    interactionId: String(request.params.interactionId),
    cookie: cookieOf(request.headers.cookie, INTERACTION_COOKIE),
    form: form && typeof form === 'object' ? (form as Record<string, unknown>) : {},
    visitor: { clientAddress: clientAddressOf(request), userAgent: request.headers['user-agent'] },
  };
});

/**
 * What the authorization and end-session endpoints read of a browser's visit: the request's
 * parameters (the query of a GET, the form of a POST) and the single sign-on cookie.
 */
interface SignOnVisit {
  query: Readonly<Record<string, unknown>>;
  ssoCookie: string | undefined;
}

const SignOnVisit = createParamDecorator((_data: unknown, context: ExecutionContext): SignOnVisit => {
  const request = context.switchToHttp().getRequest<Request>();
  // OpenID Connect Core 3.1.2.1: by POST the parameters come form-serialized in the body, not in the query.
  const form: unknown = request.body;
  const parameters = request.method === 'POST' ? (form && typeof form === 'object' ? (form as Record<string, unknown>) : {}) : request.query;
  return { query: parameters, ssoCookie: cookieOf(request.headers.cookie, SSO_COOKIE) };
});

/** A step's form: a public POST under the interaction, answered by a redirect (or the page again), as the document says. */
function InteractionStep(step: string, docs: { summary: string; description: string }): MethodDecorator {
  return applyDecorators(
    Post(`interaction/:interactionId/${step}`),
    Public(),
    ApiOperation(docs),
    ApiParam({ name: 'interactionId', type: String }),
    ApiConsumes('application/x-www-form-urlencoded'),
    ApiResponse(REDIRECT_RESPONSE),
  );
}

/**
 * The OpenID Provider's front channel (docs/oidc.md, "Authorization"): the authorization
 * endpoint, the interaction pages, their stylesheet and RP-initiated logout. HTML and redirects,
 * never the service's JSON error body; the rules live in the services.
 */
@ApiTags('openid-provider')
@ApiParam({ name: 'membershipId' })
@Controller('oidc/:membershipId')
export class AuthorizationController {
  constructor(
    private readonly endpoint: AuthorizationEndpoint,
    private readonly interactions: Interactions,
    private readonly endSession: EndSession,
  ) {}

  @Get('authorize')
  @Public()
  @ApiRoute({
    summary: 'Authorization endpoint (OAuth 2.0 code flow with PKCE S256, OpenID Connect)',
    description: 'An unknown client or redirect_uri: a 400 page, never a redirect. Other errors go back to redirect_uri with error, state and iss.',
    answers: [REDIRECT_RESPONSE, { status: 400, description: 'An HTML page: the client or redirect_uri cannot be trusted' }],
  })
  async authorize(@Param('membershipId', IssuerIdPipe) membershipId: string, @SignOnVisit() visit: SignOnVisit, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.endpoint.authorize(membershipId, visit.query, visit.ssoCookie));
  }

  @Post('authorize')
  @Public()
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiRoute({
    summary: 'Authorization endpoint by POST (OpenID Connect Core 3.1.2.1)',
    description: "GET authorize's parameters, form-encoded in the body; answered as GET answers them.",
    answers: [REDIRECT_RESPONSE, { status: 400, description: 'An HTML page: the client or redirect_uri cannot be trusted' }],
  })
  async authorizeByPost(@Param('membershipId', IssuerIdPipe) membershipId: string, @SignOnVisit() visit: SignOnVisit, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.endpoint.authorize(membershipId, visit.query, visit.ssoCookie));
  }

  @Get('interaction/:interactionId')
  @Public()
  @ApiRoute({ summary: "The page of an authorization's current step (login, second factor, consent)", description: 'Needs the interaction cookie.', answers: [PAGE_RESPONSE] })
  async show(
    @Param('membershipId', IssuerIdPipe) membershipId: string,
    @Param('interactionId') interactionId: string,
    @Headers('cookie') cookies: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    sendPageResult(response, await this.interactions.show(membershipId, interactionId, cookieOf(cookies, INTERACTION_COOKIE)));
  }

  @InteractionStep('login', { summary: 'The login form (username, password)', description: 'Sign-in defenses apply; a wrong password shows the form again (400).' })
  async login(@Param('membershipId', IssuerIdPipe) membershipId: string, @InteractionPost() post: PostedStep, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.interactions.login(membershipId, post.interactionId, post.cookie, post.form, post.visitor));
  }

  @InteractionStep('second-factor', { summary: 'The second factor form (code: a TOTP or recovery code)', description: 'A wrong code counts as a sign-in failure.' })
  async secondFactor(@Param('membershipId', IssuerIdPipe) membershipId: string, @InteractionPost() post: PostedStep, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.interactions.secondFactor(membershipId, post.interactionId, post.cookie, post.form, post.visitor));
  }

  @InteractionStep('consent', { summary: 'The consent form (decision=allow|deny)', description: 'deny: back to redirect_uri with error=access_denied.' })
  async consent(@Param('membershipId', IssuerIdPipe) membershipId: string, @InteractionPost() post: PostedStep, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.interactions.consent(membershipId, post.interactionId, post.cookie, post.form));
  }

  @Get('pages.css')
  @Public()
  @ApiRoute({ summary: "The pages' stylesheet", answers: [{ status: 200, description: 'text/css' }] })
  stylesheet(@Param('membershipId', IssuerIdPipe) _membershipId: string, @Res() response: Response): void {
    response.setHeader('Content-Type', 'text/css; charset=utf-8');
    response.setHeader('Cache-Control', 'public, max-age=3600');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.status(200).send(PAGES_STYLESHEET);
  }

  @Get('logout')
  @Public()
  @ApiRoute({
    summary: 'End session endpoint (OpenID Connect RP-Initiated Logout 1.0)',
    description: 'Ends the single sign-on session; redirects to a registered post_logout_redirect_uri (exact match) with state, else a signed-out page.',
    answers: [PAGE_RESPONSE, REDIRECT_RESPONSE],
  })
  async logout(@Param('membershipId', IssuerIdPipe) membershipId: string, @SignOnVisit() visit: SignOnVisit, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.endSession.logout(membershipId, visit.query, visit.ssoCookie));
  }

  @Post('logout')
  @Public()
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiRoute({
    summary: 'End session endpoint by POST (RP-Initiated Logout 1.0 2)',
    description: "GET logout's parameters, form-encoded in the body; answered as GET answers them. A cross-site post carries no single sign-on cookie: the id_token_hint's sid names the session to end.",
    answers: [PAGE_RESPONSE, REDIRECT_RESPONSE],
  })
  async logoutByPost(@Param('membershipId', IssuerIdPipe) membershipId: string, @SignOnVisit() visit: SignOnVisit, @Res() response: Response): Promise<void> {
    sendPageResult(response, await this.endSession.logout(membershipId, visit.query, visit.ssoCookie));
  }
}
