import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { OutboundModule } from '../outbound/outbound.module';
import { RecoveryModule } from '../recovery/recovery.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { TokensModule } from '../tokens/tokens.module';
import { UserTypesModule } from '../user-types/user-types.module';
import { UsersModule } from '../users/users.module';
import { OidcClient } from './oidc-client';
import { ProviderCache } from './provider-cache';
import { ProviderIdentityRepository } from './provider-identity.repository';
import { ProviderLoginController } from './provider-login.controller';
import { ProviderSignIn } from './provider-sign-in';
import { ProviderRepository } from './provider.repository';
import { ProvidersController } from './providers.controller';
import { ProvidersService } from './providers.service';

/** External identity providers (contract "External identity providers"): their configuration API and sign-in. */
@Module({
  imports: [OutboundModule, UserTypesModule, UsersModule, TokensModule, MembershipStoreModule, EventsModule, CallerPermissionsModule, RecoveryModule],
  controllers: [ProvidersController, ProviderLoginController],
  providers: [ProviderRepository, ProviderIdentityRepository, ProviderCache, ProvidersService, OidcClient, ProviderSignIn],
})
export class ProvidersModule {}
