/**
 * Issue 8 acceptance (webhooks), over HTTP on the embedded runtime, with real receivers (`node:http` on loopback)
 * and fast retries:
 *
 * 1. A receiver failing the first 3 attempts then answering 2xx gets the event once as a success: 4 attempts, one
 *    webhook id, the same bytes, each attempt signed by both active secrets (each verified on its own).
 * 3. A revoked secret signs nothing any more — also for a delivery already retrying when it was revoked; the
 *    timestamp tolerance refuses a captured request replayed later (`verifyWebhook` and the CLI `webhooks verify`).
 * 4. Captures of a multi-capture transaction are announced for the capture AND the transaction (`capture.succeeded`
 *    + `transaction.captured`); a declined capture (500007) as `capture.declined` + `transaction.capture-failed`.
 * +  Deliveries are queryable (`GET …/deliveries`: status, attempts with response codes, filters, paging) and
 *    replays work over HTTP: one delivery (same webhook id), a time range (paged by cursor; also events from before
 *    the subscription existed).
 *
 * Item 2 (1,000 events, receiver down, kill -9 of the webhooks process): tests/webhooks-distributed.e2e.spec.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WebhookDelivery } from '@switchyard/contracts';
import { runCli, signToken, createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import request from 'supertest';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';
import { sleep, verifiesWith, WebhookReceiver, type ReceivedWebhook } from './webhooks.receiver';

const ACCOUNT_HEADER = 'x-service-merchant-account-id';
const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const RETRY_BASE_MS = 40;
const RETRY_MAX_MS = 160;

let fixture: EmbeddedFixture;
let baseUrl: string;
let token: string;
const receivers: WebhookReceiver[] = [];
const tmp = createTestDataDir('webhooks-int');

beforeAll(async () => {
  fixture = await startEmbeddedFixture(
    'webhooks',
    {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
      WEBHOOK_RETRY_MAX_MS: String(RETRY_MAX_MS),
      WEBHOOK_WORKER_INTERVAL_MS: '20',
      WEBHOOK_TIMEOUT_MS: '2000',
      POLL_INTERVAL_MS: '20',
    },
    { listen: true },
  );
  const address = fixture.service.gateway.app.getHttpServer().address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
  const admin = await fixture.service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    { kind: 'operator' },
  );
  token = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key!, expiresIn: 3600 });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.down();
  await fixture?.stop();
  removeTestDataDir(tmp);
});

// ---- HTTP helpers -------------------------------------------------------------------------------------------------

const http = () => request(baseUrl);
const headers = (account?: string) => ({
  authorization: `Bearer ${token}`,
  ...(account ? { [ACCOUNT_HEADER]: account } : {}),
});
const get = (account: string, route: string) => http().get(route).set(headers(account));
const post = (account: string, route: string, body?: object, extra: Record<string, string> = {}) => {
  const req = http().post(route).set(headers(account)).set(extra);
  return body === undefined ? req : req.send(body);
};

async function newReceiver(): Promise<WebhookReceiver> {
  const receiver = await new WebhookReceiver().up();
  receivers.push(receiver);
  return receiver;
}

async function accountWithConnection(id: string, settings: object = {}): Promise<void> {
  await http()
    .post('/merchant-accounts')
    .set(headers())
    .send({ id, display_name: `Webhooks ${id}`, ...settings })
    .expect(201);
  await post(id, '/payment-services', {
    display_name: 'Card simulator',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: `sim-${id}` }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  }).expect(201);
}

async function subscribe(account: string, body: object): Promise<{ id: string }> {
  return (await post(account, '/webhook-subscriptions', body).expect(201)).body;
}

async function newSecret(account: string, subscriptionId: string): Promise<{ id: string; secret: string }> {
  const created = (await post(account, `/webhook-subscriptions/${subscriptionId}/secrets`).expect(201)).body;
  expect(created).toMatchObject({
    type: 'webhook-secret',
    subscription_id: subscriptionId,
    active: true,
    revoked_at: null,
    secret: expect.stringMatching(/^whsec_/),
  });
  return created;
}

async function authorize(account: string, body: object = {}): Promise<{ id: string; status: string }> {
  const response = await post(account, '/transactions', {
    amount: 1_000,
    currency: 'USD',
    payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
    ...body,
  });
  if (response.status !== 201) throw new Error(`POST /transactions answered ${response.status}: ${response.text}`);
  return response.body;
}

const deliveries = async (account: string, subscriptionId: string, query: Record<string, string | number> = {}) =>
  (
    await get(account, `/webhook-subscriptions/${subscriptionId}/deliveries`)
      .query({ limit: 100, ...query })
      .expect(200)
  ).body as {
    items: WebhookDelivery[];
    next_cursor: string | null;
    previous_cursor: string | null;
    limit: number;
  };

const delivery = async (account: string, subscriptionId: string, deliveryId: string) =>
  (await get(account, `/webhook-subscriptions/${subscriptionId}/deliveries/${deliveryId}`).expect(200))
    .body as WebhookDelivery;

/** Polls until `probe` answers something; fails with the last value after `timeoutMs`. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const names = (requests: readonly ReceivedWebhook[]) => requests.map((r) => r.event.name);
const firstSuccessPerWebhook = (requests: readonly ReceivedWebhook[]) => {
  const seen = new Set<string>();
  return requests.filter(
    (r) =>
      r.answered !== null && r.answered >= 200 && r.answered < 300 && !seen.has(r.webhookId) && seen.add(r.webhookId),
  );
};

// ---- 1. retries -------------------------------------------------------------------------------------------------

describe('1. a receiver that fails the first 3 attempts, then answers 2xx', () => {
  const account = 'wh-retry';
  let receiver: WebhookReceiver;
  let subscriptionId: string;
  let secrets: { id: string; secret: string }[];

  beforeAll(async () => {
    await accountWithConnection(account);
    receiver = await newReceiver();
    subscriptionId = (
      await subscribe(account, {
        url: receiver.url,
        event_names: ['transaction.authorized'],
        basic_auth: { username: 'hook', password: 'p4ssw0rd' },
      })
    ).id;
    secrets = [await newSecret(account, subscriptionId), await newSecret(account, subscriptionId)];
  });

  it('gets the event exactly once as a success: 4 attempts, one webhook id, the same bytes, both active secrets signing each', async () => {
    const failures = [500, 302, 503];
    receiver.answer = (r) => failures[r.index] ?? 200;
    const t = await authorize(account);

    await receiver.waitFor('a 2xx answer', () => receiver.succeeded.length === 1, 5_000);
    const webhookId = receiver.requests[0]!.webhookId;
    // Nothing more comes once it succeeded: the delivery is settled, and a later event's webhook arrives with no
    // further attempt of this one before it (counted, not timed).
    await eventually('the delivery settled', async () => {
      const settled = await delivery(account, subscriptionId, webhookId);
      return settled.status === 'succeeded' ? settled : undefined;
    });
    const later = await authorize(account);
    await receiver.waitFor("the later event's webhook", () => receiver.succeeded.length === 2, 5_000);
    expect(receiver.requests.at(-1)!.event.target).toMatchObject({ id: later.id });
    const all = receiver.requests.filter((r) => r.webhookId === webhookId);
    expect(receiver.requests).toHaveLength(all.length + 1);
    expect(all.map((r) => r.answered)).toEqual([500, 302, 503, 200]);
    expect(new Set(all.map((r) => r.webhookId)).size).toBe(1);
    expect(new Set(all.map((r) => r.rawBody)).size).toBe(1);
    expect(webhookId).not.toBe('');
    const listed = await delivery(account, subscriptionId, webhookId);

    for (const [index, r] of all.entries()) {
      expect(r.path).toBe('/hooks');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from('hook:p4ssw0rd').toString('base64')}`);
      expect(r.signatures).toHaveLength(2);
      for (const signature of r.signatures) expect(signature).toMatch(/^[0-9a-f]{64}$/);
      // Each active secret verifies on its own; another one does not.
      for (const { secret } of secrets)
        expect(verifiesWith(r, secret)).toEqual({ ok: true, webhookId, timestamp: r.timestamp });
      expect(verifiesWith(r, 'whsec_not_ours')).toEqual({ ok: false, reason: 'no_matching_signature' });
      // Signed at the time the attempt was made, by the service's own record of it.
      expect(r.timestamp).toBe(Math.floor(Date.parse(listed.attempts[index]!.attempted_at) / 1000));
    }
    // Retries come later, with a backoff: each attempt at least the jittered nominal wait (base 40 ms, doubling,
    // capped at 160, -20 %) after the one before, by the service's own timestamps.
    const attemptedAt = listed.attempts.map((attempt) => Date.parse(attempt.attempted_at));
    for (let i = 1; i < attemptedAt.length; i += 1) {
      const nominal = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (i - 1));
      const waited = attemptedAt[i]! - attemptedAt[i - 1]!;
      expect(waited, `wait before attempt ${i + 1}`).toBeGreaterThanOrEqual(Math.floor(nominal * 0.8));
    }

    const current = (await get(account, `/transactions/${t.id}`).expect(200)).body;
    const event = all[0]!.event;
    expect(event).toEqual({
      type: 'event',
      id: expect.any(String),
      name: 'transaction.authorized',
      created_at: expect.stringMatching(isoMs),
      merchant_account_id: account,
      target: expect.objectContaining({
        type: 'transaction',
        id: t.id,
        status: 'authorization_succeeded',
        merchant_account_id: account,
      }),
    });
    const { updated_at: _u1, ...target } = event.target as Record<string, unknown>;
    const { updated_at: _u2, ...now } = current;
    expect(target).toEqual(now);

    expect(listed).toMatchObject({
      type: 'webhook-delivery',
      id: webhookId,
      subscription_id: subscriptionId,
      event_id: event.id,
      event_name: 'transaction.authorized',
      resource_id: t.id,
      status: 'succeeded',
      next_attempt_at: null,
    });
    expect(listed.attempts.map((attempt) => attempt.response_status)).toEqual([500, 302, 503, 200]);
    expect(
      listed.attempts.every(
        (attempt) => attempt.error === null && attempt.duration_ms >= 0 && isoMs.test(attempt.attempted_at),
      ),
    ).toBe(true);
  });
});

// ---- 3. secrets: revocation, and the timestamp tolerance ------------------------------------------------------------

describe('3. signing secrets: a revoked secret signs nothing more; a replayed request is refused', () => {
  const account = 'wh-secrets';
  let receiver: WebhookReceiver;
  let subscriptionId: string;
  let oldSecret: { id: string; secret: string };
  let newSecretValue: { id: string; secret: string };

  beforeAll(async () => {
    await accountWithConnection(account);
    receiver = await newReceiver();
    subscriptionId = (await subscribe(account, { url: receiver.url, event_names: ['transaction.authorized'] })).id;
    oldSecret = await newSecret(account, subscriptionId);
    newSecretValue = await newSecret(account, subscriptionId);
  });

  it('revoking during a rotation: the retry of a delivery already under way, and every later delivery, carry only the active secret', async () => {
    receiver.answer = () => 500;
    const first = await authorize(account);
    await receiver.waitFor('a first failed attempt', () => receiver.requests.length >= 1, 5_000);
    expect(receiver.requests[0]!.signatures).toHaveLength(2);
    expect(verifiesWith(receiver.requests[0]!, oldSecret.secret).ok).toBe(true);
    expect(verifiesWith(receiver.requests[0]!, newSecretValue.secret).ok).toBe(true);

    await http()
      .delete(`/webhook-subscriptions/${subscriptionId}/secrets/${oldSecret.id}`)
      .set(headers(account))
      .expect(204);
    // One more attempt may have been signed just before the revocation (in flight): it fails too; the ones after
    // it were all signed after the revocation, and the first of them is accepted.
    const boundary = receiver.requests.length;
    receiver.answer = (r) => (r.index > boundary ? 200 : 500);
    await receiver.waitFor('the delivery to succeed', () => receiver.succeeded.length === 1, 5_000);

    const after = receiver.requests.slice(boundary + 1);
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(receiver.requests.map((r) => r.webhookId)).size).toBe(1);
    for (const r of after) {
      expect(r.event.target).toMatchObject({ id: first.id });
      expect(r.signatures).toHaveLength(1);
      expect(verifiesWith(r, newSecretValue.secret).ok).toBe(true);
      expect(verifiesWith(r, oldSecret.secret)).toEqual({ ok: false, reason: 'no_matching_signature' });
    }
    expect(receiver.succeeded[0]!.signatures).toHaveLength(1);
    // Whatever was signed when, every attempt verifies with the secret that stayed.
    expect(receiver.requests.every((r) => verifiesWith(r, newSecretValue.secret).ok)).toBe(true);

    // A new event: signed by the new secret only.
    const second = await authorize(account);
    await receiver.waitFor('the second event', () => receiver.succeeded.length === 2, 5_000);
    const secondRequest = receiver.succeeded[1]!;
    expect(secondRequest.event.target).toMatchObject({ id: second.id });
    expect(secondRequest.signatures).toHaveLength(1);
    expect(verifiesWith(secondRequest, newSecretValue.secret).ok).toBe(true);
    expect(verifiesWith(secondRequest, oldSecret.secret)).toEqual({ ok: false, reason: 'no_matching_signature' });

    const listed = (await get(account, `/webhook-subscriptions/${subscriptionId}/secrets`).expect(200)).body
      .items as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      expect.objectContaining({
        id: oldSecret.id,
        active: false,
        secret: null,
        masked: `••••${oldSecret.secret.slice(-4)}`,
        revoked_at: expect.any(String),
      }),
      expect.objectContaining({ id: newSecretValue.id, active: true, secret: null, revoked_at: null }),
    ]);
  });

  it('verifyWebhook refuses a captured request replayed beyond the tolerance, and the CLI agrees', async () => {
    const captured = receiver.succeeded.at(-1)!;
    const at = (seconds: number) => () => new Date((captured.timestamp + seconds) * 1000);
    expect(verifiesWith(captured, newSecretValue.secret, { now: at(299) }).ok).toBe(true);
    expect(verifiesWith(captured, newSecretValue.secret, { now: at(301) })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifiesWith(captured, newSecretValue.secret, { now: at(-301) })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifiesWith(captured, newSecretValue.secret, { now: at(3_600), toleranceSeconds: 7_200 }).ok).toBe(true);
    // A replay cannot be refreshed: a new timestamp breaks the signature.
    const refreshed = {
      raw: captured.raw,
      headers: { ...captured.headers, 'x-service-webhook-timestamp': String(Math.floor(Date.now() / 1000) + 1) },
    };
    expect(verifiesWith(refreshed, newSecretValue.secret)).toEqual({ ok: false, reason: 'no_matching_signature' });

    // The CLI, on the bytes and headers as received.
    const bodyFile = path.join(tmp, 'captured.json');
    fs.writeFileSync(bodyFile, captured.raw);
    const headerArgs = ['x-service-webhook-id', 'x-service-webhook-timestamp', 'x-service-webhook-signatures'].flatMap(
      (name) => ['--header', `${name}: ${String(captured.headers[name])}`],
    );
    const verify = (...args: string[]) =>
      runCli({}, 'webhooks', 'verify', '--body-file', bodyFile, ...headerArgs, ...args);
    // At least one second old, so a tolerance of 0 s refuses it as a replay.
    while (Math.floor(Date.now() / 1000) <= captured.timestamp) await sleep(50);
    const [valid, revoked, replayed] = await Promise.all([
      verify('--secret', newSecretValue.secret),
      verify('--secret', oldSecret.secret),
      verify('--secret', newSecretValue.secret, '--tolerance-seconds', '0'),
    ]);
    expect(valid).toEqual({ code: 0, stdout: `valid (webhook id ${captured.webhookId})\n`, stderr: '' });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toMatch(/^invalid: no_matching_signature/);
    expect(replayed.code).toBe(1);
    expect(replayed.stderr).toMatch(/^invalid: stale_timestamp \(signed at .* s ago, beyond the tolerance of 0 s/);
  });

  it('with every secret revoked, deliveries go unsigned (no secret verifies them)', async () => {
    await http()
      .delete(`/webhook-subscriptions/${subscriptionId}/secrets/${newSecretValue.id}`)
      .set(headers(account))
      .expect(204);
    const before = receiver.succeeded.length;
    const t = await authorize(account);
    await receiver.waitFor('the unsigned delivery', () => receiver.succeeded.length === before + 1, 5_000);
    const unsigned = receiver.succeeded.at(-1)!;
    expect(unsigned.event.target).toMatchObject({ id: t.id });
    expect(unsigned.signatures).toEqual([]);
    expect(verifiesWith(unsigned, newSecretValue.secret).ok).toBe(false);
    expect(verifiesWith(unsigned, oldSecret.secret).ok).toBe(false);
  });
});

// ---- 4. captures: the capture event AND the transaction event ---------------------------------------------------------

describe('4. captures of a multi-capture transaction are announced for the capture and for the transaction', () => {
  const account = 'wh-multi';
  let receiver: WebhookReceiver;
  let secret: string;
  const preferCapture = { Prefer: 'resource=transaction-capture' };

  beforeAll(async () => {
    await accountWithConnection(account, { multiple_captures_enabled: true });
    receiver = await newReceiver();
    const subscriptionId = (await subscribe(account, { url: receiver.url })).id;
    secret = (await newSecret(account, subscriptionId)).secret;
  });

  /** The requests about one transaction (its own events and its captures'), first success per webhook id, in arrival order. */
  const ofTransaction = (id: string) =>
    firstSuccessPerWebhook(receiver.requests).filter(
      (r) => r.event.target.id === id || (r.event.target as { transaction_id?: string }).transaction_id === id,
    );

  it('two captures: capture.pending + transaction.capture-pending, then capture.succeeded + transaction.captured, for each', async () => {
    const t = await authorize(account, { amount: 100 });
    await receiver.waitFor('transaction.authorized', () => ofTransaction(t.id).length === 1, 5_000);

    const first = (await post(account, `/transactions/${t.id}/capture`, { amount: 30 }, preferCapture).expect(200))
      .body;
    expect(first).toMatchObject({ status: 'succeeded', final: false });
    await receiver.waitFor('the first capture announced', () => ofTransaction(t.id).length === 5, 5_000);
    const second = (
      await post(account, `/transactions/${t.id}/capture`, { amount: 20, final: true }, preferCapture).expect(200)
    ).body;
    expect(second).toMatchObject({ status: 'succeeded', final: true });
    await receiver.waitFor('the second capture announced', () => ofTransaction(t.id).length === 9, 5_000);
    await sleep(100);

    const got = ofTransaction(t.id);
    expect(names(got)).toEqual([
      'transaction.authorized',
      'capture.pending',
      'transaction.capture-pending',
      'capture.succeeded',
      'transaction.captured',
      'capture.pending',
      'transaction.capture-pending',
      'capture.succeeded',
      'transaction.captured',
    ]);
    // One delivery per (event, name): no duplicates, each signed.
    expect(new Set(got.map((r) => r.webhookId)).size).toBe(9);
    expect(receiver.requests.filter((r) => got.some((g) => g.webhookId === r.webhookId))).toHaveLength(9);
    for (const r of got) {
      expect(verifiesWith(r, secret).ok).toBe(true);
      expect(r.event).toMatchObject({
        type: 'event',
        merchant_account_id: account,
        created_at: expect.stringMatching(isoMs),
      });
    }
    // Created in order.
    const times = got.map((r) => Date.parse(r.event.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    for (const [offset, capture, capturedAmount] of [
      [1, first, 30],
      [5, second, 50],
    ] as const) {
      const [pending, transactionPending, succeeded, captured] = got.slice(offset, offset + 4) as [
        ReceivedWebhook,
        ReceivedWebhook,
        ReceivedWebhook,
        ReceivedWebhook,
      ];
      // Two names of one stored event: the same event id and time, two webhook ids.
      expect(pending.event.id).toBe(transactionPending.event.id);
      expect(succeeded.event.id).toBe(captured.event.id);
      expect(succeeded.event.created_at).toBe(captured.event.created_at);
      expect(succeeded.webhookId).not.toBe(captured.webhookId);
      expect(pending.event.id).not.toBe(succeeded.event.id);
      expect(pending.event.target).toMatchObject({
        type: 'transaction-capture',
        id: capture.id,
        transaction_id: t.id,
        amount: capture.amount,
      });
      expect(transactionPending.event.target).toMatchObject({ type: 'transaction', id: t.id });
      expect(succeeded.event.target).toMatchObject({
        type: 'transaction-capture',
        id: capture.id,
        transaction_id: t.id,
        status: 'succeeded',
        amount: capture.amount,
        final: capture.final,
      });
      expect(captured.event.target).toMatchObject({
        type: 'transaction',
        id: t.id,
        status: 'capture_succeeded',
        captured_amount: capturedAmount,
      });
      const {
        transaction: _t,
        updated_at: _u,
        ...captureNow
      } = (await get(account, `/transactions/${t.id}/captures/${capture.id}`).expect(200)).body;
      expect(succeeded.event.target).toMatchObject(captureNow);
    }
  });

  it('a declined capture (500007): capture.declined + transaction.capture-failed, of one stored event', async () => {
    const t = await authorize(account, { amount: 500_007 });
    const declined = (await post(account, `/transactions/${t.id}/capture`, {}, preferCapture).expect(200)).body;
    expect(declined).toMatchObject({ type: 'transaction-capture', status: 'declined', code: 'expired_authorization' });
    await receiver.waitFor('the declined capture announced', () => ofTransaction(t.id).length === 5, 5_000);
    await sleep(100);
    const got = ofTransaction(t.id);
    expect(names(got)).toEqual([
      'transaction.authorized',
      'capture.pending',
      'transaction.capture-pending',
      'capture.declined',
      'transaction.capture-failed',
    ]);
    const [, , , captureDeclined, captureFailed] = got as [
      ReceivedWebhook,
      ReceivedWebhook,
      ReceivedWebhook,
      ReceivedWebhook,
      ReceivedWebhook,
    ];
    expect(captureDeclined.event.id).toBe(captureFailed.event.id);
    expect(captureDeclined.webhookId).not.toBe(captureFailed.webhookId);
    expect(captureDeclined.event.target).toMatchObject({
      type: 'transaction-capture',
      id: declined.id,
      transaction_id: t.id,
      status: 'declined',
      code: 'expired_authorization',
    });
    expect(captureFailed.event.target).toMatchObject({
      type: 'transaction',
      id: t.id,
      status: 'authorization_succeeded',
      captured_amount: 0,
    });
    for (const r of got) expect(verifiesWith(r, secret).ok).toBe(true);
  });

  it('an intent: capture transaction: transaction.authorized, transaction.captured and capture.succeeded of its one event', async () => {
    const t = await authorize(account, { amount: 700, intent: 'capture' });
    expect(t.status).toBe('capture_succeeded');
    await receiver.waitFor('the direct capture announced', () => ofTransaction(t.id).length === 3, 5_000);
    const got = ofTransaction(t.id);
    expect(names(got)).toEqual(['transaction.authorized', 'transaction.captured', 'capture.succeeded']);
    expect(new Set(got.map((r) => r.event.id)).size).toBe(1);
    expect(got[2]!.event.target).toMatchObject({
      type: 'transaction-capture',
      id: t.id,
      transaction_id: t.id,
      status: 'succeeded',
      amount: 700,
    });
  });
});

// ---- deliveries over HTTP, and replays ---------------------------------------------------------------------------------

describe('deliveries are queryable over HTTP, and replays work', () => {
  const account = 'wh-replay';
  let receiver: WebhookReceiver;
  let subscriptionId: string;
  let secret: string;
  let transactionId: string;
  let firstDelivery: WebhookDelivery;
  let startedAt: string;

  beforeAll(async () => {
    await accountWithConnection(account, { multiple_captures_enabled: true });
    receiver = await newReceiver();
    subscriptionId = (await subscribe(account, { url: receiver.url })).id;
    secret = (await newSecret(account, subscriptionId)).secret;
    startedAt = new Date(Date.now() - 1_000).toISOString();
  });

  it('a failing delivery is listed as retrying with its attempts, then as succeeded; filters and paging', async () => {
    let accepting = false;
    receiver.answer = () => (accepting ? 204 : 500);
    transactionId = (await authorize(account)).id;

    const retrying = await eventually('a retrying delivery with 2 attempts', async () => {
      const page = await deliveries(account, subscriptionId, { status: 'retrying' });
      return page.items.length === 1 && page.items[0]!.attempts.length >= 2 ? page.items[0]! : undefined;
    });
    expect(retrying).toMatchObject({
      type: 'webhook-delivery',
      subscription_id: subscriptionId,
      event_name: 'transaction.authorized',
      resource_id: transactionId,
      status: 'retrying',
    });
    expect(retrying.next_attempt_at).toMatch(isoMs);
    expect(retrying.attempts.every((attempt) => attempt.response_status === 500 && attempt.error === null)).toBe(true);
    expect((await deliveries(account, subscriptionId, { status: 'succeeded' })).items).toEqual([]);

    accepting = true;
    firstDelivery = await eventually('the delivery succeeded', async () => {
      const found = await delivery(account, subscriptionId, retrying.id);
      return found.status === 'succeeded' ? found : undefined;
    });
    const codes = firstDelivery.attempts.map((attempt) => attempt.response_status);
    expect(codes.at(-1)).toBe(204);
    expect(codes.slice(0, -1).every((code) => code === 500)).toBe(true);
    expect(codes.length).toBeGreaterThanOrEqual(3);
    expect(firstDelivery.next_attempt_at).toBeNull();
    expect(receiver.of(retrying.id).map((r) => r.answered)).toEqual(codes);

    // More deliveries: two captures (4 names each).
    await post(account, `/transactions/${transactionId}/capture`, { amount: 300 }).expect(200);
    await post(account, `/transactions/${transactionId}/capture`, { amount: 200 }).expect(200);
    await receiver.waitFor(
      '9 deliveries succeeded',
      () => firstSuccessPerWebhook(receiver.requests).length === 9,
      5_000,
    );

    const all = await deliveries(account, subscriptionId);
    expect(all.items).toHaveLength(9);
    expect(all.items.every((item) => item.status === 'succeeded')).toBe(true);
    // Newest first.
    expect(all.items.at(-1)!.id).toBe(firstDelivery.id);
    expect(all.items.map((item) => item.event_name)).toEqual([
      'transaction.captured',
      'capture.succeeded',
      'transaction.capture-pending',
      'capture.pending',
      'transaction.captured',
      'capture.succeeded',
      'transaction.capture-pending',
      'capture.pending',
      'transaction.authorized',
    ]);
    const byName = await deliveries(account, subscriptionId, { event_name: 'capture.succeeded' });
    expect(byName.items.map((item) => item.event_name)).toEqual(['capture.succeeded', 'capture.succeeded']);
    expect((await deliveries(account, subscriptionId, { event_name: 'refund.succeeded' })).items).toEqual([]);
    expect((await deliveries(account, subscriptionId, { status: 'failed' })).items).toEqual([]);
    await get(account, `/webhook-subscriptions/${subscriptionId}/deliveries`).query({ status: 'nope' }).expect(422);
    await get(account, `/webhook-subscriptions/${subscriptionId}/deliveries/not-a-delivery`).expect(404);
    // Another merchant account does not see the subscription nor its deliveries.
    await get('wh-retry', `/webhook-subscriptions/${subscriptionId}/deliveries`).expect(404);
    await get('wh-retry', `/webhook-subscriptions/${subscriptionId}/deliveries/${firstDelivery.id}`).expect(404);

    // Paging: 4 + 4 + 1, then back.
    const page1 = await deliveries(account, subscriptionId, { limit: 4 });
    const page2 = await deliveries(account, subscriptionId, { limit: 4, cursor: page1.next_cursor! });
    const page3 = await deliveries(account, subscriptionId, { limit: 4, cursor: page2.next_cursor! });
    expect([...page1.items, ...page2.items, ...page3.items].map((item) => item.id)).toEqual(
      all.items.map((item) => item.id),
    );
    expect(page3.next_cursor).toBeNull();
    const back = await deliveries(account, subscriptionId, { limit: 4, cursor: page2.previous_cursor! });
    expect(back.items.map((item) => item.id)).toEqual(page1.items.map((item) => item.id));
  });

  it('replays one delivery: now, under its own webhook id, the same bytes, freshly signed; the attempt is recorded', async () => {
    const before = receiver.of(firstDelivery.id);
    const replayed = (
      await post(account, `/webhook-subscriptions/${subscriptionId}/deliveries/${firstDelivery.id}/replay`).expect(200)
    ).body as WebhookDelivery;
    expect(replayed).toMatchObject({ id: firstDelivery.id, status: 'pending', event_id: firstDelivery.event_id });
    await receiver.waitFor(
      'the replayed delivery',
      () => receiver.of(firstDelivery.id).length === before.length + 1,
      5_000,
    );
    const again = receiver.of(firstDelivery.id).at(-1)!;
    expect(again.rawBody).toBe(before[0]!.rawBody);
    expect(again.answered).toBe(204);
    expect(verifiesWith(again, secret).ok).toBe(true);
    const after = await eventually('the replay recorded', async () => {
      const found = await delivery(account, subscriptionId, firstDelivery.id);
      return found.status === 'succeeded' && found.attempts.length === firstDelivery.attempts.length + 1
        ? found
        : undefined;
    });
    expect(after.attempts.at(-1)!.response_status).toBe(204);
    await post(account, `/webhook-subscriptions/${subscriptionId}/deliveries/not-a-delivery/replay`).expect(404);
  });

  it('replays a time range, `limit` at a time, by cursor: every delivery of the range again, each under its webhook id', async () => {
    const all = (await deliveries(account, subscriptionId)).items;
    const countsBefore = new Map(all.map((item) => [item.id, receiver.of(item.id).length]));
    const range = { from: startedAt, to: new Date(Date.now() + 1_000).toISOString() };

    let cursor: string | null = null;
    let scheduled = 0;
    let calls = 0;
    do {
      const answer: { scheduled: number; next_cursor: string | null } = (
        await post(account, `/webhook-subscriptions/${subscriptionId}/replay`, {
          ...range,
          limit: 4,
          ...(cursor ? { cursor } : {}),
        }).expect(200)
      ).body;
      expect(answer).toMatchObject({ type: 'webhook-replay', scheduled: expect.any(Number) });
      scheduled += answer.scheduled;
      cursor = answer.next_cursor;
      calls += 1;
    } while (cursor !== null && calls < 10);
    expect(scheduled).toBe(9);
    expect(calls).toBe(3);
    await receiver.waitFor(
      'every delivery of the range again',
      () => all.every((item) => receiver.of(item.id).length === countsBefore.get(item.id)! + 1),
      5_000,
    );
    // No new webhook ids: the same deliveries again.
    const ids = new Set(receiver.requests.map((r) => r.webhookId));
    expect(ids.size).toBe(9);

    // A range before anything happened schedules nothing; from after to is refused.
    const empty = (
      await post(account, `/webhook-subscriptions/${subscriptionId}/replay`, {
        from: '2000-01-01T00:00:00Z',
        to: '2000-01-02T00:00:00Z',
      }).expect(200)
    ).body;
    expect(empty).toEqual({ type: 'webhook-replay', scheduled: 0, next_cursor: null });
    await post(account, `/webhook-subscriptions/${subscriptionId}/replay`, { from: range.to, to: range.from }).expect(
      400,
    );
  });

  it('a range replay delivers events from before the subscription existed, to a new subscription', async () => {
    const late = await newReceiver();
    const lateId = (
      await subscribe(account, { url: late.url, event_names: ['transaction.authorized', 'capture.succeeded'] })
    ).id;
    expect((await deliveries(account, lateId)).items).toEqual([]);
    const answer = (
      await post(account, `/webhook-subscriptions/${lateId}/replay`, {
        from: startedAt,
        to: new Date().toISOString(),
      }).expect(200)
    ).body;
    expect(answer).toEqual({ type: 'webhook-replay', scheduled: 3, next_cursor: null });
    await late.waitFor('3 deliveries', () => late.succeeded.length === 3, 5_000);
    expect(names(late.succeeded)).toEqual(['transaction.authorized', 'capture.succeeded', 'capture.succeeded']);
    expect(
      late.succeeded.every(
        (r) =>
          r.event.target.id === transactionId ||
          (r.event.target as { transaction_id?: string }).transaction_id === transactionId,
      ),
    ).toBe(true);
    const listed = (await deliveries(account, lateId)).items;
    expect(listed).toHaveLength(3);
    expect(listed.every((item) => item.status === 'succeeded' && item.attempts.length === 1)).toBe(true);
    // New deliveries of the new subscription: their own webhook ids.
    expect(late.succeeded.every((r) => receiver.of(r.webhookId).length === 0)).toBe(true);
  });
});
