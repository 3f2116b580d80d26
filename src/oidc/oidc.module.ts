import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { DeviceCodesModule } from '../device-codes/device-codes.module';
import { EventsModule } from '../events/events.module';
import { SessionsModule } from '../sessions/sessions.module';
import { BackChannelController } from './back-channel.controller';
import { ClientCredentialsGrant } from './client-credentials.grant';
import { OidcDeviceAuthorization } from './device-authorization';
import { DeviceCodeGrant } from './device-code.grant';
import { Issuers } from './issuer';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { OidcClients } from './oidc-clients';
import { OidcTokenRepository } from './oidc-token.repository';
import { OidcTokens } from './oidc-tokens';
import { OidcIssuerController } from './oidc-issuer.controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';
import { OidcTokenEndpoint } from './token-endpoint';
import { TokenEndpointController } from './token-endpoint.controller';
import { TokenIntrospection } from './token-introspection';

/** Each membership as an OpenID Provider (docs/oidc.md). */
@Module({
  imports: [ApplicationsModule, DeviceCodesModule, EventsModule, SessionsModule],
  controllers: [OidcIssuerController, SigningKeysController, TokenEndpointController, BackChannelController],
  providers: [
    Issuers,
    OidcClients,
    OidcTokenEndpoint,
    OidcTokenRepository,
    OidcTokens,
    SigningKeyRepository,
    SigningKeys,
    OidcClientTokenRepository,
    ClientCredentialsGrant,
    OidcDeviceAuthorization,
    DeviceCodeGrant,
    TokenIntrospection,
  ],
  exports: [Issuers, OidcClients, OidcTokenEndpoint, OidcTokens, SigningKeys],
})
export class OidcModule {}
