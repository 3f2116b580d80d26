import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { EventsModule } from '../events/events.module';
import { Issuers } from './issuer';
import { OidcClients } from './oidc-clients';
import { OidcIssuerController } from './oidc-issuer.controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';
import { OidcTokenEndpoint } from './token-endpoint';
import { TokenEndpointController } from './token-endpoint.controller';

/** Each membership as an OpenID Provider (docs/oidc.md). */
@Module({
  imports: [ApplicationsModule, EventsModule],
  controllers: [OidcIssuerController, SigningKeysController, TokenEndpointController],
  providers: [Issuers, OidcClients, OidcTokenEndpoint, SigningKeyRepository, SigningKeys],
})
export class OidcModule {}
