/**
 * The demo checkout in a real browser (issue 9 acceptance): headless Chromium (Debian's `chromium`, driven by
 * playwright-core, which never downloads a browser of its own) opens the merchant page on `http://localhost:<port>`
 * while the secure fields are served from `http://127.0.0.1:<port>` — two origins — types a test card digit by digit
 * into the card number frame, checks the `card-details-changed` events the page received (the scheme from the first
 * digit, then again as the BIN data tells more — once for the issuing country alone), pays, and sees
 * `authorization_succeeded`. A
 * screenshot is kept as a test artifact. Then, from the merchant page's own JavaScript, it tries every way it has to
 * the card number — the frames' documents, its own text and markup, every property of its window, the messages posted
 * to it, its storage, the events it kept — and finds nothing; and no request the page itself sent carried it.
 *
 * Chromium missing: `SKIP demo checkout in Chromium: …` (a failure under SWITCHYARD_REQUIRE_INFRA=1; `.ci/run`
 * installs it).
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describeWithInfra } from '@switchyard/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumAvailability, launchChromium, screenshotPath } from './chromium';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../services/standalone/src/embedded.fixture';

const CARD_NUMBER = '4111111111111111';
/**
 * What the page must receive while cards are typed (docs/bin-data.md, the sample data). First the card whose country
 * only an 8-digit range knows, `4455 6677 1111 1110`: the first digit tells the scheme alone; at 6 digits the BIN data
 * adds the card type (`445566`: visa credit, no country); at 8 digits the event fires again for the country alone
 * (`44556677`: US) — spec, Events rule 5. The field cleared: nothing known. Then the card that pays,
 * `4111 1111 1111 1111`: visa from the first digit, then its country and type (`411111`: US credit). No other
 * keystroke changes anything, so nothing else fires.
 */
const COUNTRY_AT_EIGHT_DIGITS = { first: '445566', rest: '7711111110' };
const TYPED_NUMBERS = [CARD_NUMBER, COUNTRY_AT_EIGHT_DIGITS.first + COUNTRY_AT_EIGHT_DIGITS.rest];
const visaUnknownCountry = { country: null, scheme: 'visa', cardType: null, additionalSchemes: [] };
const EXPECTED_AT_SIX_DIGITS = [
  visaUnknownCountry,
  { country: null, scheme: 'visa', cardType: 'credit', additionalSchemes: [] },
];
const EXPECTED_AT_EIGHT_DIGITS = [
  ...EXPECTED_AT_SIX_DIGITS,
  { country: 'US', scheme: 'visa', cardType: 'credit', additionalSchemes: [] },
];
const EXPECTED_CARD_DETAILS_EVENTS = [
  ...EXPECTED_AT_EIGHT_DIGITS,
  { country: null, scheme: null, cardType: null, additionalSchemes: [] },
  visaUnknownCountry,
  { country: 'US', scheme: 'visa', cardType: 'credit', additionalSchemes: [] },
];

/**
 * The browser globals the page functions below read: the repository compiles without the DOM library, so those
 * functions (serialized into the page by Playwright, hence self-contained) cast `globalThis` to this.
 */
interface FrameElement {
  readonly contentDocument: unknown;
  readonly contentWindow: { readonly document: unknown } | null;
  getAttribute(name: string): string | null;
}
interface PageGlobals {
  readonly document: {
    querySelectorAll(selector: string): ArrayLike<FrameElement>;
    readonly body: { readonly innerText: string; readonly dataset: Record<string, string | undefined> };
    readonly documentElement: { readonly outerHTML: string };
    readonly cookie: string;
  };
  readonly window: Record<string, unknown> & { __cardDetailsEvents?: unknown[]; __observedMessages?: string[] };
  readonly localStorage: {
    readonly length: number;
    key(index: number): string | null;
    getItem(key: string): string | null;
  };
  readonly sessionStorage: PageGlobals['localStorage'];
  addEventListener(type: 'message', listener: (event: { data: unknown; origin: string }) => void): void;
}

/** Everything the merchant page's JavaScript can see that might hold one of the card numbers. Runs in the top frame. */
function whatTheMerchantPageSees(numbers: readonly string[]) {
  const hasNumber = (text: string): boolean => numbers.some((digits) => text.includes(digits));
  const { document, window, localStorage, sessionStorage } = globalThis as unknown as PageGlobals;
  const frames = Array.from(document.querySelectorAll('iframe'));
  const frameDocuments = frames.map((frame) => {
    try {
      return frame.contentDocument === null ? 'null' : 'readable';
    } catch {
      return 'threw';
    }
  });
  const frameWindowDocuments = frames.map((frame) => {
    try {
      void frame.contentWindow?.document;
      return 'readable';
    } catch {
      return 'threw';
    }
  });
  const holds = (value: unknown): boolean => {
    if (typeof value === 'string') return hasNumber(value);
    if (typeof value === 'number' || typeof value === 'bigint') return hasNumber(String(value));
    if (value === null || typeof value !== 'object') return false;
    try {
      return hasNumber(JSON.stringify(value) ?? '');
    } catch {
      return false;
    }
  };
  const names = new Set<string>(Object.getOwnPropertyNames(window));
  for (const name in window) names.add(name);
  const windowProperties = [...names].filter((name) => {
    try {
      return holds(window[name]);
    } catch {
      return false;
    }
  });
  const storage = [localStorage, sessionStorage].flatMap((store) =>
    Array.from({ length: store.length }, (_, index) => {
      const key = store.key(index) ?? '';
      return `${key}=${store.getItem(key) ?? ''}`;
    }),
  );
  return {
    frames: frames.map((frame) => frame.getAttribute('data-secure-field')),
    frameDocuments,
    frameWindowDocuments,
    windowPropertiesEnumerated: names.size,
    windowProperties,
    // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered to the buyer is what must not show the number.
    inText: hasNumber(document.body.innerText),
    inMarkup: hasNumber(document.documentElement.outerHTML),
    inStorage: storage.some(hasNumber) || hasNumber(document.cookie),
    observedMessages: window.__observedMessages?.length ?? 0,
    inMessages: (window.__observedMessages ?? []).some(hasNumber),
    cardDetailsEvents: window.__cardDetailsEvents ?? [],
    inEvents:
      hasNumber(JSON.stringify(window.__cardDetailsEvents ?? [])) ||
      /\d{9,}/.test(JSON.stringify(window.__cardDetailsEvents ?? [])),
  };
}

describeWithInfra('demo checkout in Chromium', chromiumAvailability(), () => {
  let fixture: EmbeddedFixture;
  let port: number;
  let chrome: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let browser: BrowserContext;

  beforeAll(async () => {
    fixture = await startEmbeddedFixture('demo-checkout-browser', {}, { listen: true });
    port = (fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port;
    // Tall enough for the whole page in one screenshot (a full-page one resizes the view and re-lays out the frames).
    chrome = await launchChromium({ width: 1024, height: 1000 });
    browser = chrome.browser;
  });

  afterAll(async () => {
    await chrome?.close();
    await fixture?.stop();
  });

  it('types a card into the frames, receives card-details-changed, pays, and the merchant page never sees the number', {
    timeout: 120_000,
  }, async ({ annotate }) => {
    const page: Page = browser.pages()[0] ?? (await browser.newPage());
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // What the page itself sends (the frames' own requests go to the service's origin and are theirs).
    const merchantPageRequests: { url: string; body: string }[] = [];
    page.on('request', (sent) => {
      if (sent.frame() === page.mainFrame())
        merchantPageRequests.push({ url: sent.url(), body: sent.postData() ?? '' });
    });
    // Every message posted to the merchant window, recorded before any of the page's scripts runs.
    await page.addInitScript(() => {
      const observed: string[] = [];
      const page = globalThis as unknown as PageGlobals;
      page.window.__observedMessages = observed;
      page.addEventListener('message', (event) => observed.push(`${event.origin} ${JSON.stringify(event.data)}`));
    });

    const merchantOrigin = `http://localhost:${port}`;
    const serviceOrigin = `http://127.0.0.1:${port}`;
    await page.goto(`${merchantOrigin}/demo/checkout`);
    await page.waitForFunction(
      () => ['ready', 'failed'].includes((globalThis as unknown as PageGlobals).document.body.dataset.state ?? ''),
      null,
      { timeout: 30_000 },
    );
    expect(await page.locator('#message').textContent(), `page errors: ${pageErrors.join('; ')}`).toBe(
      'Enter a card and pay.',
    );
    expect(await page.locator('#amount').textContent()).toBe('$12.99');
    // Three frames, on the service's origin, not the page's.
    const frameOrigins = page
      .frames()
      .filter((frame) => frame !== page.mainFrame())
      .map((frame) => new URL(frame.url()).origin);
    expect(frameOrigins).toEqual([serviceOrigin, serviceOrigin, serviceOrigin]);

    const number = page.frameLocator('[data-secure-field="number"]').locator('input[name="number"]');
    const cardDetailsEvents = () =>
      page.evaluate(() => (globalThis as unknown as PageGlobals).window.__cardDetailsEvents);
    // Six digits, then a wait for their answer: an answer for a prefix the number has already left is dropped, so
    // typing on at once could skip the 6-digit event.
    await number.pressSequentially(COUNTRY_AT_EIGHT_DIGITS.first, { delay: 30 });
    await expect.poll(cardDetailsEvents, { timeout: 15_000 }).toEqual(EXPECTED_AT_SIX_DIGITS);
    await number.pressSequentially(COUNTRY_AT_EIGHT_DIGITS.rest, { delay: 30 });
    await expect.poll(cardDetailsEvents, { timeout: 15_000 }).toEqual(EXPECTED_AT_EIGHT_DIGITS);
    await number.clear();
    await number.pressSequentially(CARD_NUMBER, { delay: 30 });
    await expect.poll(cardDetailsEvents, { timeout: 15_000 }).toEqual(EXPECTED_CARD_DETAILS_EVENTS);
    await page
      .frameLocator('[data-secure-field="expiry"]')
      .locator('input[name="expiry"]')
      .pressSequentially('1230', { delay: 30 });
    await page
      .frameLocator('[data-secure-field="security_code"]')
      .locator('input[name="security_code"]')
      .pressSequentially('123', { delay: 30 });

    // The number is in the browser — in the card number frame, where Playwright (not the page) can read it ...
    expect((await number.inputValue()).replace(/\D/g, '')).toBe(CARD_NUMBER);
    // ... and the merchant page's JavaScript cannot reach it.
    const beforePaying = await page.evaluate(whatTheMerchantPageSees, TYPED_NUMBERS);
    expect(beforePaying.frames).toEqual(['number', 'expiry', 'security_code']);
    expect(beforePaying.frameDocuments).toEqual(['null', 'null', 'null']);
    expect(beforePaying.frameWindowDocuments).toEqual(['threw', 'threw', 'threw']);

    await page.locator('#pay').click();
    await page.waitForFunction(
      () => ['done', 'failed'].includes((globalThis as unknown as PageGlobals).document.body.dataset.state ?? ''),
      null,
      { timeout: 45_000 },
    );
    expect(await page.locator('#message').textContent(), `page errors: ${pageErrors.join('; ')}`).toBe(
      'Payment authorization succeeded.',
    );
    expect(await page.locator('#transaction-status').textContent()).toBe('authorization_succeeded');
    const transactionId = (await page.locator('#transaction-id').textContent()) ?? '';
    expect(transactionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The events list is shown on the page too, as received.
    expect(await page.locator('#card-details-events li').allTextContents()).toEqual(
      EXPECTED_CARD_DETAILS_EVENTS.map((event) => JSON.stringify(event)),
    );

    const screenshot = screenshotPath('demo-checkout');
    await page.screenshot({ path: screenshot });
    expect(fs.statSync(screenshot).size).toBeGreaterThan(0);
    // The path only: an attachment with a path would be copied into the work tree (.vitest-attachments).
    await annotate(`screenshot: ${screenshot}`, 'screenshot');
    process.stdout.write(`demo checkout screenshot: ${screenshot}\n`);

    for (const seen of [beforePaying, await page.evaluate(whatTheMerchantPageSees, TYPED_NUMBERS)]) {
      expect(seen.frameDocuments).toEqual(['null', 'null', 'null']);
      expect(seen.frameWindowDocuments).toEqual(['threw', 'threw', 'threw']);
      expect(seen.windowPropertiesEnumerated).toBeGreaterThan(100);
      expect(seen.windowProperties).toEqual([]);
      expect(seen.inText).toBe(false);
      expect(seen.inMarkup).toBe(false);
      expect(seen.inStorage).toBe(false);
      expect(seen.observedMessages).toBeGreaterThan(0);
      expect(seen.inMessages).toBe(false);
      expect(seen.cardDetailsEvents).toEqual(EXPECTED_CARD_DETAILS_EVENTS);
      expect(seen.inEvents).toBe(false);
    }
    // The page's own requests: its backend, the module, and POST /transactions with the session — never the number.
    expect(merchantPageRequests.map((sent) => `${new URL(sent.url).origin}${new URL(sent.url).pathname}`)).toEqual(
      expect.arrayContaining([
        `${merchantOrigin}/demo/checkout/session`,
        `${serviceOrigin}/secure-fields/secure-fields.js`,
        `${merchantOrigin}/transactions`,
      ]),
    );
    expect(
      merchantPageRequests.filter((sent) =>
        TYPED_NUMBERS.some((digits) => sent.url.includes(digits) || sent.body.includes(digits)),
      ),
    ).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
