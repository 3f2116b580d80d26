/**
 * What every peer process of the benches shares: on SIGTERM or SIGINT (the bench's stop) it stops
 * accepting, lets `release` close its database pool, and exits.
 */
export function stopOnSignals(server, release) {
  const close = () =>
    server.close(async () => {
      await release();
      process.exit(0);
    });
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
}
