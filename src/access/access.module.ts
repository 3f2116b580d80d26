import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationsModule } from '../applications/applications.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { TokensModule } from '../tokens/tokens.module';
import { AccessGuard } from './access.guard';
import { Authenticator } from './authenticator';

/**
 * The room above the features: the global guard that reads the access decorators (src/common),
 * and the Bearer and Basic authenticators. It uses feature services; no feature imports it.
 */
@Module({
  imports: [TokensModule, ApplicationsModule, CallerPermissionsModule, MembershipStoreModule],
  providers: [Authenticator, { provide: APP_GUARD, useClass: AccessGuard }],
})
export class AccessModule {}
