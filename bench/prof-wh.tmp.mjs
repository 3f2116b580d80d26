// temporary: profile verify-token with a webhook on TokenVerified (not committed)
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { call, cleanup, createDatabase, freePort, listenOnLoopback, MAIN, setUpAdmin, sleep, start, stop, waitFor } from './support.mjs';
const databaseUrl = await createDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'bench_prof');
const port = await freePort();
const setupToken = `bench-setup-token-${randomBytes(16).toString('hex')}`;
const service = start('service', ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', MAIN], {
  NODE_ENV: 'production', LOG_LEVEL: 'error', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: databaseUrl, SETUP_TOKEN: setupToken, OUTBOUND_ALLOW: '127.0.0.1/32,::1/128',
});
const base = `http://127.0.0.1:${port}`;
await waitFor(`${base}/ping`, {}, 60_000, service);
const admin = await setUpAdmin(base, setupToken, 'bench admin password');
let received = 0;
const server = createServer((q, r) => { q.resume(); q.on('end', () => { received++; r.writeHead(204).end(); }); });
await listenOnLoopback(server);
const url = `http://127.0.0.1:${server.address().port}/hook`;
const active = process.argv[2] !== 'off';
await call(base, 'POST', `/memberships/${admin.membershipId}/webhooks`, { auth: admin.auth, body: { name: 'p', event: 'TokenVerified', status: active ? 'active' : 'passive', try_count: 1, request: { method: 'POST', url } } });
const r = await autocannon({ url: `${base}/verify-token`, headers: { authorization: admin.auth }, connections: 16, duration: 8 });
console.log('rate', r.requests.total / 8, 'received', received);
await sleep(2000);
console.log('received', received);
await stop(service);
server.close();
await cleanup();
process.exit(0);
