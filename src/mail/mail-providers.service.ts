import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { MembershipRepository } from '../memberships/membership.repository';
import { SmtpEgress } from './smtp-egress';

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
    private readonly smtp: SmtpEgress,
  ) {}

  async test(membershipId: string, slug: string): Promise<MailProviderTestAnswer> {
    const membership = await this.memberships.findById(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const provider = membership.mailProviders.find((entry) => entry.slug === slug);
    if (!provider) throw new DomainError('MailProviderNotFound', 'The membership has no mail provider with this slug');
    const result = await this.smtp.verify(provider);
    return result.outcome === 'sent' ? { ok: true } : { ok: false, error: result.error };
  }
}
