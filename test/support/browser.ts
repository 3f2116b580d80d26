/** Headless Chromium for the browser e2e tests (Swagger UI, the /device page). */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's chromium (.ci/run installs it). */
const CHROMIUM = '/usr/bin/chromium';
/** Flags that keep the browser quiet on the network; each test holds its page to loopback. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const chromiumPresent = existsSync(CHROMIUM);
/** Without Chromium a browser test skips locally; in CI it must run, so it fails there instead. */
export const describeWithBrowser = chromiumPresent || process.env.CI === 'true' ? describe : describe.skip;

/** Launches headless Chromium; throws (failing the suite) when it is missing, as it must be in CI. */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumPresent) throw new Error(`${CHROMIUM} is missing (apt-get install chromium); CI must run this test`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
