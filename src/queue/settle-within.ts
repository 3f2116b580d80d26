/** Waits for the promises to settle, or for `ms`, whichever comes first; the timer is always cleared. */
export async function settleWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  try {
    await Promise.race([Promise.allSettled(promises), deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
