import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationsModule } from '../applications/applications.module';
import { ACCESS_RECHECK } from '../common/access-recheck';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { TokensModule } from '../tokens/tokens.module';
import { AccessGuard } from './access.guard';
import { Authenticator } from './authenticator';

/**
 * The room above the features: the global guard that reads the access decorators (src/common),
 * and the Bearer and Basic authenticators. It uses feature services; no feature imports it.
 * Global only for ACCESS_RECHECK (src/common/access-recheck.ts), the guard's decision asked again
 * by a feature through that port (the event stream, once its start is fixed).
 */
@Global()
@Module({
  imports: [TokensModule, ApplicationsModule, CallerPermissionsModule, MembershipStoreModule],
  providers: [Authenticator, AccessGuard, { provide: APP_GUARD, useExisting: AccessGuard }, { provide: ACCESS_RECHECK, useExisting: AccessGuard }],
  exports: [ACCESS_RECHECK],
})
export class AccessModule {}
