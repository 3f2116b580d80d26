/**
 * One SMTP attempt through the outbound policy (contract "Outbound calls", docs/outbound.md).
 *
 * nodemailer resolves a host name with its own DNS step before it opens the socket, and skips
 * that step for an IP literal. So the configured host is resolved here, through the policy's
 * lookup, for every attempt; nodemailer then connects to the address that lookup allowed (no
 * second lookup, so a rebinding name cannot swap it), and TLS still verifies the certificate
 * against the configured name (`tls.servername`).
 */
import { isIP } from 'node:net';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { MailRecipient, StoredMailProvider } from '../database/schema';
import { DEFAULT_SMTP_PORT } from '../memberships/mail-provider';
import { isOutboundDestinationBlocked, type LookupFunction } from '../outbound/outbound-lookup';
import type { OutgoingCall } from '../outbound/outgoing-calls';

export const MAX_ERROR_LENGTH = 500;

export interface OutgoingMail {
  from: MailRecipient;
  to: MailRecipient;
  subject: string;
  body: string;
  format: 'html' | 'text';
}

/**
 * sent: accepted by the server. blocked: the outbound policy refused the destination (final).
 * timeout / network / rejected: `retryable` says whether another attempt may succeed (network
 * errors, timeouts and SMTP 4xx are; 5xx and other refusals are not).
 */
export type SmtpResult =
  | { outcome: 'sent' }
  | { outcome: 'blocked' | 'timeout' | 'failed'; retryable: boolean; error: string };

export interface SmtpSendOptions {
  lookup: LookupFunction;
  timeoutMs: number;
}

function resolveAllowed(lookup: LookupFunction, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    lookup(host, {}, (error, address) => {
      if (error) reject(error);
      else resolve(typeof address === 'string' ? address : address[0].address);
    });
  });
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

const cut = (text: string): string => text.slice(0, MAX_ERROR_LENGTH);

function toFailure(error: unknown): SmtpResult {
  if (isOutboundDestinationBlocked(error)) return { outcome: 'blocked', retryable: false, error: `OutboundDestinationBlocked: ${error.message}` };
  const smtp = (error ?? {}) as SmtpError;
  if (typeof smtp.responseCode === 'number') {
    // The server's own answer: code and text, as the result event shows it.
    const text = smtp.response ?? smtp.message ?? '';
    return { outcome: 'failed', retryable: smtp.responseCode >= 400 && smtp.responseCode < 500, error: cut(text.startsWith(String(smtp.responseCode)) ? text : `${smtp.responseCode} ${text}`) };
  }
  const message = cut(`${smtp.code ? `${smtp.code}: ` : ''}${smtp.message ?? String(error)}`);
  if (smtp.code === 'ETIMEDOUT') return { outcome: 'timeout', retryable: true, error: message };
  // Connection, DNS, socket and TLS errors: the network's fault, worth another try.
  return { outcome: 'failed', retryable: smtp.code !== 'EENVELOPE' && smtp.code !== 'EMESSAGE', error: message };
}

function transportOptions(provider: StoredMailProvider, address: string, timeoutMs: number): SMTPTransport.Options {
  const servername = isIP(provider.host) ? undefined : provider.host;
  return {
    host: address,
    port: provider.port ?? DEFAULT_SMTP_PORT[provider.tls],
    secure: provider.tls === 'tls',
    requireTLS: provider.tls === 'starttls',
    ignoreTLS: provider.tls === 'none',
    // Certificates are always verified; extra CAs come from NODE_EXTRA_CA_CERTS.
    tls: { rejectUnauthorized: true, ...(servername ? { servername } : {}) },
    auth: provider.username ? { user: provider.username, pass: provider.password ?? '' } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // One connection per attempt: nothing is pooled past the policy check.
    pool: false,
    logger: false,
    debug: false,
  };
}

let library: Promise<typeof import('nodemailer')> | undefined;

/** nodemailer (39 modules), loaded at the first mail: an installation that sends none never needs it. */
const nodemailer = (): Promise<typeof import('nodemailer')> => (library ??= import('nodemailer'));

/**
 * Resolves the provider's host through the outbound policy, opens a transport to the address it
 * allows, runs `use` on it and closes it; never throws (a refusal or an SMTP error is a failure).
 */
async function overTransport(provider: StoredMailProvider, options: SmtpSendOptions, use: (transport: Transporter) => Promise<unknown>): Promise<SmtpResult> {
  let address: string;
  try {
    address = await resolveAllowed(options.lookup, provider.host);
  } catch (error) {
    return toFailure(error);
  }
  const { createTransport } = await nodemailer();
  const transport = createTransport(transportOptions(provider, address, options.timeoutMs));
  try {
    await use(transport);
    return { outcome: 'sent' };
  } catch (error) {
    return toFailure(error);
  } finally {
    transport.close();
  }
}

/** Sends one message; never throws. */
export function sendSmtp(provider: StoredMailProvider, mail: OutgoingMail, options: SmtpSendOptions): Promise<SmtpResult> {
  return overTransport(provider, options, (transport) =>
    transport.sendMail({
      from: { name: mail.from.display_name ?? '', address: mail.from.email_address },
      to: { name: mail.to.display_name ?? '', address: mail.to.email_address },
      subject: mail.subject,
      ...(mail.format === 'html' ? { html: mail.body } : { text: mail.body }),
    }),
  );
}

/** Connect, TLS and AUTH only (nodemailer `verify()`), for the provider test route; never throws. */
export function verifySmtp(provider: StoredMailProvider, options: SmtpSendOptions): Promise<SmtpResult> {
  return overTransport(provider, options, (transport) => transport.verify());
}

/** An attempt as the outgoing-call metrics count it (kind `mail`); a blocked one was never made. */
export function toOutgoingMailCall(result: SmtpResult, durationSeconds: number): OutgoingCall | undefined {
  if (result.outcome === 'blocked') return undefined;
  return { kind: 'mail', outcome: result.outcome === 'sent' ? 'success' : result.outcome === 'timeout' ? 'timeout' : 'failure', durationSeconds };
}
