// A local mail catcher for development: plain SMTP on 127.0.0.1 (port 1025, or the first argument),
// printing every message it accepts. Start the service with OUTBOUND_ALLOW=127.0.0.1/32,::1/128.
import { SMTPServer } from 'smtp-server';

const port = Number(process.argv[2] ?? 1025);
const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, session, callback) {
    let raw = '';
    stream.on('data', (chunk) => (raw += chunk.toString('utf8')));
    stream.on('end', () => {
      const to = session.envelope.rcptTo.map((rcpt) => rcpt.address).join(', ');
      console.log(`----- mail to ${to} -----\n${raw}\n`);
      callback();
    });
  },
});
server.listen(port, '127.0.0.1', () => console.log(`mail catcher listening on 127.0.0.1:${port}`));
