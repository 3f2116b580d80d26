import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/access-decorators';
import { SESSION_HEADERS, sessionMetadata } from '../tokens/token.controller';
import { TokenResponseSchema, type TokenResponse } from '../tokens/token.dto';
import { clientAddressOf } from '../common/access-decorators';
import { MfaTokenDto, SecondStepDto, TotpSecretSchema } from './mfa.dto';
import { SecondStepService } from './second-step.service';
import { ApiRoute } from '../common/api-route';

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
  @ApiRoute({
    summary: 'Finish a sign-in with its second factor: the token response',
    description:
      `Public. Body: mfa_token and exactly one of totp, recovery_code, webauthn. ${TOKEN_RULES} Wrong code: 400 MfaCodeInvalid ` +
      '(a sign-in failure); the fifth wrong code ends the mfa_token (401 InvalidToken). A new session whose tokens carry amr; ' +
      'records TokenGenerated (with amr). After enrollment at sign-in (mfa_policy required) the answer adds recovery_codes.',
    security: 'public',
    headers: [...SESSION_HEADERS],
    body: {
      model: SecondStepDto,
      examples: {
        totp: { summary: 'A TOTP code', value: { mfa_token: '<from 401 MfaRequired>', totp: '123456' } },
        recoveryCode: { summary: 'A recovery code', value: { mfa_token: '<from 401 MfaRequired>', recovery_code: 'BCDF-GH2345' } },
      },
    },
    answers: [{ status: 201, description: 'Token pair (plus recovery_codes after enrollment)', type: TokenResponseSchema }],
    errors: [400, 401, 413, 415],
  })
  complete(@Body() body: SecondStepDto, @Req() request: Request): Promise<TokenResponse & { recovery_codes?: string[] }> {
    return this.secondStep.complete(body, sessionMetadata(request), clientAddressOf(request));
  }

  @Post('webauthn-options')
  @Public()
  @HttpCode(200)
  @ApiRoute({
    summary: 'Passkey assertion options for a sign-in waiting for its second factor (PublicKeyCredentialRequestOptionsJSON)',
    description: `Public. ${TOKEN_RULES} A new challenge (32 random bytes, single use) replaces the previous one.`,
    security: 'public',
    body: { model: MfaTokenDto, examples: { token: { summary: 'The mfa_token', value: { mfa_token: '<from 401 MfaRequired>' } } } },
    answers: [{ status: 200, description: 'PublicKeyCredentialRequestOptionsJSON', schema: { type: 'object', additionalProperties: true } }],
    errors: [400, 401, 413, 415],
  })
  passkeyOptions(@Body() body: MfaTokenDto): Promise<object> {
    return this.secondStep.passkeyOptions(body.mfa_token);
  }

  @Post('totp')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Enroll TOTP at sign-in (mfa_policy required, user without a factor): a secret and its otpauth:// URI',
    description: `Public. ${TOKEN_RULES} Then POST /generate-token/mfa {mfa_token, totp} enables it and answers the tokens and recovery_codes.`,
    security: 'public',
    body: { model: MfaTokenDto, examples: { token: { summary: 'The mfa_token', value: { mfa_token: '<from 401 MfaRequired>' } } } },
    answers: [{ status: 201, type: TotpSecretSchema }],
    errors: [400, 401, 413, 415],
  })
  enrollTotp(@Body() body: MfaTokenDto): Promise<{ secret: string; otpauth_uri: string }> {
    return this.secondStep.enrollTotp(body.mfa_token);
  }
}
