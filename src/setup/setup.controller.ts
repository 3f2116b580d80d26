import { Body, type CanActivate, Controller, type ExecutionContext, HttpCode, Injectable, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/access-decorators';
import { ApiErrorResponse, ApiErrors } from '../common/openapi';
import { ProvisionedMembershipSchema } from '../memberships/membership.schemas';
import { ProvisionMembershipDto } from '../memberships/membership.dto';
import type { ProvisionedMembership } from '../membership-admin/membership-provisioner';
import { SETUP_REJECTED_MESSAGE, SetupService } from './setup.service';

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
  @ApiOperation({
    summary: 'First run: create the system membership, its admin role and user, and optionally an application',
    description:
      'Only while no membership exists. The token is SETUP_TOKEN, or the one the service wrote to its log at its ' +
      'latest start when SETUP_TOKEN is unset (each start writes a new one; the earlier ones stop working). ' +
      'Two concurrent calls: one wins.',
  })
  @ApiSecurity('setup_token')
  @ApiResponse({ status: 201, description: 'The installation is set up', type: ProvisionedMembershipSchema })
  @ApiErrorResponse(401, {
    description: 'SetupRejected: the X-Setup-Token header is missing or wrong',
    errorCode: 'SetupRejected',
    message: SETUP_REJECTED_MESSAGE,
  })
  @ApiErrorResponse(409, { description: 'AlreadySetUp', errorCode: 'AlreadySetUp', message: 'The installation is already set up' })
  @ApiErrors(400, 413, 415)
  setup(@Body() body: ProvisionMembershipDto): Promise<ProvisionedMembership> {
    return this.setupService.setup(body);
  }
}
