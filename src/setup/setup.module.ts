import { Global, Module } from '@nestjs/common';
import { SetupController, SetupTokenGuard } from './setup.controller';
import { SetupService } from './setup.service';

@Global()
@Module({
  controllers: [SetupController],
  providers: [SetupService, SetupTokenGuard],
  exports: [SetupService],
})
export class SetupModule {}
