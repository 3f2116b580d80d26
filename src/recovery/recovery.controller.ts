import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ClientAddress, Public } from '../common/access-decorators';
import { ApiRoute } from '../common/api-route';
import { ActivateDto, ResetAnswerSchema, ResetRequestDto, SetPasswordDto, VerifyOtpAnswerSchema, VerifyOtpDto } from './recovery.dto';
import { ChallengeRedemption } from './challenge-redemption';
import { OtpExchange } from './otp-exchange';
import { PasswordResetRequests, RESET_ANSWER } from './password-reset-requests';

const PUBLIC_NOTE = 'Public; an Authorization header is ignored.';
const EXAMPLE_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXAiOiJyZXNldCJ9.c2lnbmF0dXJl';

/** Account recovery and self-activation by mail (contract "Account recovery, activation and password checks"). */
@ApiTags('account recovery')
@ApiSecurity({})
@Controller()
export class RecoveryController {
  constructor(
    private readonly resets: PasswordResetRequests,
    private readonly otps: OtpExchange,
    private readonly redemption: ChallengeRedemption,
  ) {}

  @Post('memberships/:membershipId/users/reset-password')
  @Public()
  @HttpCode(202)
  @ApiRoute({
    summary: 'Ask for a password reset mail',
    description:
      `${PUBLIC_NOTE} Exactly one of email_address and username. The answer is the same whether or not the user exists, ` +
      'is active or asked within RESET_MIN_INTERVAL_SECONDS; the work happens after it. An active user gets a reset token ' +
      '(and a one-time password when otp_settings.enabled) through the mail hooks on UserPasswordReset.',
    params: [{ name: 'membershipId' }],
    body: {
      model: ResetRequestDto,
      examples: {
        email: { summary: 'By e-mail address', value: { email_address: 'ada@example.com' } },
        username: { summary: 'By username', value: { username: 'ada' } },
      },
    },
    answers: [{ status: 202, type: ResetAnswerSchema, description: 'Always this answer', example: RESET_ANSWER }],
    errors: [400, 404, 413, 415],
  })
  requestReset(@Param('membershipId') membershipId: string, @Body() body: ResetRequestDto): Promise<typeof RESET_ANSWER> {
    return this.resets.requestReset(membershipId, body);
  }

  @Post('verify-otp')
  @Public()
  @HttpCode(201)
  @ApiRoute({
    summary: 'Exchange a mailed one-time password for a reset token',
    description:
      `${PUBLIC_NOTE} The new reset token replaces the mailed one. Five attempts per OTP; every failure ` +
      '(unknown user, no OTP, wrong, expired, used up) answers 401 OtpInvalid and is a failed sign-in of its login; a locked login ' +
      'answers 429 TooManySignInAttempts with Retry-After.',
    body: {
      model: VerifyOtpDto,
      examples: { otp: { summary: 'An OTP', value: { membership_id: '01J9Z8Q4M3XK7V2N5B6C8D0E1F', email_address: 'ada@example.com', otp: '482913' } } },
    },
    answers: [{ status: 201, type: VerifyOtpAnswerSchema, example: { reset_token: EXAMPLE_TOKEN, expires_in: 3600 } }],
    errors: [400, 401, 404, 413, 415, 429],
  })
  verifyOtp(@Body() body: VerifyOtpDto, @ClientAddress() clientAddress: string): Promise<{ reset_token: string; expires_in: number }> {
    return this.otps.verifyOtp(body, clientAddress);
  }

  @Post('memberships/:membershipId/users/set-password')
  @Public()
  @HttpCode(204)
  @ApiRoute({
    summary: 'Set a new password with a reset token',
    description:
      `${PUBLIC_NOTE} Single use. Revokes every session of the user (reason password_reset) and records UserPasswordChanged. ` +
      'Bad, used or replaced token: 401 InvalidToken; expired: 401 TokenWasExpired; inactive user: 401 UserInactive.',
    params: [{ name: 'membershipId' }],
    body: { model: SetPasswordDto, examples: { reset: { summary: 'A reset', value: { reset_token: EXAMPLE_TOKEN, password: 'a new long password' } } } },
    answers: [{ status: 204, description: 'The password is set' }],
    errors: [400, 401, 404, 413, 415],
  })
  async setPassword(@Param('membershipId') membershipId: string, @Body() body: SetPasswordDto): Promise<void> {
    await this.redemption.setPassword(membershipId, body);
  }

  @Post('memberships/:membershipId/users/activate')
  @Public()
  @HttpCode(204)
  @ApiRoute({
    summary: 'Activate your account with the mailed activation token',
    description: `${PUBLIC_NOTE} Records UserUpdated. Bad, used or ended token (an admin activated or froze the user): 401 InvalidToken; expired: 401 TokenWasExpired.`,
    params: [{ name: 'membershipId' }],
    body: { model: ActivateDto, examples: { activation: { summary: 'An activation', value: { activation_token: EXAMPLE_TOKEN } } } },
    answers: [{ status: 204, description: 'The user is active' }],
    errors: [400, 401, 404, 413, 415],
  })
  async activate(@Param('membershipId') membershipId: string, @Body() body: ActivateDto): Promise<void> {
    await this.redemption.activate(membershipId, body.activation_token);
  }
}
