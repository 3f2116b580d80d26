/**
 * An open-loop load at a steady rate, for latency at a given load.
 *
 * Why not autocannon's `overallRate`: it gives each connection a per-second quota that it spends
 * back to back, then waits for the next second. "Half the maximum rate" is then full speed for
 * half a second and silence for the other half, and its p99 is the p99 of a saturated server.
 *
 * Here request i is due at start + i / rate, whatever happened to earlier ones, and its latency
 * runs from that due time (not from when a free connection let it go), so queueing behind slow
 * answers counts: no coordinated omission. Requests share a keep-alive pool of `connections`.
 */
import { Agent, request } from 'node:http';

/** The q-quantile of ascending `sorted` values (NaN when there are none). */
export function quantile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : Number.NaN;
}

/** Timer slack: every tick sends what has fallen due since the last one. */
const TICK_MS = 1;

/**
 * @param {{ url: string, method?: string, headers?: Record<string, string>, body?: string,
 *   rate: number, duration: number, connections?: number }} options  rate in req/s, duration in s
 * @returns {Promise<{ rps: number, p50: number, p99: number, max: number, sendLagP99: number, latencies: number[], total: number, non2xx: number, errors: number }>}
 *   latencies in milliseconds (`latencies`: every one, sorted, so that runs can be merged exactly);
 *   sendLagP99: how late this generator sent its requests (its own stalls)
 */
export async function constantRate({ url, method = 'GET', headers = {}, body, rate, duration, connections = 16 }) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  const total = Math.max(1, Math.round(rate * duration));
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let finished = 0;
  // How late the generator itself sent each request: its own stalls, not the server's.
  const sendLags = [];

  const send = (dueAt) =>
    new Promise((resolve) => {
      const req = request(
        { agent, host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, headers },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
            latencies.push(performance.now() - dueAt);
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });

  const started = performance.now();
  const inFlight = [];
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) / 1000) * rate) + 1);
      while (sent < due) {
        const dueAt = started + (sent * 1000) / rate;
        sendLags.push(now - dueAt);
        sent++;
        inFlight.push(send(dueAt).then(() => finished++));
      }
      if (sent >= total) resolve();
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();

  latencies.sort((a, b) => a - b);
  sendLags.sort((a, b) => a - b);
  return {
    rps: finished / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? Number.NaN,
    sendLagP99: quantile(sendLags, 0.99),
    latencies,
    total: finished,
    non2xx,
    errors,
  };
}
