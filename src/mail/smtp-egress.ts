import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { StoredMailProvider } from '../database/schema';
import { OUTBOUND_LOOKUP } from '../outbound/outbound.module';
import type { LookupFunction } from '../outbound/outbound-lookup';
import { OUTGOING_CALL_OBSERVER, type OutgoingCallObserver } from '../outbound/outgoing-calls';
import { type OutgoingMail, sendSmtp, type SmtpResult, toOutgoingMailCall, verifySmtp } from './smtp-sender';

/**
 * Every SMTP call the service makes (a hook's message, a provider test), as OutboundHttp is for
 * HTTP: through the outbound policy's lookup, within MAIL_TIMEOUT_MS, and counted by the
 * outgoing-call metrics.
 */
@Injectable()
export class SmtpEgress {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OUTBOUND_LOOKUP) private readonly lookup: LookupFunction,
    @Optional() @Inject(OUTGOING_CALL_OBSERVER) private readonly observer?: OutgoingCallObserver,
  ) {}

  /** One attempt at one message; never throws. */
  send(provider: StoredMailProvider, mail: OutgoingMail): Promise<SmtpResult> {
    return this.observed(() => sendSmtp(provider, mail, { lookup: this.lookup, timeoutMs: this.config.mailTimeoutMs }));
  }

  /** Connect, TLS and AUTH only; never throws. */
  verify(provider: StoredMailProvider): Promise<SmtpResult> {
    return this.observed(() => verifySmtp(provider, { lookup: this.lookup, timeoutMs: this.config.mailTimeoutMs }));
  }

  private async observed(call: () => Promise<SmtpResult>): Promise<SmtpResult> {
    const started = process.hrtime.bigint();
    const result = await call();
    const outgoing = toOutgoingMailCall(result, Number(process.hrtime.bigint() - started) / 1e9);
    if (outgoing && this.observer) {
      try {
        this.observer.observe(outgoing);
      } catch {
        // Metrics must never break a delivery or a test answer.
      }
    }
    return result;
  }
}
