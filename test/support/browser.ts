/** Headless Chromium for the browser e2e tests (Swagger UI, the /device page). */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { useStarted } from './use-started';

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

/** Headless Chromium launched in the suite's `beforeAll` and closed in its `afterAll` (see useStarted). */
export function useBrowser(): Browser {
  return useStarted('the browser', launchChromium, (browser) => browser.close());
}

export interface LoopbackPage {
  page: Page;
  /** Every URL the page asked for off 127.0.0.1: refused, and kept for the test to assert it stays empty. */
  offLoopback: string[];
  /** The messages of every dialog (alert, confirm) the page opened: dismissed, and kept. */
  dialogs: string[];
}

/** A new page held to 127.0.0.1, where the app under test listens: nothing it asks for leaves the machine. */
export async function loopbackPage(browser: Browser, viewport: { width: number; height: number }): Promise<LoopbackPage> {
  const page = await browser.newPage({ viewport });
  const offLoopback: string[] = [];
  const dialogs: string[] = [];
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    offLoopback.push(url.href);
    return route.abort();
  });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return { page, offLoopback, dialogs };
}
