import { Module, type OnModuleInit } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { DeviceCodesModule } from '../device-codes/device-codes.module';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { SessionsModule } from '../sessions/sessions.module';
import { TokensModule } from '../tokens/tokens.module';
import { UsersModule } from '../users/users.module';
import { AuthorizationCodeGrant } from './authorization-code.grant';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import { AuthorizationCodes } from './authorization-codes';
import { AuthorizationController } from './authorization.controller';
import { AuthorizationEndpoint } from './authorization-endpoint';
import { ConsentRepository } from './consent.repository';
import { Consents } from './consents';
import { ConsentsController } from './consents.controller';
import { EndSession } from './end-session';
import { FrontChannel } from './front-channel';
import { IdTokenHints } from './id-token-hint';
import { InteractionRepository } from './interaction.repository';
import { Interactions } from './interactions';
import { BackChannelController } from './back-channel.controller';
import { ClientCredentialsGrant } from './client-credentials.grant';
import { OidcDeviceAuthorization } from './device-authorization';
import { DeviceCodeGrant } from './device-code.grant';
import { Issuers } from './issuer';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { OidcClients } from './oidc-clients';
import { OidcIssuerController } from './oidc-issuer.controller';
import { OidcTokenRepository } from './oidc-token.repository';
import { OidcTokens } from './oidc-tokens';
import { RefreshTokenGrant } from './refresh-token.grant';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';
import { SsoSessions } from './sso-sessions';
import { OidcTokenEndpoint } from './token-endpoint';
import { TokenEndpointController } from './token-endpoint.controller';
import { UserInfo } from './userinfo';
import { UserInfoController } from './userinfo.controller';
import { TokenIntrospection } from './token-introspection';

/** Each membership as an OpenID Provider (docs/oidc.md). CodeFactor comes from the global SecondFactorsModule. */
@Module({
  imports: [ApplicationsModule, DeviceCodesModule, EventsModule, MembershipStoreModule, SessionsModule, TokensModule, UsersModule],
  controllers: [OidcIssuerController, SigningKeysController, TokenEndpointController, BackChannelController, AuthorizationController, UserInfoController, ConsentsController],
  providers: [
    Issuers,
    OidcClients,
    OidcTokenEndpoint,
    OidcTokenRepository,
    OidcTokens,
    SigningKeyRepository,
    SigningKeys,
    SsoSessions,
    FrontChannel,
    InteractionRepository,
    AuthorizationCodeRepository,
    AuthorizationCodes,
    ConsentRepository,
    Consents,
    AuthorizationEndpoint,
    Interactions,
    IdTokenHints,
    EndSession,
    UserInfo,
    AuthorizationCodeGrant,
    RefreshTokenGrant,
    OidcClientTokenRepository,
    ClientCredentialsGrant,
    OidcDeviceAuthorization,
    DeviceCodeGrant,
    TokenIntrospection,
  ],
  exports: [Issuers, OidcClients, OidcTokenEndpoint, OidcTokens, SigningKeys],
})
export class OidcModule implements OnModuleInit {
  constructor(
    private readonly endpoint: OidcTokenEndpoint,
    private readonly authorizationCode: AuthorizationCodeGrant,
    private readonly refreshToken: RefreshTokenGrant,
  ) {}

  /** The token endpoint's grants of the code flow. */
  onModuleInit(): void {
    this.endpoint.register(this.authorizationCode);
    this.endpoint.register(this.refreshToken);
  }
}
