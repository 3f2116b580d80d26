import { Global, Module } from '@nestjs/common';
import { TokenController } from './token.controller';
import { TokenIssuer } from './token-issuer';
import { TokenRevoker } from './token-revoker';
import { TokenSessionRepository } from './token-session.repository';
import { TokenService } from './token.service';
import { TokenVerifier } from './token-verifier';

@Global()
@Module({
  controllers: [TokenController],
  providers: [TokenSessionRepository, TokenVerifier, TokenIssuer, TokenRevoker, TokenService],
  exports: [TokenSessionRepository, TokenVerifier, TokenIssuer, TokenRevoker, TokenService],
})
export class TokensModule {}
