/**
 * The operator dashboard in a real browser (issue 12 acceptance): the operator CLI, as a separate process, makes a
 * dashboard user with a password; a payment is authorized, captured and partly refunded; a webhook subscription's
 * receiver refuses its first delivery. Then headless Chromium (Debian's `chromium`, driven by playwright-core, as in
 * the demo checkout test) signs in, opens the transaction and finds every step on its timeline with the state after
 * each (time travel), opens the subscription's deliveries, replays the failed one and sees the new attempt succeed.
 * Screenshots of both pages are kept as test artifacts.
 *
 * Chromium missing: `SKIP dashboard in Chromium: …` (a failure under SWITCHYARD_REQUIRE_INFRA=1; `.ci/run` installs it).
 */
import fs from 'node:fs';
import {
  adyenScenarioAmounts,
  providerDocumentsDir,
  startAdyenFake,
  startStripeFake,
  type RunningAdyenFake,
  type RunningStripeFake,
} from '@switchyard/connectors/src/testing';
import { describeWithInfra, runCliWithInput } from '@switchyard/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumAvailability, launchChromium, screenshotPath } from './chromium';
import { startHarness, type Harness } from '../../services/standalone/src/transactions.harness';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import { adyenCredentials, createAdyenConnections, createStripeConnections } from '../providers/provider-connections';

const EMAIL = 'operator@example.com';
const PASSWORD = 'a long and private pass phrase';

describeWithInfra('dashboard in Chromium', chromiumAvailability(), () => {
  let harness: Harness;
  let receiver: WebhookReceiver;
  let chrome: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let browser: BrowserContext;
  let transactionId: string;
  let subscriptionId: string;
  let adyen: RunningAdyenFake | undefined;
  let stripe: RunningStripeFake | undefined;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().up();
    // The receiver refuses the first delivery it gets, and takes every later one.
    receiver.answer = (received) => (received.index === 0 ? 503 : 200);
    harness = await startHarness('dashboard-browser', {
      // No automatic retry within the test: the replay is what delivers the event.
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_BASE_MS: '600000', WEBHOOK_WORKER_INTERVAL_MS: '50' },
    });

    const created = await runCliWithInput(
      { DATA_DIR: harness.fixture.dataDir },
      `${PASSWORD}\n`,
      'users',
      'create',
      '--email',
      EMAIL,
      '--display-name',
      'Olive Operator',
      '--role',
      'administrator',
      '--password-stdin',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ email: EMAIL, has_password: true });

    const http = harness.http();
    const subscription = await http
      .post('/webhook-subscriptions')
      .set(harness.headers('default'))
      .send({
        url: receiver.url,
        event_names: ['transaction.captured'],
        merchant_account_id: 'default',
        description: 'dashboard test receiver',
      })
      .expect(201);
    subscriptionId = subscription.body.id as string;

    await harness.createConnection('default');
    const authorized = await harness.authorize('default', { amount: 1299, currency: 'USD', intent: 'authorize' });
    expect(authorized.status).toBe('authorization_succeeded');
    transactionId = authorized.id;
    await http.post(`/transactions/${transactionId}/capture`).set(harness.headers('default')).send({}).expect(200);
    await http
      .post(`/transactions/${transactionId}/refunds`)
      .set(harness.headers('default'))
      .send({ amount: 500 })
      .expect(201);
    await harness.waitFor('default', transactionId, (transaction) => transaction.refunded_amount === 500);
    // The capture's delivery was attempted and refused once.
    const deadline = Date.now() + 15_000;
    while (receiver.requests.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.requests.map((received) => received.answered)).toEqual([503]);

    chrome = await launchChromium({ width: 1280, height: 1400 });
    browser = chrome.browser;
  }, 120_000);

  afterAll(async () => {
    await chrome?.close();
    await harness?.stop();
    await receiver?.down();
    await adyen?.stop();
    await stripe?.stop();
  });

  it('signs in, shows the timeline of a captured and partly refunded payment with the state after each step, and replays a failed webhook delivery', {
    timeout: 180_000,
  }, async ({ annotate }) => {
    const page: Page = browser.pages()[0] ?? (await browser.newPage());
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const failedRequests: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400)
        failedRequests.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
    });
    const keep = async (name: string) => {
      const file = screenshotPath(`dashboard-${name}`);
      await page.screenshot({ path: file, fullPage: true });
      expect(fs.statSync(file).size).toBeGreaterThan(0);
      // The path only: an attachment with a path would be copied into the work tree (.vitest-attachments).
      await annotate(`screenshot: ${file}`, 'screenshot');
      process.stdout.write(`dashboard screenshot: ${file}\n`);
    };

    // Sign in: a wrong password first, then the right one.
    await page.goto(`${harness.baseUrl}/dashboard`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill('not the pass phrase');
    await page.locator('button[type="submit"]').click();
    await expect
      .poll(() => page.locator('[data-testid="sign-in-error"]').textContent(), { timeout: 15_000 })
      .toBe('The email or password is wrong');
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await page.locator('[data-testid="signed-in-as"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid="signed-in-as"]').textContent()).toBe('Olive Operator · administrator');
    // The session cookie is out of the page's reach.
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe(
      '',
    );

    // The transactions list, then the transaction.
    await page.locator(`[data-transaction-id="${transactionId}"] a`).click();
    await page.locator('[data-testid="timeline"] li').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid="transaction-status"]').textContent()).toBe('capture_succeeded');
    const steps = await page.locator('[data-testid="timeline"] li').evaluateAll((items) =>
      items.map((item) => ({
        event: item.getAttribute('data-event'),
        status: item.querySelector('[data-testid="state-status"]')?.textContent ?? null,
        refunded: item.querySelector('[data-testid="state-refunded"]')?.textContent ?? null,
      })),
    );
    const step = (event: string) => {
      const found = steps.find((one) => one.event === event);
      expect(found, `${event} in ${JSON.stringify(steps)}`).toBeDefined();
      return found!;
    };
    const order = (event: string) => steps.findIndex((one) => one.event === event);
    expect(steps[0]?.event).toBe('TransactionCreated');
    expect(order('TransactionCreated')).toBeLessThan(order('AuthorizationSucceeded'));
    expect(order('AuthorizationSucceeded')).toBeLessThan(order('CaptureSucceeded'));
    expect(order('CaptureSucceeded')).toBeLessThan(order('RefundSucceeded'));
    expect(step('AuthorizationSucceeded')).toMatchObject({ status: 'authorization_succeeded', refunded: '$0.00' });
    expect(step('CaptureSucceeded')).toMatchObject({ status: 'capture_succeeded', refunded: '$0.00' });
    expect(step('RefundSucceeded')).toMatchObject({ status: 'capture_succeeded', refunded: '$5.00' });
    expect(
      steps.every((one) => one.status !== null),
      JSON.stringify(steps),
    ).toBe(true);
    await keep('transaction');

    // The subscription's deliveries: the refused one, replayed.
    await page.locator('nav a', { hasText: 'Webhooks' }).click();
    await page.locator(`[data-subscription-id="${subscriptionId}"] a`).click();
    const delivery = page.locator('[data-testid="deliveries"] tbody tr[data-delivery-id]');
    await delivery.first().waitFor({ timeout: 15_000 });
    expect(await delivery.count()).toBe(1);
    expect(await delivery.locator('[data-testid="delivery-status"]').textContent()).toBe('retrying');
    expect(await delivery.locator('[data-testid="delivery-attempts"]').textContent()).toBe('1');
    expect(await delivery.locator('[data-testid="delivery-last-attempt"]').textContent()).toMatch(/^503 /);
    await keep('deliveries-before-replay');

    await delivery.locator('button', { hasText: 'Replay' }).click();
    await expect
      .poll(() => delivery.locator('[data-testid="replay-result"]').textContent(), { timeout: 15_000 })
      .toMatch(/^ ?replayed: 200 /);
    await expect
      .poll(() => delivery.locator('[data-testid="delivery-status"]').textContent(), { timeout: 15_000 })
      .toBe('succeeded');
    expect(await delivery.locator('[data-testid="delivery-attempts"]').textContent()).toBe('2');
    expect(receiver.requests.map((received) => received.answered)).toEqual([503, 200]);
    expect(receiver.requests[1]?.webhookId).toBe(receiver.requests[0]?.webhookId);
    await keep('deliveries-after-replay');

    // The chart has the payment's authorization at its connection.
    await page.locator('nav a', { hasText: 'Authorizations' }).click();
    await page.locator('[data-testid="connection-chart"]').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid="success-rate"]').first().textContent()).toBe('100.0%');
    await keep('authorizations');

    expect(pageErrors).toEqual([]);
    // The one refusal the page met is the wrong password (and the session check before signing in).
    expect(
      failedRequests.filter(
        (failed) => !/^401 (POST \/dashboard\/api\/login|GET \/dashboard\/api\/session)$/.test(failed),
      ),
    ).toEqual([]);
  });

  const title = 'shows the connections of adyen-card and stripe-card: the chart, the connection filter, a transaction';
  it.skipIf(!providerDocumentsDir())(title, { timeout: 120_000 }, async () => {
    adyen = await startAdyenFake({ ...adyenCredentials });
    stripe = await startStripeFake();
    // EUR only: the payments of the test above (USD) never route to them.
    const adyenConnections = await createAdyenConnections(harness, 'default', adyen);
    const stripeConnections = await createStripeConnections(harness, 'default', stripe);
    const card = { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '737' };
    const pay = (paymentServiceId: string, amount: number) =>
      harness.authorize('default', {
        amount,
        currency: 'EUR',
        payment_method: card,
        intent: 'authorize',
        payment_service_id: paymentServiceId,
      });
    const viaAdyen = await pay(adyenConnections.connectionId, 2_000);
    expect(viaAdyen.status).toBe('authorization_succeeded');
    const declined = await pay(adyenConnections.connectionId, adyenScenarioAmounts.insufficientFunds);
    expect(declined.status).toBe('authorization_declined');
    expect((await pay(stripeConnections.connectionId, 3_000)).status).toBe('authorization_succeeded');

    const page: Page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${harness.baseUrl}/dashboard`);
    const signedIn = page.locator('[data-testid="signed-in-as"]');
    await page.locator('input[name="email"]').or(signedIn).first().waitFor({ timeout: 15_000 });
    if (!(await signedIn.isVisible())) {
      await page.locator('input[name="email"]').fill(EMAIL);
      await page.locator('input[name="password"]').fill(PASSWORD);
      await page.locator('button[type="submit"]').click();
      await signedIn.waitFor({ timeout: 15_000 });
    }

    // The chart: each connection by its name, with its own rate.
    await page.locator('nav a', { hasText: 'Authorizations' }).click();
    const chartOf = (id: string) => page.locator(`[data-testid="connection-chart"][data-payment-service-id="${id}"]`);
    const adyenChart = chartOf(adyenConnections.connectionId);
    const stripeChart = chartOf(stripeConnections.connectionId);
    await adyenChart.waitFor({ timeout: 15_000 });
    expect(await adyenChart.locator('figcaption strong').textContent()).toBe('Adyen SwitchyardShop');
    expect(await adyenChart.locator('[data-testid="success-rate"]').textContent()).toBe('50.0%');
    expect(await stripeChart.locator('figcaption strong').textContent()).toBe('Stripe 1');
    expect(await stripeChart.locator('[data-testid="success-rate"]').textContent()).toBe('100.0%');

    // The transactions, filtered by the Adyen connection; then one of them.
    await page.locator('nav a', { hasText: 'Transactions' }).click();
    const filter = page.locator('select[name="payment_service_id"]');
    const names = ['Adyen SwitchyardShop', 'Adyen SwitchyardDown', 'Stripe 0', 'Stripe 1'];
    const options = () => filter.locator('option').allTextContents();
    await expect.poll(options, { timeout: 15_000 }).toEqual(expect.arrayContaining(names));
    await filter.selectOption(adyenConnections.connectionId);
    await page.locator('button[type="submit"]', { hasText: 'Apply' }).click();
    const rows = page.locator('[data-testid="transactions"] tbody tr[data-transaction-id]');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    expect(new Set(await rows.locator('td:nth-child(7)').allTextContents())).toEqual(new Set(['Adyen SwitchyardShop']));
    await page.locator(`[data-transaction-id="${viaAdyen.id}"] a`).click();
    await page.locator('[data-testid="timeline"] li').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid="transaction-status"]').textContent()).toBe('authorization_succeeded');
    // The summary's Connection (the timeline's steps name the connection too, by id).
    const summary = page.locator('dt', { hasText: /^Connection$/ }).first();
    const connection = summary.locator('xpath=following-sibling::dd[1]');
    expect(await connection.textContent()).toBe('Adyen SwitchyardShop');
    const file = screenshotPath('dashboard-provider-connections');
    await page.screenshot({ path: file, fullPage: true });
    process.stdout.write(`dashboard screenshot: ${file}\n`);
    expect(pageErrors).toEqual([]);
  });
});
