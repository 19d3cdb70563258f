/**
 * The secure fields' routes on the gateway, with a fake RPC client for the transactions service: the module a
 * merchant's page imports (ES module, CORS `*`, ETag), the frame page (its CSP, no caching, 400 for a bad
 * parameter) and its script, and `GET /checkout/sessions/{id}/card-details` (no token; 422 for a bad bin before any
 * service is asked; the service's 404 and 400 rendered as it meant them). The service's own answers: the transactions
 * slice's card-details.int.spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { InProcessMessageBus } from '@switchyard/bus';
import { checkoutSessionPatterns } from '@switchyard/contracts';
import { expectErrorBody } from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../start-gateway';
import { FakeRpc } from '../testing/fake-rpc';
import { FRAME_CONTENT_SECURITY_POLICY } from './frame-page';

let rpc: FakeRpc;
let gateway: RunningGateway;
let bus: InProcessMessageBus;
let http: request.Agent;

beforeAll(async () => {
  rpc = new FakeRpc([]);
  bus = new InProcessMessageBus();
  gateway = await startGateway({ rpc, bus, clockSkewSeconds: 30, keyUsageFlushMs: 60_000 });
  http = request.agent(gateway.app.getHttpServer());
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
});

beforeEach(() => rpc.reset());

const session = randomUUID();
const channel = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const frameQuery = (overrides: Record<string, string | undefined> = {}) => {
  const params = { field: 'number', session, parent: 'https://shop.example', channel, ...overrides };
  return new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
};

describe('GET /secure-fields/secure-fields.js', () => {
  it('is one ES module exporting SecureFields, importable from any origin', async () => {
    const response = await http
      .get('/secure-fields/secure-fields.js')
      .set('origin', 'https://shop.example')
      .expect(200);
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    expect(response.headers.etag).toMatch(/^"[\w-]{27}"$/);
    expect(response.text).toMatch(/export\s*\{[^}]*\bas SecureFields\b[^}]*\}/);
    // Bundled: no import of anything else.
    expect(response.text).not.toMatch(/\bimport\s*[{*\w]|\bimport\(/);
    expect(response.text).toContain('data-secure-field');
  });

  it('answers 304 to a request holding its ETag', async () => {
    const first = await http.get('/secure-fields/secure-fields.js').expect(200);
    const again = await http
      .get('/secure-fields/secure-fields.js')
      .set('if-none-match', first.headers.etag as string)
      .expect(304);
    expect(again.text).toBe('');
    await http.get('/secure-fields/secure-fields.js').set('if-none-match', '"something-else"').expect(200);
  });

  it('needs no token and has only GET', async () => {
    const refused = await http.post('/secure-fields/secure-fields.js').send({}).expect(405);
    expectErrorBody(refused.body, 405, 'method_not_allowed');
    expect(refused.headers.allow).toContain('GET');
  });
});

describe('GET /secure-fields/frame.js', () => {
  it('is the frame page’s module, which posts to its parent only by the exact origin it was given', async () => {
    const response = await http.get('/secure-fields/frame.js').expect(200);
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.headers.etag).toMatch(/^"[\w-]{27}"$/);
    expect(response.text).toContain('postMessage');
    expect(response.text).not.toMatch(/postMessage\([^)]*,\s*["'`]\*["'`]\s*\)/);
    expect(response.text).not.toMatch(/\bimport\s*[{*\w]|\bimport\(/);
  });
});

describe('GET /secure-fields/frame.html', () => {
  it('is the frame page: any page may frame it, it runs and talks to this origin only, and nothing of it is cached', async () => {
    const response = await http.get(`/secure-fields/frame.html?${frameQuery()}`).expect(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(FRAME_CONTENT_SECURITY_POLICY);
    expect(response.headers['content-security-policy']).toContain(
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors *",
    );
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-frame-options']).toBeUndefined();
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.text).toContain('<script type="module" src="frame.js"></script>');
    expect(response.text).toContain('<title>Card number</title>');
    // Nothing of the query is written into the page.
    expect(response.text).not.toContain(session);
    expect(response.text).not.toContain('shop.example');
  });

  it.each([
    ['expiry', 'Expiry date'],
    ['security_code', 'Security code'],
  ])('serves the %s field', async (field, title) => {
    const response = await http.get(`/secure-fields/frame.html?${frameQuery({ field })}`).expect(200);
    expect(response.text).toContain(`<title>${title}</title>`);
  });

  it('is a 400 for a field it does not know, naming the parameter', async () => {
    const response = await http.get(`/secure-fields/frame.html?${frameQuery({ field: 'pan' })}`).expect(400);
    expectErrorBody(response.body, 400, 'bad_request');
    expect(response.body.details).toEqual([
      {
        location: 'query',
        pointer: '/field',
        message: 'must be number, expiry or security_code',
        type: 'invalid_field',
      },
    ]);
    expect(response.headers['content-security-policy']).toBeUndefined();
  });

  it('is a 400 naming every parameter missing or malformed', async () => {
    const response = await http.get('/secure-fields/frame.html').expect(400);
    expect(response.body.details.map((detail: { pointer: string }) => detail.pointer)).toEqual([
      '/field',
      '/session',
      '/parent',
      '/channel',
    ]);
    const bad = await http
      .get(
        `/secure-fields/frame.html?${frameQuery({ session: 'x', parent: 'https://shop.example/path', channel: 'short', placeholder: 'p'.repeat(101) })}`,
      )
      .expect(400);
    expect(bad.body.details.map((detail: { pointer: string }) => detail.pointer)).toEqual([
      '/session',
      '/parent',
      '/channel',
      '/placeholder',
    ]);
    // A parameter given twice is not one value.
    await http.get(`/secure-fields/frame.html?${frameQuery()}&field=expiry`).expect(400);
  });
});

describe('GET /checkout/sessions/{session_id}/card-details', () => {
  const path = (id: string, bin: string) => `/checkout/sessions/${id}/card-details?bin=${bin}`;

  it('answers the transactions service’s BIN data without a token, never cached', async () => {
    const answer = { country: 'US', scheme: 'visa', card_type: 'credit', additional_schemes: [] };
    rpc.answer(checkoutSessionPatterns.cardDetails, () => answer);
    const id = randomUUID();
    const response = await http.get(path(id, '41111111')).expect(200);
    expect(response.body).toEqual(answer);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(rpc.onlyPayloadTo(checkoutSessionPatterns.cardDetails)).toEqual({
      checkout_session_id: id,
      bin: '41111111',
    });
  });

  it.each(['12345', '123456789', '4111a1', '', '４１１１１１'])(
    'refuses bin %j with a 422 before asking any service',
    async (bin) => {
      const response = await http.get(path(randomUUID(), encodeURIComponent(bin))).expect(422);
      expect(response.body.detail[0].loc).toEqual(['query', 'bin']);
      expect(rpc.payloadsTo(checkoutSessionPatterns.cardDetails)).toEqual([]);
    },
  );

  it('refuses a session id that is not a UUID with a 422', async () => {
    await http.get(path('not-a-session', '411111')).expect(422);
    expect(rpc.payloadsTo(checkoutSessionPatterns.cardDetails)).toEqual([]);
  });

  it('renders the service’s 404 (unknown or deleted session) and 400 (expired or used)', async () => {
    rpc.answer(checkoutSessionPatterns.cardDetails, () => {
      throw ApiError.notFound();
    });
    expectErrorBody((await http.get(path(randomUUID(), '411111')).expect(404)).body, 404, 'not_found');
    rpc.answer(checkoutSessionPatterns.cardDetails, () => {
      throw ApiError.badRequest('The checkout session has expired', [
        {
          location: 'path',
          pointer: '/session_id',
          message: 'The checkout session has expired',
          type: 'checkout_session_expired',
        },
      ]);
    });
    const expired = await http.get(path(randomUUID(), '411111')).expect(400);
    expectErrorBody(expired.body, 400, 'bad_request');
    expect(expired.body.details[0].type).toBe('checkout_session_expired');
  });
});

describe('the OpenAPI document', () => {
  it('lists the secure fields’ routes as public, non-JSON operations, and the card details with their schema', async () => {
    const document = (await http.get('/openapi.json').expect(200)).body;
    for (const route of ['/secure-fields/secure-fields.js', '/secure-fields/frame.js', '/secure-fields/frame.html']) {
      const operation = document.paths[route].get;
      expect(operation.tags).toEqual(['Secure fields']);
      expect(operation.security).toEqual([]);
      expect(operation.responses['200'].content).toBeUndefined();
    }
    const cardDetails = document.paths['/checkout/sessions/{session_id}/card-details'].get;
    expect(cardDetails.security).toEqual([]);
    expect(cardDetails.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CheckoutSessionCardDetails',
    });
  });
});
