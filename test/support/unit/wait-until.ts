/**
 * Spec helpers for things that happen on their own time (a socket closing, a queue emptying).
 * They wait for a condition instead of measuring how long it took: tests assert what happened,
 * never an elapsed time. The deadline only turns a condition that never holds into a clear failure.
 */

/** Polls `condition` until it holds; throws `what` when it still does not after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
