import { Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Agent } from 'undici';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DestinationPolicy } from './destination-policy';
import { createOutboundAgent, type OutboundRequest, type OutboundResult, sendOutbound } from './outbound-http';
import { createOutboundLookup, type LookupFunction } from './outbound-lookup';

/** The service's HTTP client: one connection pool for every outbound call, closed at shutdown. */
@Injectable()
export class OutboundHttp implements OnApplicationShutdown {
  private readonly agent: Agent;

  constructor(policy: DestinationPolicy) {
    this.agent = createOutboundAgent(policy);
  }

  /** Never throws: a refused destination, a timeout or a network error is a result. */
  send(call: OutboundRequest): Promise<OutboundResult> {
    return sendOutbound(this.agent, call);
  }

  async onApplicationShutdown(): Promise<void> {
    // Callers have drained by now (beforeApplicationShutdown); whatever still runs is cut off.
    await this.agent.destroy();
  }
}

/** The policy's resolver, for transports that connect themselves (SMTP: nodemailer's `lookup`). */
export const OUTBOUND_LOOKUP = Symbol('OUTBOUND_LOOKUP');

/**
 * The one egress (architecture "outbound/"): the destination policy with OUTBOUND_ALLOW applied,
 * the HTTP client that enforces it at connect time, and the same resolver for other transports.
 */
@Module({
  providers: [
    { provide: DestinationPolicy, useFactory: (config: AppConfig) => new DestinationPolicy(config.outboundAllow), inject: [APP_CONFIG] },
    { provide: OUTBOUND_LOOKUP, useFactory: (policy: DestinationPolicy): LookupFunction => createOutboundLookup(policy), inject: [DestinationPolicy] },
    OutboundHttp,
  ],
  exports: [DestinationPolicy, OUTBOUND_LOOKUP, OutboundHttp],
})
export class OutboundModule {}
