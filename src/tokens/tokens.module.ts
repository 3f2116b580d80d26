import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { ApplicationsModule } from '../applications/applications.module';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { PasswordHasherModule } from '../users/password-hasher.module';
import { SignInModule } from '../sign-in/sign-in.module';
import { JwtCodec, TOKEN_JWT_OPTIONS } from './jwt-codec';
import { TokenController } from './token.controller';
import { TokenIssuer } from './token-issuer';
import { ActiveTokensController, RevokedTokensController } from './token-listing.controller';
import { TokenListingService } from './token-listing.service';
import { SessionsModule } from '../sessions/sessions.module';
import { IssuedTokenStore } from './issued-token-store';
import { PasswordSignIn } from './password-sign-in';
import { SignInSessions } from './sign-in-sessions';
import { TokenService } from './token.service';
import { TokenVerifier } from './token-verifier';

/** Sign-in, the token endpoints and the token listings; the codec is @nestjs/jwt with each membership's key. */
@Module({
  imports: [JwtModule.register(TOKEN_JWT_OPTIONS), PasswordHasherModule, EventsModule, ApplicationsModule, CallerPermissionsModule, SignInModule, SessionsModule],
  controllers: [TokenController, ActiveTokensController, RevokedTokensController],
  providers: [JwtCodec, TokenVerifier, TokenIssuer, IssuedTokenStore, PasswordSignIn, SignInSessions, TokenService, TokenListingService],
  exports: [JwtCodec, TokenVerifier, PasswordSignIn, SignInSessions, TokenService, SessionsModule],
})
export class TokensModule {}
