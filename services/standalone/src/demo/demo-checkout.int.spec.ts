/**
 * The demo checkout's routes over HTTP (issue 9 item 4), without a browser (tests/browser/demo-checkout.e2e.spec.ts
 * drives the page in Chromium): the page and its Content-Security-Policy, the merchant backend's session and embed
 * token, paying as the page does, the backend reading back only its own checkouts' transactions, the demo key pair
 * (made on first use, replaced after a restart), and the switch (off in production unless DEMO_CHECKOUT=true).
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { paymentServicePatterns } from '@switchyard/contracts';
import { removeTestDataDir, signToken } from '@switchyard/testing';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import pino from 'pino';
import request from 'supertest';
import { startEmbedded } from '../embedded';
import { startEmbeddedFixture, type EmbeddedFixture } from '../embedded.fixture';
import { DEMO_AMOUNT, DEMO_CONNECTION_DISPLAY_NAME, DEMO_CURRENCY, DEMO_KEY_DISPLAY_NAME } from './demo-checkout';

let fixture: EmbeddedFixture;
let baseUrl: string;
const http = () => request(baseUrl);

beforeAll(async () => {
  fixture = await startEmbeddedFixture('demo-checkout', {}, { listen: true });
  baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
});

afterAll(() => fixture?.stop());

const identity = () => fixture.service.identity;
const demoKeys = () =>
  identity()
    .apiKeyPairs.list({ limit: 100 })
    .items.filter((pair) => pair.display_name === DEMO_KEY_DISPLAY_NAME);

describe('GET /demo/checkout', () => {
  it('serves the merchant page, uncached, loading the secure fields from the service and saying to open it on another origin', async () => {
    const page = await http().get('/demo/checkout').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain(`<code>${baseUrl}</code>`);
    const localhostUrl = baseUrl.replace('127.0.0.1', 'localhost');
    expect(page.text).toContain(`Open it as <a href="${localhostUrl}/demo/checkout">`);
    expect(page.text).toContain("'/secure-fields/secure-fields.js'");

    const nonce = /<script type="module" nonce="([^"]+)">/.exec(page.text)?.[1];
    expect(nonce).toBeTruthy();
    const policy = page.headers['content-security-policy'] as string;
    expect(policy).toContain(`script-src 'nonce-${nonce}' ${baseUrl};`);
    expect(policy).toContain(`frame-src ${baseUrl};`);
    expect(policy).toContain("default-src 'none'");
    // A new nonce per response.
    const again = await http().get('/demo/checkout').expect(200);
    expect(again.text).not.toContain(`nonce="${nonce}"`);
  });

  it('is not an API operation: absent from the OpenAPI document', async () => {
    const document = (await http().get('/openapi.json').expect(200)).body as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/demo'))).toEqual([]);
  });
});

describe('POST /demo/checkout/session', () => {
  it('makes the demo key on first use, one "Demo cards" connection, and per call a session with its own embed token', async () => {
    expect(demoKeys()).toEqual([]);
    const [first, second] = await Promise.all([
      http().post('/demo/checkout/session').expect(201),
      http().post('/demo/checkout/session').expect(201),
    ]);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toEqual({
      sessionId: expect.any(String),
      token: expect.any(String),
      serviceUrl: baseUrl,
      amount: DEMO_AMOUNT,
      currency: DEMO_CURRENCY,
      expiresAt: expect.any(String),
    });
    expect(second.body.sessionId).not.toBe(first.body.sessionId);

    const [key, ...others] = demoKeys();
    expect(others).toEqual([]);
    expect(key).toMatchObject({
      active: true,
      merchant_account_ids: ['default'],
      roles: [expect.objectContaining({ slug: 'integration' })],
    });
    expect(key).not.toHaveProperty('private_key');

    const header = decodeProtectedHeader(first.body.token);
    expect(header).toMatchObject({ alg: 'ES512', kid: key!.kid });
    const claims = decodeJwt(first.body.token);
    expect(claims).toMatchObject({
      scopes: ['embed'],
      embed: { amount: DEMO_AMOUNT, currency: DEMO_CURRENCY },
      checkout_session_id: first.body.sessionId,
    });
    expect(claims.exp).toBe(Math.floor(Date.parse(first.body.expiresAt) / 1000));

    const connections = (await fixture.service.transactions.rpcHandlers()[paymentServicePatterns.list]!(
      { merchant_account_id: 'default', limit: 100 },
      EMBEDDED_CALL,
    )) as {
      items: { display_name: string; payment_service_definition_id: string }[];
    };
    expect(connections.items.filter((item) => item.display_name === DEMO_CONNECTION_DISPLAY_NAME)).toHaveLength(1);
  });
});

describe('paying as the page does', () => {
  it('attaches the card to the session (no token), pays with the embed token, and the backend reads the transaction back', async () => {
    const checkout = (await http().post('/demo/checkout/session').expect(201)).body;
    await http()
      .post(`/checkout/sessions/${checkout.sessionId}/fields`)
      .send({
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      })
      .expect(204);
    const paid = await http()
      .post('/transactions')
      .set('authorization', `Bearer ${checkout.token}`)
      .send({
        amount: checkout.amount,
        currency: checkout.currency,
        payment_method: { method: 'checkout-session', id: checkout.sessionId },
      });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(paid.body).toMatchObject({
      status: 'authorization_succeeded',
      amount: DEMO_AMOUNT,
      checkout_session_id: checkout.sessionId,
    });

    const read = await http().get(`/demo/checkout/transactions/${paid.body.id}`).expect(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.body).toEqual({
      id: paid.body.id,
      status: 'authorization_succeeded',
      amount: DEMO_AMOUNT,
      currency: DEMO_CURRENCY,
    });
    expect(JSON.stringify(read.body)).not.toContain('4111111111111111');
  });

  it('the embed token pays only its amount: a contradicting amount is refused', async () => {
    const checkout = (await http().post('/demo/checkout/session').expect(201)).body;
    await http()
      .post(`/checkout/sessions/${checkout.sessionId}/fields`)
      .send({ payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30' } })
      .expect(204);
    const more = await http()
      .post('/transactions')
      .set('authorization', `Bearer ${checkout.token}`)
      .send({
        amount: checkout.amount + 1,
        currency: checkout.currency,
        payment_method: { method: 'checkout-session', id: checkout.sessionId },
      });
    expect(more.status).toBe(403);
    expect(more.body).toMatchObject({
      type: 'error',
      code: 'forbidden',
      status: 403,
      message: expect.stringMatching(/amount/),
    });
  });

  it('reads back only transactions of its own checkouts: another one, an unknown id and a malformed one are 404s', async () => {
    const created = await fixture.service.identity.apiKeyPairs.create(
      { display_name: 'admin', roles: ['administrator'] },
      { kind: 'operator' },
    );
    const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key!, expiresIn: 600 });
    const direct = await http()
      .post('/transactions')
      .set('authorization', `Bearer ${token}`)
      .send({
        amount: 1000,
        currency: 'USD',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      })
      .expect(201);
    for (const id of [direct.body.id, '00000000-0000-4000-8000-000000000001', 'not-a-uuid']) {
      const answer = await http().get(`/demo/checkout/transactions/${id}`).expect(404);
      expect(answer.body).toMatchObject({ type: 'error', code: 'not_found', status: 404 });
    }
  });
});

describe('the demo key after a restart', () => {
  it('replaces the key pair of the earlier start (its private key is gone) on the first checkout', async () => {
    const before = demoKeys().map((pair) => pair.id);
    expect(before).toHaveLength(1);
    // A second runtime on the same data directory, as after a restart.
    await fixture.service.stop();
    const restarted = await startEmbedded(
      loadSettings({ DATA_DIR: fixture.dataDir, LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
    );
    try {
      await restarted.gateway.app.listen(0, '127.0.0.1');
      const port = (restarted.gateway.app.getHttpServer().address() as AddressInfo).port;
      const checkout = (await request(`http://127.0.0.1:${port}`).post('/demo/checkout/session').expect(201)).body;
      const keys = restarted.identity.apiKeyPairs
        .list({ limit: 100 })
        .items.filter((pair) => pair.display_name === DEMO_KEY_DISPLAY_NAME);
      expect(keys).toHaveLength(1);
      expect(before).not.toContain(keys[0]!.id);
      expect(decodeProtectedHeader(checkout.token).kid).toBe(keys[0]!.kid);
    } finally {
      await restarted.stop();
      removeTestDataDir(fixture.dataDir);
      fixture = undefined as unknown as EmbeddedFixture;
    }
  });
});

describe('DEMO_CHECKOUT', () => {
  const statusOf = async (env: Record<string, string>): Promise<number> => {
    const other = await startEmbeddedFixture('demo-checkout-switch', env);
    try {
      return (await request(other.service.gateway.app.getHttpServer()).get('/demo/checkout')).status;
    } finally {
      await other.stop();
    }
  };

  it('is off with NODE_ENV=production, on again with DEMO_CHECKOUT=true, off with DEMO_CHECKOUT=false', async () => {
    // Production needs Paze's signing keys to start at all (docs/paze.md): any PEM public key stands for them here.
    const pazeKeys = path.join(os.tmpdir(), `paze-signing-${process.pid}.pem`);
    fs.writeFileSync(
      pazeKeys,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }),
    );
    const production = { NODE_ENV: 'production', PAZE_SIGNING_KEYS: pazeKeys };
    expect(await statusOf(production)).toBe(404);
    expect(await statusOf({ ...production, DEMO_CHECKOUT: 'true' })).toBe(200);
    fs.rmSync(pazeKeys, { force: true });
    expect(await statusOf({ DEMO_CHECKOUT: 'false' })).toBe(404);
  });

  it('unset, is on only when the HTTP server is bound to loopback (issue 22, item 7)', async () => {
    expect(await statusOf({ HOST: '0.0.0.0' })).toBe(404);
    expect(await statusOf({ HOST: '10.1.2.3' })).toBe(404);
    expect(await statusOf({ HOST: '0.0.0.0', DEMO_CHECKOUT: 'true' })).toBe(200);
    expect(await statusOf({ HOST: 'localhost' })).toBe(200);
  });
});
