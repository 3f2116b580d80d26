import { FakeService } from './fake-service';

/**
 * For a client spec's describe block: starts a FakeService (the Portcullis endpoints the client
 * calls, answering under `prefix`) before its tests, forgets what each test taught it or recorded,
 * and after the tests runs `teardown` (closing the clients and apps built on it) before closing
 * it. Tests read `.service`, which exists once beforeAll has run; a spec's own beforeAll, declared
 * after this call, may build on it.
 */
export function useFakeService(prefix: string, teardown?: () => unknown): { readonly service: FakeService } {
  let started: FakeService | undefined;
  beforeAll(async () => {
    started = await FakeService.start(prefix);
  });
  afterEach(() => started?.reset());
  afterAll(async () => {
    await teardown?.();
    await started?.close();
  });
  return {
    get service(): FakeService {
      if (!started) throw new Error('the fake service is started in beforeAll');
      return started;
    },
  };
}
