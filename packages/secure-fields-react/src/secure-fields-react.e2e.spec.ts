/**
 * The wrapper's wiring in a real browser (headless Chromium, as the demo checkout's test; React needs a DOM for its
 * effects): `<CardNumber onCardDetailsChanged>` is subscribed to the library's `card-details-changed` once the
 * provider has its instance, a new handler on re-render is called without subscribing again, `onChange` hears only
 * its own field, `useSecureFields().submit` reaches the instance, and unmounting unsubscribes and removes the field —
 * over a fake `SecureFields` (`testing/fake-secure-fields.ts`). Chromium missing: a printed SKIP (a failure under
 * SWITCHYARD_REQUIRE_INFRA=1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeWithInfra, type Availability } from '@switchyard/testing';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { FakeSecureFields } from './testing/fake-secure-fields';

const CHROMIUM = '/usr/bin/chromium';
const availability: Availability = fs.existsSync(CHROMIUM)
  ? { available: true }
  : { available: false, reason: `${CHROMIUM} is not installed (apt-get install chromium)` };

interface Wiring {
  readonly fake: FakeSecureFields;
  readonly received: Array<{ handler: string; event: string; detail: unknown }>;
  render(handler: string | null): void;
}
/** For the type checker only: inside `page.evaluate` the name is the page's global `wiring()` (testing/wiring-page.ts). */
declare function wiring(): Wiring;

let browser: Browser;
let page: Page;

describeWithInfra('secure fields React wrapper in Chromium', availability, () => {
  beforeAll(async () => {
    const bundled = await build({
      entryPoints: [path.join(__dirname, 'testing/wiring-page.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.setContent('<!doctype html><html><body><div id="root"></div></body></html>');
    await page.addScriptTag({ content: bundled.outputFiles[0]!.text });
    expect(errors).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('wires onCardDetailsChanged to the library’s card-details-changed event, keeping one subscription across renders', async () => {
    await page.evaluate(() => wiring().render('first'));
    await page.waitForFunction(() => wiring().fake.listeners('card-details-changed') === 1, undefined, {
      timeout: 5_000,
    });
    expect(await page.evaluate(() => wiring().fake.added)).toEqual(['number@number']);

    const visa = { country: null, scheme: 'visa', cardType: null, additionalSchemes: [] };
    const visaUs = { country: 'US', scheme: 'visa', cardType: null, additionalSchemes: [] };
    await page.evaluate((detail) => wiring().fake.emit('card-details-changed', detail), visa);
    await page.evaluate(() => wiring().render('second'));
    await page.evaluate((detail) => wiring().fake.emit('card-details-changed', detail), visaUs);
    expect(await page.evaluate(() => wiring().received)).toEqual([
      { handler: 'first', event: 'card-details-changed', detail: visa },
      { handler: 'second', event: 'card-details-changed', detail: visaUs },
    ]);
    // The new handler was read when the event came: no second subscription, no field added twice.
    expect(
      await page.evaluate(() => [wiring().fake.listeners('card-details-changed'), wiring().fake.added.length]),
    ).toEqual([1, 1]);
  });

  it('hands the card number’s onChange only its own field’s changes', async () => {
    await page.evaluate(() => {
      wiring().received.length = 0;
      wiring().fake.emit('change', { field: 'expiry', empty: false, complete: true, valid: true });
      wiring().fake.emit('change', { field: 'number', empty: false, complete: false, valid: false });
    });
    expect(await page.evaluate(() => wiring().received)).toEqual([
      { handler: 'second', event: 'change', detail: { field: 'number', empty: false, complete: false, valid: false } },
    ]);
  });

  it('submits through useSecureFields()', async () => {
    await page.click('#pay');
    expect(await page.evaluate(() => wiring().fake.submitted)).toBe(1);
  });

  it('unsubscribes and removes the field when unmounted, leaving a given instance to its owner', async () => {
    await page.evaluate(() => wiring().render(null));
    await page.waitForFunction(() => wiring().fake.listeners('card-details-changed') === 0, undefined, {
      timeout: 5_000,
    });
    expect(
      await page.evaluate(() => [wiring().fake.removed, wiring().fake.listeners('change'), wiring().fake.destroyed]),
    ).toEqual([['number'], 0, false]);
  });
});
