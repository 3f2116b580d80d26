import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { OidcIssuerController } from './oidc-issuer.controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeys } from './signing-keys';
import { SigningKeysController } from './signing-keys.controller';

/** Each membership as an OpenID Provider (docs/oidc.md): so far its signing keys and JWKS. */
@Module({
  imports: [EventsModule],
  controllers: [OidcIssuerController, SigningKeysController],
  providers: [SigningKeyRepository, SigningKeys],
})
export class OidcModule {}
