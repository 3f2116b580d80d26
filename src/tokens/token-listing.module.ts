import { Module } from '@nestjs/common';
import { TokenListingController } from './token-listing.controller';
import { TokenListingService } from './token-listing.service';

/** The token listings; the session repository and revoker come from the global TokensModule. */
@Module({
  controllers: [TokenListingController],
  providers: [TokenListingService],
})
export class TokenListingModule {}
