import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { DeviceCodesModule } from '../device-codes/device-codes.module';
import { EventsModule } from '../events/events.module';
import { BackChannelController } from './back-channel.controller';
import { ClientCredentialsGrant } from './client-credentials.grant';
import { OidcDeviceAuthorization } from './device-authorization';
import { Issuers } from './issuer';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { OidcClients } from './oidc-clients';
import { OidcIssuerController } from './oidc-issuer.controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';
import { OidcTokenEndpoint } from './token-endpoint';
import { TokenEndpointController } from './token-endpoint.controller';
import { TokenIntrospection } from './token-introspection';

/** Each membership as an OpenID Provider (docs/oidc.md). */
@Module({
  imports: [ApplicationsModule, DeviceCodesModule, EventsModule],
  controllers: [OidcIssuerController, SigningKeysController, TokenEndpointController, BackChannelController],
  providers: [
    Issuers,
    OidcClients,
    OidcTokenEndpoint,
    SigningKeyRepository,
    SigningKeys,
    OidcClientTokenRepository,
    ClientCredentialsGrant,
    OidcDeviceAuthorization,
    TokenIntrospection,
  ],
})
export class OidcModule {}
