// A local mail catcher for development: plain SMTP on 127.0.0.1 (port 1025, or the first argument),
// printing every message it accepts as a person reads it: the headers that matter, then each text
// part decoded (no quoted-printable soft line breaks or =3D escapes, no base64), so that a token
// copied from this terminal is the token that was sent. Start the service with
// OUTBOUND_ALLOW=127.0.0.1/32,::1/128.
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';

const port = Number(process.argv[2] ?? 1025);

/** One address as mail clients show it: `Name <address>` or the address alone. */
const shown = (address) => (address?.name ? `${address.name} <${address.address}>` : (address?.address ?? ''));

async function printable(raw, session) {
  const mail = await PostalMime.parse(raw);
  const to = session.envelope.rcptTo.map((rcpt) => rcpt.address).join(', ');
  const lines = [`----- mail to ${to} -----`, `From: ${shown(mail.from)}`, `Subject: ${mail.subject ?? ''}`];
  if (mail.date) lines.push(`Date: ${mail.date}`);
  if (mail.text) lines.push('', '--- text ---', mail.text.trimEnd());
  if (mail.html) lines.push('', '--- html ---', mail.html.trimEnd());
  for (const attachment of mail.attachments) lines.push(`(attachment ${attachment.filename ?? attachment.mimeType})`);
  return `${lines.join('\n')}\n`;
}

const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, session, callback) {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      printable(Buffer.concat(chunks), session)
        .then((text) => console.log(text))
        .catch((error) => console.log(`----- a mail that could not be parsed (${error.message}) -----`))
        .finally(() => callback());
    });
  },
});
server.listen(port, '127.0.0.1', () => console.log(`mail catcher listening on 127.0.0.1:${port}`));
