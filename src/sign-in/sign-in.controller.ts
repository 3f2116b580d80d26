import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentDecision, RequirePermission } from '../common/access-decorators';
import type { Decision } from '../permissions/decide';
import { ApiAuth } from '../common/openapi';
import { SignInService } from './sign-in.service';
import { ApiRoute } from '../common/api-route';

/** What an administrator does about a user's sign-in defenses. */
@ApiTags('users')
@ApiAuth()
@Controller('memberships/:membershipId/users')
export class SignInController {
  constructor(private readonly signIn: SignInService) {}

  @Post(':id/unlock')
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiRoute({
    summary: "Unlock a user's sign-in",
    description:
      "Clears the user's count of failed sign-ins and any lock (429 TooManySignInAttempts) with it; the next lock starts at " +
      "the policy's lock_seconds again. A lock of the client address is not touched. Never a caller's own: the own-record " +
      'rule that lets users update their names does not let them unlock themselves (403 AccessDenied).',
    answers: [{ status: 204, description: 'Unlocked (also when nothing was locked)' }],
    errors: [403, 404],
  })
  async unlock(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentDecision() decision: Decision | undefined): Promise<void> {
    await this.signIn.unlock(membershipId, id, decision);
  }
}
