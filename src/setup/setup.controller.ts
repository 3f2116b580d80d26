import { Body, type CanActivate, Controller, type ExecutionContext, HttpCode, Injectable, Post, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/access-decorators';
import { SetUpInstallationSchema } from '../memberships/membership.schemas';
import { ProvisionMembershipDto } from '../memberships/membership.dto';
import type { ProvisionedMembership } from '../membership-admin/membership-provisioner';
import { SETUP_REJECTED_MESSAGE, SetupService } from './setup.service';
import { ApiRoute } from '../common/api-route';

@Injectable()
export class SetupTokenGuard implements CanActivate {
  constructor(private readonly setupService: SetupService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    await this.setupService.authorize(request.headers['x-setup-token']);
    return true;
  }
}

@ApiTags('setup')
@Controller()
export class SetupController {
  constructor(private readonly setupService: SetupService) {}

  @Post('setup')
  @Public()
  @UseGuards(SetupTokenGuard)
  @HttpCode(201)
  @ApiRoute({
    summary: 'First run: create the system membership, its admin role and user, and optionally an application',
    description:
      'Only while no membership exists. The token is SETUP_TOKEN, or the one the service wrote to its log at its ' +
      'latest start when SETUP_TOKEN is unset (each start writes a new one; the earlier ones stop working). ' +
      'Two concurrent calls: one wins.',
    security: ['setup_token'],
    answers: [{ status: 201, description: 'The installation is set up', type: SetUpInstallationSchema }],
    errors: [400, 413, 415],
    errorExamples: {
      401: { description: 'SetupRejected: the X-Setup-Token header is missing or wrong', errorCode: 'SetupRejected', message: SETUP_REJECTED_MESSAGE },
      409: { description: 'AlreadySetUp', errorCode: 'AlreadySetUp', message: 'The installation is already set up' },
    },
  })
  setup(@Body() body: ProvisionMembershipDto): Promise<ProvisionedMembership> {
    return this.setupService.setup(body);
  }
}
