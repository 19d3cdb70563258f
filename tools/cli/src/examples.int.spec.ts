/**
 * examples/webhook-receiver over HTTP: its request handler behind a real server fed signed requests, and the
 * example as it is run, a separate process started with `node -r ./scripts/register.cjs`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTsProcess, waitFor } from '@switchyard/testing';
import { signatureHeaders } from '@switchyard/webhook-signature';
import { buildClient } from '../../../packages/client/build/bundle';
import { createWebhookHandler, SeenWebhookIds, type WebhookEvent } from '../../../examples/webhook-receiver/receiver';

const event: WebhookEvent = {
  type: 'event',
  id: '0b6f1c1e-8f0e-4d7e-9d4b-1f2a3b4c5d6e',
  name: 'transaction.captured',
  created_at: '2025-03-01T10:00:05.012Z',
  merchant_account_id: 'default',
  target: { type: 'transaction', id: '6f1c2e8b-0a01-4c61-9d11-5b3ac0a47e2a', status: 'capture_succeeded' },
};
const rawBody = JSON.stringify(event);

function deliver(
  url: string,
  options: { webhookId?: string; secrets?: string[]; body?: string; timestamp?: number; method?: string } = {},
): Promise<Response> {
  const body = options.body ?? rawBody;
  const headers = signatureHeaders({
    webhookId: options.webhookId ?? 'wh_1',
    secrets: options.secrets ?? ['whsec_test'],
    rawBody: body,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
  });
  return fetch(url, {
    method: options.method ?? 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    ...(options.method === 'GET' ? {} : { body }),
  });
}

describe('the webhook receiver handler', () => {
  let server: http.Server;
  let url: string;
  const received: { event: WebhookEvent; webhookId: string }[] = [];
  let failNext = false;
  let slow: Promise<void> | null = null;

  beforeAll(async () => {
    const handler = createWebhookHandler({
      secrets: ['whsec_old', 'whsec_test'],
      seen: new SeenWebhookIds(100),
      onEvent: async (delivered, webhookId) => {
        if (slow) await slow;
        if (failNext) {
          failNext = false;
          throw new Error('database down');
        }
        received.push({ event: delivered, webhookId });
      },
    });
    server = http.createServer((request, response) => void handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => void (received.length = 0));

  it('handles a signed delivery once, and acknowledges its repeats without handling them again', async () => {
    expect((await deliver(url)).status).toBe(200);
    const repeat = await deliver(url);
    expect(repeat.status).toBe(200);
    expect(await repeat.text()).toMatch(/duplicate/);
    expect(received).toEqual([{ event, webhookId: 'wh_1' }]);
  });

  it('accepts a signature by any of its secrets (a rotation)', async () => {
    expect((await deliver(url, { webhookId: 'wh_2', secrets: ['whsec_new', 'whsec_old'] })).status).toBe(200);
    expect(received.map((r) => r.webhookId)).toEqual(['wh_2']);
  });

  it.each([
    ['a wrong secret', { webhookId: 'wh_3', secrets: ['whsec_other'] }, /no_matching_signature/],
    ['a stale timestamp', { webhookId: 'wh_3', timestamp: Math.floor(Date.now() / 1000) - 600 }, /stale_timestamp/],
  ])('refuses %s with 400', async (_case, options, reason) => {
    const response = await deliver(url, options);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(reason);
    expect(received).toEqual([]);
  });

  it('refuses a body changed after signing, unsigned requests and other methods', async () => {
    const headers = signatureHeaders({
      webhookId: 'wh_4',
      secrets: ['whsec_test'],
      rawBody,
      timestamp: Math.floor(Date.now() / 1000),
    });
    expect((await fetch(url, { method: 'POST', headers, body: rawBody.replace('captured', 'voided') })).status).toBe(
      400,
    );
    expect((await fetch(url, { method: 'POST', body: rawBody })).status).toBe(400);
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(received).toEqual([]);
  });

  it('answers 500 when handling fails, so that the delivery comes again, and handles it then', async () => {
    failNext = true;
    expect((await deliver(url, { webhookId: 'wh_5' })).status).toBe(500);
    expect((await deliver(url, { webhookId: 'wh_5' })).status).toBe(200);
    expect(received.map((r) => r.webhookId)).toEqual(['wh_5']);
  });

  it('answers 409 to a repeat that arrives while the first is being handled', async () => {
    let release!: () => void;
    slow = new Promise((resolve) => (release = resolve));
    try {
      const first = deliver(url, { webhookId: 'wh_6' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await deliver(url, { webhookId: 'wh_6' })).status).toBe(409);
      release();
      expect((await first).status).toBe(200);
    } finally {
      slow = null;
    }
    expect(received.map((r) => r.webhookId)).toEqual(['wh_6']);
  });
});

describe('the webhook receiver example, run as documented', () => {
  // As documented, the example runs on the built client (`npm run build:client`).
  beforeAll(() => buildClient(), 120_000);

  it('starts, and prints a verified event', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const receiver = startTsProcess('examples/webhook-receiver/receiver.ts', {
      WEBHOOK_SECRETS: 'whsec_test',
      PORT: String(port),
    });
    try {
      await waitFor(
        'the receiver listening',
        async () => (receiver.output().includes('listening') ? true : undefined),
        15_000,
        () => receiver.output(),
      );
      expect((await deliver(`http://127.0.0.1:${port}/`, { webhookId: 'wh_run' })).status).toBe(200);
      await waitFor(
        'the event printed',
        async () => (receiver.output().includes('transaction.captured') ? true : undefined),
        5_000,
        () => receiver.output(),
      );
      expect(receiver.output()).toContain(
        '2025-03-01T10:00:05.012Z transaction.captured transaction 6f1c2e8b-0a01-4c61-9d11-5b3ac0a47e2a (capture_succeeded) [webhook wh_run]',
      );
    } finally {
      await receiver.kill('SIGTERM');
    }
  });

  it('refuses to start without a secret', async () => {
    const receiver = startTsProcess('examples/webhook-receiver/receiver.ts', {
      WEBHOOK_SECRETS: '',
      WEBHOOK_SECRET: '',
    });
    const code = await new Promise<number | null>((resolve) =>
      receiver.child.once('exit', (exitCode) => resolve(exitCode)),
    );
    expect(code).toBe(1);
    expect(receiver.output()).toMatch(/Set WEBHOOK_SECRETS/);
  });
});
