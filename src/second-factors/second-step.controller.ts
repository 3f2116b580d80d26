import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/access-decorators';
import { ApiJsonBody } from '../common/api-docs';
import { ApiErrors } from '../common/openapi';
import { ApiSessionHeaders, sessionMetadata } from '../tokens/token.controller';
import { TokenResponseSchema, type TokenResponse } from '../tokens/token.dto';
import { clientAddressOf } from '../common/access-decorators';
import { MfaTokenDto, SecondStepDto, TotpSecretSchema } from './mfa.dto';
import { SecondStepService } from './second-step.service';

const TOKEN_RULES =
  'The mfa_token comes from the 401 MfaRequired answer of /generate-token or a provider sign-in; it is single use, lives 300 s ' +
  'and works on these routes only. A used, expired or forged one: 401 InvalidToken.';

@ApiTags('tokens')
@Controller('generate-token/mfa')
export class SecondStepController {
  constructor(private readonly secondStep: SecondStepService) {}

  @Post()
  @Public()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Finish a sign-in with its second factor: the token response',
    description:
      `Public. Body: mfa_token and exactly one of totp, recovery_code, webauthn. ${TOKEN_RULES} Wrong code: 400 MfaCodeInvalid ` +
      '(a sign-in failure); the fifth wrong code ends the mfa_token (401 InvalidToken). A new session whose tokens carry amr; ' +
      'records TokenGenerated (with amr). After enrollment at sign-in (mfa_policy required) the answer adds recovery_codes.',
  })
  @ApiSecurity({})
  @ApiSessionHeaders()
  @ApiJsonBody(SecondStepDto, {
    totp: { summary: 'A TOTP code', value: { mfa_token: '<from 401 MfaRequired>', totp: '123456' } },
    recoveryCode: { summary: 'A recovery code', value: { mfa_token: '<from 401 MfaRequired>', recovery_code: 'BCDF-GH2345' } },
  })
  @ApiResponse({ status: 201, description: 'Token pair (plus recovery_codes after enrollment)', type: TokenResponseSchema })
  @ApiErrors(400, 401, 413, 415)
  complete(@Body() body: SecondStepDto, @Req() request: Request): Promise<TokenResponse & { recovery_codes?: string[] }> {
    return this.secondStep.complete(body, sessionMetadata(request), clientAddressOf(request));
  }

  @Post('webauthn-options')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Passkey assertion options for a sign-in waiting for its second factor (PublicKeyCredentialRequestOptionsJSON)',
    description: `Public. ${TOKEN_RULES} A new challenge (32 random bytes, single use) replaces the previous one.`,
  })
  @ApiSecurity({})
  @ApiJsonBody(MfaTokenDto, { token: { summary: 'The mfa_token', value: { mfa_token: '<from 401 MfaRequired>' } } })
  @ApiResponse({ status: 200, description: 'PublicKeyCredentialRequestOptionsJSON', schema: { type: 'object', additionalProperties: true } })
  @ApiErrors(400, 401, 413, 415)
  passkeyOptions(@Body() body: MfaTokenDto): Promise<object> {
    return this.secondStep.passkeyOptions(body.mfa_token);
  }

  @Post('totp')
  @Public()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Enroll TOTP at sign-in (mfa_policy required, user without a factor): a secret and its otpauth:// URI',
    description: `Public. ${TOKEN_RULES} Then POST /generate-token/mfa {mfa_token, totp} enables it and answers the tokens and recovery_codes.`,
  })
  @ApiSecurity({})
  @ApiJsonBody(MfaTokenDto, { token: { summary: 'The mfa_token', value: { mfa_token: '<from 401 MfaRequired>' } } })
  @ApiResponse({ status: 201, type: TotpSecretSchema })
  @ApiErrors(400, 401, 413, 415)
  enrollTotp(@Body() body: MfaTokenDto): Promise<{ secret: string; otpauth_uri: string }> {
    return this.secondStep.enrollTotp(body.mfa_token);
  }
}
