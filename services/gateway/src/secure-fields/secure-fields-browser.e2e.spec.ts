/**
 * The secure fields library in a real browser (headless Chromium), served by a gateway on `http://127.0.0.1:<port>`
 * to a merchant page on another origin (`http://localhost:<port>`), with a fake RPC client for the transactions
 * service (card details from the shipped sample BIN data; the fields call recorded). The three frames load under
 * their CSP without a violation; typing tells the page only states and card details — `card-details-changed` again
 * when 8 digits resolve the country —; `submit()` has the card number frame post the three values itself; refusals
 * come back as the service's message; and the page's JavaScript cannot reach into a frame. A page paying with a stored
 * payment method adds the security code field alone and `submit({ paymentMethodId })` has that frame post the
 * method's id with the code. The demo checkout's test
 * (tests/browser) runs the same library against the whole service.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from '@switchyard/api';
import { loadBinData } from '@switchyard/bin-data';
import { InProcessMessageBus } from '@switchyard/bus';
import { checkoutSessionPatterns, type CheckoutSessionCardDetailsRequest } from '@switchyard/contracts';
import { describeWithInfra, type Availability } from '@switchyard/testing';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { startGateway, type RunningGateway } from '../start-gateway';
import { FakeRpc } from '../testing/fake-rpc';

const CHROMIUM = '/usr/bin/chromium';
const availability: Availability = fs.existsSync(CHROMIUM)
  ? { available: true }
  : { available: false, reason: `${CHROMIUM} is not installed (apt-get install chromium)` };

/** The sample's card whose country only its 8-digit range knows (docs/bin-data.md). */
const CARD = '4455667711111110';

/** What the merchant page keeps (it is not the DOM library's type: the repository compiles without it). */
interface MerchantPage {
  readonly events: Array<{ name: string; detail: Record<string, unknown> }>;
  readonly sf: { submit(options?: { paymentMethodId?: string }): Promise<void> };
}
/** For the type checker only: inside `page.evaluate` these are the page's globals. */
declare const window: MerchantPage & Record<string, unknown>;
declare const document: {
  querySelectorAll(
    selector: string,
  ): ArrayLike<{ contentDocument: unknown; contentWindow: { document: unknown } | null }>;
};

let rpc: FakeRpc;
let bus: InProcessMessageBus;
let gateway: RunningGateway;
let merchant: http.Server;
let browser: Browser;
let serviceUrl: string;
let merchantUrl: string;
const problems: string[] = [];

/** `storedMethod`: the page of a buyer paying with a card the merchant stored, who types its security code only. */
function merchantPage(sessionId: string, storedMethod: boolean): string {
  const cardFields = storedMethod
    ? ''
    : `sf.addCardNumberField('#number');\nsf.addExpiryDateField(document.getElementById('expiry'));`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>
<div id="number"></div><div id="expiry"></div><div id="security-code"></div>
<script type="module">
import { SecureFields } from '${serviceUrl}/secure-fields/secure-fields.js';
const sf = new SecureFields({ serviceUrl: '${serviceUrl}', sessionId: '${sessionId}' });
window.events = [];
for (const name of ['ready', 'change', 'blur', 'card-details-changed']) sf.on(name, (detail) => window.events.push({ name, detail }));
${cardFields}
sf.addSecurityCodeField('#security-code', { placeholder: 'CVV' });
window.sf = sf;
</script></body></html>`;
}

type Checkout = { page: Page; sessionId: string; field: (name: string) => FrameLocator };
async function openCheckout(storedMethod = false): Promise<Checkout> {
  const sessionId = randomUUID();
  const page = await browser.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${merchantUrl}/?session=${sessionId}${storedMethod ? '&stored=1' : ''}`);
  await page.waitForFunction(() => window.events?.some((event) => event.name === 'ready'), undefined, {
    timeout: 10_000,
  });
  return { page, sessionId, field: (name) => page.frameLocator(`iframe[data-secure-field="${name}"]`) };
}

const cardDetailsEvents = (page: Page) =>
  page.evaluate(() =>
    window.events.filter((event) => event.name === 'card-details-changed').map((event) => event.detail),
  );
const waitForCardDetails = (page: Page, count: number) =>
  page.waitForFunction(
    (n) => window.events.filter((event) => event.name === 'card-details-changed').length >= n,
    count,
    { timeout: 5_000 },
  );

describeWithInfra('secure fields in Chromium', availability, () => {
  beforeAll(async () => {
    const binData = loadBinData({});
    rpc = new FakeRpc([]);
    rpc.answer(checkoutSessionPatterns.cardDetails, (payload) => {
      const info = binData.lookup((payload as CheckoutSessionCardDetailsRequest).bin);
      return { country: info.issuerCountry, scheme: info.scheme, card_type: info.cardType, additional_schemes: [] };
    });
    rpc.answer(checkoutSessionPatterns.attachFields, () => null);
    bus = new InProcessMessageBus();
    gateway = await startGateway({ rpc, bus, clockSkewSeconds: 30, keyUsageFlushMs: 60_000 });
    await gateway.app.listen(0, '127.0.0.1');
    serviceUrl = `http://127.0.0.1:${(gateway.app.getHttpServer().address() as AddressInfo).port}`;
    merchant = http.createServer((request, response) => {
      const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
      const page = merchantPage((query.get('session') ?? '').replace(/[^0-9a-f-]/g, ''), query.get('stored') === '1');
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    // Another origin than the service's: the browser's same-origin policy is what keeps the page out of the frames.
    merchantUrl = `http://localhost:${(merchant.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => merchant?.close(resolve));
    await gateway?.stop();
    await bus?.close();
  });

  beforeEach(() => {
    rpc.reset();
    problems.length = 0;
  });

  it('loads three frames under their CSP and tells the page the fields’ states and the card details, never a value', async () => {
    const { page, sessionId, field } = await openCheckout();
    expect(
      await page.evaluate(
        () => Array.from(document.querySelectorAll('iframe[data-secure-field]'), () => 'frame').length,
      ),
    ).toBe(3);
    await expect(
      field('security_code').locator('input[name="security_code"]').getAttribute('placeholder'),
    ).resolves.toBe('CVV');

    const number = field('number').locator('input[name="number"]');
    await number.pressSequentially(CARD.slice(0, 6));
    await waitForCardDetails(page, 2);
    await number.pressSequentially(CARD.slice(6, 8));
    await waitForCardDetails(page, 3);
    await number.pressSequentially(CARD.slice(8));
    await expect(number.inputValue()).resolves.toBe('4455 6677 1111 1110');
    await field('expiry').locator('input[name="expiry"]').pressSequentially('1230');
    await field('security_code').locator('input[name="security_code"]').pressSequentially('123');
    await page.waitForFunction(
      () =>
        window.events.some(
          (event) => event.name === 'change' && event.detail.field === 'security_code' && event.detail.valid === true,
        ),
      undefined,
      { timeout: 5_000 },
    );

    expect(await cardDetailsEvents(page)).toEqual([
      { country: null, scheme: 'visa', cardType: null, additionalSchemes: [] },
      { country: null, scheme: 'visa', cardType: 'credit', additionalSchemes: [] },
      { country: 'US', scheme: 'visa', cardType: 'credit', additionalSchemes: [] },
    ]);
    expect(rpc.payloadsTo(checkoutSessionPatterns.cardDetails)).toEqual(
      ['445566', '4455667', '44556677'].map((bin) => ({ checkout_session_id: sessionId, bin })),
    );
    const changes = await page.evaluate(() =>
      window.events.filter((event) => event.name === 'change').map((event) => event.detail),
    );
    expect(changes.at(-1)).toEqual({ field: 'security_code', empty: false, complete: true, valid: true });
    expect(changes.filter((change) => change.field === 'number').at(-1)).toEqual({
      field: 'number',
      empty: false,
      complete: true,
      valid: true,
    });
    expect(changes.filter((change) => change.field === 'expiry').at(-1)).toEqual({
      field: 'expiry',
      empty: false,
      complete: true,
      valid: true,
    });
    const everything = JSON.stringify(await page.evaluate(() => window.events));
    expect(everything).not.toMatch(/\d{9,}/);
    expect(everything).not.toContain('1230');

    // The page's own JavaScript cannot reach the frames' documents.
    expect(
      await page.evaluate(() =>
        Array.from(document.querySelectorAll('iframe'), (frame) => {
          let viaWindow: string;
          try {
            void frame.contentWindow?.document;
            viaWindow = 'readable';
          } catch {
            viaWindow = 'threw';
          }
          return `${frame.contentDocument === null ? 'null' : 'readable'}/${viaWindow}`;
        }),
      ),
    ).toEqual(['null/threw', 'null/threw', 'null/threw']);

    await page.evaluate(() => window.sf.submit());
    expect(rpc.onlyPayloadTo(checkoutSessionPatterns.attachFields)).toEqual({
      checkout_session_id: sessionId,
      body: { payment_method: { method: 'card', number: CARD, expiration_date: '12/30', security_code: '123' } },
    });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('rejects submit() with the reason — a field not valid, or the service’s refusal — and never posts an invalid card', async () => {
    const { page, field } = await openCheckout();
    await field('number').locator('input[name="number"]').pressSequentially('4111111111111112');
    await field('expiry').locator('input[name="expiry"]').pressSequentially('1230');
    await field('security_code').locator('input[name="security_code"]').pressSequentially('123');
    const submit = () =>
      page.evaluate(() =>
        window.sf.submit().then(
          () => 'resolved',
          (error: Error) => error.message,
        ),
      );
    await expect(submit()).resolves.toBe('The card number is not valid');
    expect(rpc.payloadsTo(checkoutSessionPatterns.attachFields)).toEqual([]);

    const number = field('number').locator('input[name="number"]');
    await number.fill('');
    await number.pressSequentially('4111111111111111');
    rpc.answer(checkoutSessionPatterns.attachFields, () => {
      throw ApiError.badRequest('The checkout session has expired', [
        {
          location: 'path',
          pointer: '/session_id',
          message: 'The checkout session has expired',
          type: 'checkout_session_expired',
        },
      ]);
    });
    try {
      await expect(submit()).resolves.toBe('The checkout session has expired');
    } finally {
      rpc.answer(checkoutSessionPatterns.attachFields, () => null);
    }
    expect(problems.filter((problem) => !/status of 400/.test(problem))).toEqual([]);
    await page.close();
  });
  it('posts a stored payment method with the code typed into its frame: submit({ paymentMethodId })', async () => {
    const paymentMethodId = randomUUID();
    const { page, sessionId, field } = await openCheckout(true);
    const frames = () => Array.from(document.querySelectorAll('iframe[data-secure-field]'), () => 'frame').length;
    expect(await page.evaluate(frames)).toBe(1);
    const submit = (id?: string) =>
      page.evaluate((method) => {
        const options = method ? { paymentMethodId: method } : {};
        return window.sf.submit(options).then(
          () => 'resolved',
          (error: Error) => error.message,
        );
      }, id);
    await expect(submit(paymentMethodId)).resolves.toBe('The security code is not valid');
    await expect(submit()).resolves.toBe('The card number field is not ready');
    await field('security_code').locator('input[name="security_code"]').pressSequentially('123');
    await expect(submit(paymentMethodId)).resolves.toBe('resolved');
    expect(rpc.onlyPayloadTo(checkoutSessionPatterns.attachFields)).toEqual({
      checkout_session_id: sessionId,
      body: { payment_method: { method: 'id', id: paymentMethodId, security_code: '123' } },
    });
    expect(JSON.stringify(await page.evaluate(() => window.events))).not.toContain('123');
    expect(problems).toEqual([]);
    await page.close();
  });
});
