import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { Authenticated, ClientAddress, CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import { CheckPasswordAnswerSchema, CheckPasswordDto } from './user.dto';
import { UserPasswordService } from './user-password.service';
import { ApiRoute } from '../common/api-route';

const DESCRIPTION =
  "Checks the caller's own password (Bearer, user; Basic 403). Body {password}; the query form ?password= is deprecated " +
  '(the body wins). One Argon2 verification; over 256 characters is false unhashed; no event or session change. A false answer is a failed ' +
  'sign-in of the caller, and a locked caller answers 429 TooManySignInAttempts with Retry-After.';

/** `/users/check-password`: the membership is the token's. */
@ApiTags('users')
@ApiAuth()
@Controller('users/check-password')
export class PasswordCheckController {
  constructor(private readonly passwords: UserPasswordService) {}

  @Post()
  @HttpCode(200)
  @Authenticated()
  @ApiRoute({
    summary: "Check the caller's own password",
    description: DESCRIPTION,
    query: [{ name: 'password', type: String, required: false, deprecated: true, description: 'Deprecated: send the body instead' }],
    body: { model: CheckPasswordDto, examples: { check: { summary: 'A password', value: { password: 'correct horse battery' } } }, required: false },
    answers: [{ status: 200, type: CheckPasswordAnswerSchema, example: { valid: true } }],
    errors: [400, 401, 403, 429],
  })
  checkByPost(@CurrentCaller() caller: Caller, @Body() body: CheckPasswordDto, @Query('password') query: unknown, @ClientAddress() address: string): Promise<{ valid: boolean }> {
    return this.passwords.checkPassword(caller, body.password ?? query, address);
  }

  @Get()
  @Authenticated()
  @ApiRoute({
    summary: "Check the caller's own password (query form, deprecated)",
    description: DESCRIPTION,
    deprecated: true,
    query: [{ name: 'password', type: String, required: true, deprecated: true, example: 'correct horse battery' }],
    answers: [{ status: 200, type: CheckPasswordAnswerSchema, example: { valid: false } }],
    errors: [400, 401, 403, 429],
  })
  checkByGet(@CurrentCaller() caller: Caller, @Body() body: CheckPasswordDto, @Query('password') query: unknown, @ClientAddress() address: string): Promise<{ valid: boolean }> {
    return this.passwords.checkPassword(caller, body?.password ?? query, address);
  }
}
