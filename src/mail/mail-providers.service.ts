import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DomainError } from '../common/errors';
import { MembershipRepository } from '../memberships/membership.repository';
import { OUTBOUND_LOOKUP } from '../outbound/outbound.module';
import type { LookupFunction } from '../outbound/outbound-lookup';
import { OUTGOING_CALL_OBSERVER, type OutgoingCallObserver } from '../outbound/outgoing-calls';
import { toOutgoingMailCall, verifySmtp } from './smtp-sender';

export interface MailProviderTestAnswer {
  ok: boolean;
  /** SMTP code and text, or the network error (≤ 500 characters); only when ok is false. */
  error?: string;
}

/** `POST /memberships/{m}/mail-providers/{slug}/test`: connect, TLS and AUTH, no mail sent. */
@Injectable()
export class MailProvidersService {
  constructor(
    private readonly memberships: MembershipRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OUTBOUND_LOOKUP) private readonly lookup: LookupFunction,
    @Optional() @Inject(OUTGOING_CALL_OBSERVER) private readonly observer?: OutgoingCallObserver,
  ) {}

  async test(membershipId: string, slug: string): Promise<MailProviderTestAnswer> {
    const membership = await this.memberships.findById(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const provider = membership.mailProviders.find((entry) => entry.slug === slug);
    if (!provider) throw new DomainError('MailProviderNotFound', 'The membership has no mail provider with this slug');
    const started = process.hrtime.bigint();
    const result = await verifySmtp(provider, { lookup: this.lookup, timeoutMs: this.config.mailTimeoutMs });
    const call = toOutgoingMailCall(result, Number(process.hrtime.bigint() - started) / 1e9);
    if (call && this.observer) {
      try {
        this.observer.observe(call);
      } catch {
        // Metrics must never break the answer.
      }
    }
    return result.outcome === 'sent' ? { ok: true } : { ok: false, error: result.error };
  }
}
