import { join } from 'node:path';
import { useInstallation } from '../support/api';
import { describeWithBrowser, loopbackPage, useBrowser } from '../support/browser';

/** Set (to anything) to rewrite the screenshot in docs/; CI leaves it unset. */
const SCREENSHOT = process.env.SWAGGER_UI_SCREENSHOT ? join(__dirname, '..', '..', 'docs', 'swagger-ui-try-it-out.png') : undefined;
/** The host of the example receiver: public-looking, accepted at create, never called (the webhook is passive). */
const RECEIVER_URL = 'https://receiver.example.com/hook';

jest.setTimeout(180_000);

describeWithBrowser('Swagger UI in headless Chromium', () => {
  const suite = useInstallation({ env: { NODE_ENV: 'development' } });
  const browser = useBrowser();

  it('authorizes with Bearer and creates a webhook with "Try it out" from the prefilled example, URL changed only: 201', async () => {
    // Nothing the page asks for may leave the machine: the app is on 127.0.0.1.
    const { page, offLoopback } = await loopbackPage(browser, { width: 1280, height: 1000 });

    // The page renders only the operations on screen (past 150 rows, Swagger UI virtualizes the
    // list): the operation's deep link scrolls to it and opens it, as a link shared by a colleague.
    await page.goto(`${suite.t.url}/docs#/webhooks/Webhooks_create`);
    await page.locator('button.authorize').first().click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'bearer' }).first();
    await bearer.locator('input').fill(suite.inst.admin.accessToken);
    await bearer.locator('button.authorize').click();
    await bearer.locator('button.btn-done').click();
    // The Authorize button sits at the top of the page; the link brings the operation back, and the
    // authorization outlives the reload (persistAuthorization).
    await page.reload();

    const operation = page.locator('#operations-webhooks-Webhooks_create');
    await operation.locator('.opblock-summary').waitFor();
    expect(await operation.getAttribute('class')).toContain('is-open');
    await operation.locator('button.try-out__btn').click();
    await operation.locator('tr[data-param-name="membershipId"] input').fill(suite.inst.admin.membershipId);

    const bodyField = operation.locator('textarea.body-param__text');
    const prefilled = JSON.parse(await bodyField.inputValue()) as { status: string; request: { url: string } };
    // The prefilled example as the document has it: passive, so it is never called.
    expect(prefilled.status).toBe('passive');
    const edited = { ...prefilled, request: { ...prefilled.request, url: RECEIVER_URL } };
    await bodyField.fill(JSON.stringify(edited, null, 2));
    await operation.locator('button.execute').click();

    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('201');
    const answer = JSON.parse(await operation.locator('.live-responses-table tr.response .response-col_description .highlight-code pre').first().innerText()) as {
      _id: string;
      request: { url: string };
      status: string;
    };
    expect(answer.request.url).toBe(RECEIVER_URL);
    expect(answer.status).toBe('passive');
    if (SCREENSHOT) {
      // The curl line repeats the Bearer token: a picture in docs/ must not carry one.
      await page.addStyleTag({ content: '.curl-command { display: none !important; }' });
      await operation.screenshot({ path: SCREENSHOT });
    }

    await suite.t.http().delete(`/memberships/${suite.inst.admin.membershipId}/webhooks/${answer._id}`).set('Authorization', suite.inst.admin.auth).expect(204);
    expect(offLoopback).toEqual([]);
    await page.close();
  });
});
