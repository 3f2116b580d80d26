import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './access.guard';
import { Authenticator } from './authenticator';
import { CallerPermissions } from './caller-permissions';

@Global()
@Module({
  providers: [Authenticator, CallerPermissions, { provide: APP_GUARD, useClass: AccessGuard }],
  exports: [Authenticator, CallerPermissions],
})
export class AuthModule {}
