/**
 * Registers a `beforeAll` that starts something a suite needs (an app, a mail catcher, a browser)
 * and an `afterAll` that closes it, so a suite opens with one line instead of repeating
 * `let x; beforeAll(...); afterAll(...)`. The answer reads the started thing through a Proxy,
 * because it exists only once `beforeAll` has run; its methods stay bound to it.
 *
 *   const browser = useStarted('the browser', launchChromium, (started) => started.close());
 *
 * Hooks run in the order they are registered: what a suite starts first it also closes first.
 */
export function useStarted<T extends object>(what: string, start: () => Promise<T>, close: (started: T) => Promise<void>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  // A failed start leaves nothing to close; the failure itself is already reported by beforeAll.
  afterAll(async () => {
    if (started) await close(started);
  });
  return new Proxy({} as T, {
    get(_target, key) {
      if (!started) throw new Error(`the suite read ${String(key)} of ${what} before its beforeAll started it`);
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(started) : value;
    },
  });
}
