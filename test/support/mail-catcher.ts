/**
 * A real SMTP server on 127.0.0.1 (npm smtp-server) that keeps every message it accepts, for
 * tests that read the mail that really arrives. Plain SMTP by default; `secure` / STARTTLS with a
 * certificate given by the test. `reply` decides, per RCPT TO, whether the server accepts it or
 * answers an SMTP error (e.g. 451 to provoke a retry).
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { useStarted } from './use-started';

export interface CaughtMail {
  from: string;
  /** The envelope recipients (RCPT TO). */
  to: string[];
  headers: Record<string, string>;
  /** The body, transfer encoding undone. */
  body: string;
  raw: string;
}

/** An SMTP answer for one RCPT TO: undefined accepts it. */
export type RcptReply = (address: string, attempt: number) => { code: number; message: string } | undefined;

export interface MailCatcherOptions {
  reply?: RcptReply;
  secure?: boolean;
  /** Offer STARTTLS (needs key and cert). */
  starttls?: boolean;
  key?: string;
  cert?: string;
  /** Holds each RCPT TO answer back this long: a slow server, with messages in flight. */
  rcptDelayMs?: number;
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const unfolded = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < unfolded.length; i++) {
    if (unfolded[i] === '=' && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(unfolded[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

export function parseMail(raw: string): { headers: Record<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(split + 4);
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (encoding === 'quoted-printable') body = decodeQuotedPrintable(body);
  else if (encoding === 'base64') body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { headers, body: body.replace(/\r\n$/, '') };
}

export class MailCatcher {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    readonly mails: CaughtMail[],
    /** RCPT TO commands seen per address (attempts, accepted or not). */
    readonly rcptAttempts: Map<string, number>,
  ) {}

  static async start(options: MailCatcherOptions = {}): Promise<MailCatcher> {
    const mails: CaughtMail[] = [];
    const rcptAttempts = new Map<string, number>();
    const serverOptions: SMTPServerOptions = {
      secure: options.secure === true,
      key: options.key,
      cert: options.cert,
      disabledCommands: options.starttls || options.secure ? ['AUTH'] : ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      onRcptTo(address, _session, callback) {
        const email = address.address.toLowerCase();
        const attempt = (rcptAttempts.get(email) ?? 0) + 1;
        rcptAttempts.set(email, attempt);
        const answer = (): void => {
          const refusal = options.reply?.(email, attempt);
          if (!refusal) return callback();
          const error = new Error(refusal.message) as Error & { responseCode: number };
          error.responseCode = refusal.code;
          callback(error);
        };
        if (options.rcptDelayMs) setTimeout(answer, options.rcptDelayMs);
        else answer();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          mails.push({ from, to: session.envelope.rcptTo.map((rcpt) => rcpt.address), ...parseMail(raw), raw });
          callback();
        });
      },
    };
    const server = new SMTPServer(serverOptions);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.server.address();
    if (address === null || typeof address === 'string') throw new Error('the mail catcher has no port');
    return new MailCatcher(server, address.port, mails, rcptAttempts);
  }

  /** The messages that reached `address` (an envelope recipient), in the order they arrived. */
  mailsTo(address: string): CaughtMail[] {
    return this.mails.filter((mail) => mail.to.includes(address));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A mail catcher started in the suite's `beforeAll` and closed in its `afterAll` (see useStarted). */
export function useMailCatcher(options: MailCatcherOptions = {}): MailCatcher {
  return useStarted('the mail catcher', () => MailCatcher.start(options), (catcher) => catcher.close());
}
