import { Global, Module } from '@nestjs/common';
import { QueueRegistry } from './queue-registry';

/** One QueueRegistry per application, visible to every module (queue owners and metrics). */
@Global()
@Module({
  providers: [QueueRegistry],
  exports: [QueueRegistry],
})
export class QueueModule {}
