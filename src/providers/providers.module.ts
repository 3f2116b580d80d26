import { Module } from '@nestjs/common';
import { OutboundModule } from '../outbound/outbound.module';
import { UserTypesModule } from '../user-types/user-types.module';
import { ProviderRepository } from './provider.repository';
import { ProvidersController } from './providers.controller';
import { ProvidersService } from './providers.service';

/** External identity providers (contract "External identity providers"): their configuration API. */
@Module({
  imports: [OutboundModule, UserTypesModule],
  controllers: [ProvidersController],
  providers: [ProviderRepository, ProvidersService],
})
export class ProvidersModule {}
