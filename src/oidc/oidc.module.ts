import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { EventsModule } from '../events/events.module';
import { SessionsModule } from '../sessions/sessions.module';
import { Issuers } from './issuer';
import { OidcClients } from './oidc-clients';
import { OidcTokenRepository } from './oidc-token.repository';
import { OidcTokens } from './oidc-tokens';
import { OidcIssuerController } from './oidc-issuer.controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';
import { OidcTokenEndpoint } from './token-endpoint';
import { TokenEndpointController } from './token-endpoint.controller';

/** Each membership as an OpenID Provider (docs/oidc.md). */
@Module({
  imports: [ApplicationsModule, EventsModule, SessionsModule],
  controllers: [OidcIssuerController, SigningKeysController, TokenEndpointController],
  providers: [Issuers, OidcClients, OidcTokenEndpoint, OidcTokenRepository, OidcTokens, SigningKeyRepository, SigningKeys],
  exports: [Issuers, OidcClients, OidcTokenEndpoint, OidcTokens, SigningKeys],
})
export class OidcModule {}
