import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';

/**
 * Loopback ports that tests give to servers they start later, or use as "nothing listens here".
 *
 * Not a port bound to 0 and released: the kernel hands out ports of its ephemeral range to every
 * listen(0) and outgoing connection of every process (supertest alone listens on 0 per request),
 * and one of them can take the released port before the test binds it again. These come from
 * below that range, where the kernel never chooses on its own, and each jest worker draws from
 * its own slice, so two test files running side by side never draw the same one.
 */
const LOWEST = 10_000;
const SLICE = 2_000;

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(start) && start > LOWEST + SLICE) return start;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152.
    return 49_152;
  }
  return 32_768;
}

function workerSlice(): { from: number; size: number } {
  const slices = Math.max(1, Math.floor((ephemeralRangeStart() - LOWEST) / SLICE));
  const worker = Number(process.env.JEST_WORKER_ID ?? 1);
  const index = (Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % slices;
  return { from: LOWEST + index * SLICE, size: SLICE };
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = http.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` different ports on 127.0.0.1 that nothing listens on now and that the kernel will not hand out. */
export async function closedPorts(count: number): Promise<number[]> {
  const { from, size } = workerSlice();
  const chosen = new Set<number>();
  for (let tries = 0; chosen.size < count; tries++) {
    if (tries >= count * 50) throw new Error(`no closed port found in ${from}-${from + size - 1}`);
    const port = from + randomInt(size);
    if (!chosen.has(port) && (await bindable(port))) chosen.add(port);
  }
  return [...chosen];
}

/** One port on 127.0.0.1 that nothing listens on (see closedPorts). */
export async function closedPort(): Promise<number> {
  const [port] = await closedPorts(1);
  return port;
}
