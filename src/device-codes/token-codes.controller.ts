import { applyDecorators, Body, Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Caller } from '../common/caller';
import { Authenticated, ClientAddress, CurrentCaller, Public } from '../common/access-decorators';
import { ApiRoute } from '../common/api-route';
import { DEVICE_CODE_ADDRESS_WINDOW_SECONDS } from '../sign-in/sign-in-attempts';
import { sessionMetadata } from '../tokens/token.controller';
import { TokenResponseSchema, type TokenResponse } from '../tokens/token.dto';
import { CreateTokenCodeDto, DeviceAuthorizationSchema, PollTokenCodeDto, TokenCodeViewSchema } from './token-code.dto';
import { type DeviceAuthorization, TokenCodesService, type TokenCodeView } from './token-codes.service';

const DECIDE_DESCRIPTION =
  'Any active user of the membership, with no permission: it grants the user its own access. One decision per code; ' +
  'a second answers 409 TokenCodeAlreadyDecided.';

const POLL_DESCRIPTION =
  'RFC 8628 polling, checked in this order: unknown or consumed 400 InvalidDeviceCode; expired 400 ExpiredToken; ' +
  'pending and polled sooner than the interval 400 SlowDown (the interval grows by 5 s, at most 60); pending 400 ' +
  'AuthorizationPending; denied 400 AuthorizationDenied; approver inactive 401 UserInactive; approved: the token pair, ' +
  'a new session of the approver; approved with a scoped token: a scoped token (no refresh token) in that token\'s session, ' +
  'living no longer than it. Records TokenGenerated (grant "device_code").';

/** POST :userCode/approve and :userCode/deny: one route but for the decision it records. */
function DecisionRoute(action: 'approve' | 'deny', summary: string): MethodDecorator {
  return applyDecorators(
    Post(`:userCode/${action}`),
    HttpCode(200),
    Authenticated({ profile: true }),
    ApiRoute({
      summary,
      description: DECIDE_DESCRIPTION,
      security: 'token',
      params: [{ name: 'userCode' }],
      answers: [{ status: 200, type: TokenCodeViewSchema }],
      errors: [403, 404, 409],
    }),
  );
}

@ApiTags('device codes')
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/codes')
export class TokenCodesController {
  constructor(private readonly codes: TokenCodesService) {}

  @Post()
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Start a device sign-in (RFC 8628): a device code and a user code',
    description: 'Public; an Authorization header is ignored.',
    security: 'public',
    body: { model: CreateTokenCodeDto, examples: { device: { summary: 'A TV', value: { client_info: { name: 'Living room TV' } } } }, required: false },
    answers: [{ status: 201, type: DeviceAuthorizationSchema }],
    errors: [400, 404, 413, 415],
    errorExamples: {
      429: {
        description: `TooManyDeviceCodeRequests: more than DEVICE_CODE_ADDRESS_MAX codes requested from this client address within ${DEVICE_CODE_ADDRESS_WINDOW_SECONDS / 60} minutes (Retry-After, seconds)`,
        errorCode: 'TooManyDeviceCodeRequests',
        message: 'Too many device codes requested from this address; try again later',
      },
      503: {
        description: "AuthenticationServiceUnavailable: no free user code; the membership's code policy allows too few codes for those now stored (Retry-After, seconds)",
        errorCode: 'AuthenticationServiceUnavailable',
        message: "No free user code after 10 draws: the membership's code policy allows too few codes for the codes now stored",
      },
    },
  })
  create(@Param('membershipId') membershipId: string, @Body() body: CreateTokenCodeDto, @ClientAddress() address: string): Promise<DeviceAuthorization> {
    return this.codes.create(membershipId, body.client_info, address);
  }

  @Post('token')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Poll for the token pair with the device code',
    description: POLL_DESCRIPTION,
    security: 'public',
    headers: [
      { name: 'X-UserAgent', required: false, description: 'Device user agent, stored with the session' },
      { name: 'X-IpAddress', required: false, description: 'Device IP address, stored with the session' },
    ],
    body: { model: PollTokenCodeDto, examples: { poll: { summary: 'Poll', value: { device_code: 'kXo0ylgtk5HwXk0Xx0mkNs6QDvnkpOWhbp6H8MK8O8A' } } } },
    answers: [{ status: 201, type: TokenResponseSchema }],
    errors: [400, 401, 404, 413, 415],
  })
  poll(@Param('membershipId') membershipId: string, @Body() body: PollTokenCodeDto, @Req() request: Request): Promise<TokenResponse> {
    return this.codes.poll(membershipId, body.device_code, sessionMetadata(request));
  }

  @Get(':userCode')
  @Authenticated({ profile: true })
  @ApiRoute({
    summary: 'View a pending device code by its user code',
    description: 'Any active user of the membership; Basic 403.',
    security: 'token',
    params: [{ name: 'userCode', description: 'Any case; spaces and dashes are ignored' }],
    answers: [{ status: 200, type: TokenCodeViewSchema }],
    errors: [403, 404],
  })
  view(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Param('userCode') userCode: string,
    @ClientAddress() address: string,
  ): Promise<TokenCodeView> {
    return this.codes.view(caller, membershipId, userCode, address);
  }

  @DecisionRoute('approve', 'Approve a device code: the device gets a session of the caller')
  approve(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Param('userCode') userCode: string,
    @ClientAddress() address: string,
  ): Promise<TokenCodeView> {
    return this.codes.decide(caller, membershipId, userCode, 'approved', address);
  }

  @DecisionRoute('deny', 'Deny a device code')
  deny(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Param('userCode') userCode: string,
    @ClientAddress() address: string,
  ): Promise<TokenCodeView> {
    return this.codes.decide(caller, membershipId, userCode, 'denied', address);
  }
}
