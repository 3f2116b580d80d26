/**
 * For specs: runs `fn`, checks that it threw an instance of `type`, and answers it so the spec
 * can go on to its code or message. A `fn` that returns, or throws anything else, fails the test
 * here.
 */
export function thrownBy<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  let thrown: unknown;
  try {
    fn();
  } catch (error: unknown) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(type);
  return thrown as E;
}
