import { Body, type CanActivate, Controller, type ExecutionContext, HttpCode, Injectable, Post, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '../auth/decorators';
import { ProvisionMembershipDto } from '../memberships/membership.dto';
import type { ProvisionedMembership } from '../memberships/membership-provisioner';
import { SetupService } from './setup.service';

@Injectable()
export class SetupTokenGuard implements CanActivate {
  constructor(private readonly setupService: SetupService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    await this.setupService.authorize(request.headers['x-setup-token']);
    return true;
  }
}

@Controller()
export class SetupController {
  constructor(private readonly setupService: SetupService) {}

  @Post('setup')
  @Public()
  @UseGuards(SetupTokenGuard)
  @HttpCode(201)
  setup(@Body() body: ProvisionMembershipDto): Promise<ProvisionedMembership> {
    return this.setupService.setup(body);
  }
}
