/**
 * Issue 23, item 2: `/docs` renders the API reference in Chromium from `/openapi.json` of the same runtime, offline —
 * every request the page makes stays on the service's origin — and shows every path of the document, each
 * operation's scopes and the authentication guide.
 */
import type { AddressInfo } from 'node:net';
import { describeWithInfra } from '@switchyard/testing';
import { chromiumAvailability, launchChromium, screenshotPath } from './chromium';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../services/standalone/src/embedded.fixture';

type OpenApiDocument = { paths: Record<string, Record<string, { 'x-required-scopes'?: string[] }>> };

/** The page's DOM as the test reads it (the spec is type-checked without the DOM's types). */
interface PageGlobals {
  readonly document: { readonly body: { readonly textContent: string | null } };
}

describeWithInfra('the API reference at /docs, in Chromium', chromiumAvailability(), () => {
  let fixture: EmbeddedFixture;
  let baseUrl: string;

  beforeAll(async () => {
    fixture = await startEmbeddedFixture('api-reference', {}, { listen: true });
    baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it('renders every path of the document, the scopes of every operation and the authentication guide, from this origin only', async () => {
    const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApiDocument;
    const paths = Object.keys(document.paths);
    expect(paths.length).toBeGreaterThan(60);
    const scopes = new Set(
      Object.values(document.paths).flatMap((item) =>
        Object.values(item).flatMap((operation) => operation['x-required-scopes'] ?? []),
      ),
    );

    const { browser, close } = await launchChromium({ width: 1400, height: 1000 });
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on('requestfinished', (request) => requested.push(request.url()));
      // Redoc's attribution ("API docs by Redocly") asks for its logo from cdn.redoc.ly: the page's policy refuses it
      // in the browser, so it never leaves the machine (and the logo is hidden on the error).
      const refused: string[] = [];
      page.on('requestfailed', (request) =>
        (/csp/i.test(request.failure()?.errorText ?? '') ? refused : requested).push(request.url()),
      );
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (
          message.type() === 'error' &&
          !message.text().includes("'https://cdn.redoc.ly/redoc/logo-mini.svg' violates")
        )
          problems.push(message.text());
      });

      const answer = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      expect(answer?.status()).toBe(200);
      // Redoc replaces its loading state with the rendered document once it has fetched and parsed it.
      await page.waitForFunction(
        (last: string) => ((globalThis as unknown as PageGlobals).document.body.textContent ?? '').includes(last),
        paths.at(-1)!,
        { timeout: 60_000 },
      );
      const text = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.body.textContent ?? '');
      await page.screenshot({ path: screenshotPath('api-reference') });

      expect(paths.filter((path) => !text.includes(path))).toEqual([]);
      expect([...scopes].filter((scope) => !text.includes(scope))).toEqual([]);
      expect(text).toContain('Authentication');
      expect(text).toContain('RFC 7638 thumbprint');
      expect(text).toContain('x-service-merchant-account-id');
      expect(
        requested.filter(
          (url) => !url.startsWith(`${baseUrl}/`) && !url.startsWith('blob:') && !url.startsWith('data:'),
        ),
      ).toEqual([]);
      expect(requested).toContain(`${baseUrl}/openapi.json`);
      expect(refused).toEqual(['https://cdn.redoc.ly/redoc/logo-mini.svg']);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  it('serves the renderer from node_modules with a validator, and the page under a policy that allows this origin only', async () => {
    const page = await fetch(`${baseUrl}/docs`);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self';/);
    const script = await fetch(`${baseUrl}/docs/redoc.standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = script.headers.get('etag')!;
    expect((await fetch(`${baseUrl}/docs/redoc.standalone.js`, { headers: { 'if-none-match': etag } })).status).toBe(
      304,
    );
  });
});
