/**
 * Issue 22, item 10: a provider's success that arrives after we recorded the authorization as failed is recorded and
 * reversed at the provider (voided), shown in `GET /transactions/{id}/events` with its explanation and announced by
 * webhook — never dropped as stale, which would leave the provider holding money we have no record of. Played by the
 * simulator over HTTP: a wallet payment approved by the buyer after the hold window ended, and an authorization that
 * reached the provider after reconciliation had been told "not found" (500013).
 */
import { startHarness, type Harness } from './transactions.harness';
import { WebhookReceiver } from './webhooks.receiver';

let h: Harness;
const account = 'late-success';
const receiver = new WebhookReceiver();
const paypal = { method: 'paypal', country: 'US', currency: 'USD', redirect_url: 'https://shop.example/paypal/return' };

beforeAll(async () => {
  // The wallet's notification comes 2.5 s after the buyer's decision; the hold window is 1 s. 500013 arrives at the
  // provider 1.5 s late; the connector gives up after 300 ms and reconciliation runs after 200 ms.
  h = await startHarness('late-authorization', {
    settleDelayMs: 2_500,
    simulator: { unknownOutcomeDelayMs: 1_500 },
    env: {
      BUYER_APPROVAL_WINDOW_MS: '1000',
      MOCK_CARD_TIMEOUT_MS: '300',
      RECONCILE_AFTER_MS: '200',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '20',
    },
  });
  await h.createAccount(account);
  await h.createConnection(account);
  await h.createConnection(account, {
    display_name: 'PayPal',
    payment_service_definition_id: 'mock-paypal',
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  await receiver.up();
  await h
    .http()
    .post('/webhook-subscriptions')
    .set(h.headers(account))
    .send({ url: receiver.url, merchant_account_id: account })
    .expect(201);
});

afterAll(async () => {
  await receiver.down();
  await h.stop();
});

type HistoryItem = {
  name: string;
  context: {
    event: string;
    status: string;
    explanation: { actor: unknown; payment_service_id: string; provider_response: Record<string, string> | null };
  };
};

async function history(id: string): Promise<HistoryItem[]> {
  return (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body
    .items as HistoryItem[];
}

async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const atProvider = async (id: string) =>
  (await (await fetch(`${h.simulator.url}/v1/authorizations?reference=${id}`)).json()) as {
    status: string;
    id: string;
  };

async function expectReversed(id: string, decidedStatus: string): Promise<void> {
  const items = await eventually(async () => {
    const found = await history(id);
    return found.some((item) => item.context.event === 'LateAuthorizationReversed') ? found : undefined;
  }, `the late authorization of ${id} reversed`);
  const received = items.find((item) => item.context.event === 'LateAuthorizationReceived');
  const provider = await atProvider(id);
  expect(received).toMatchObject({
    name: 'late-authorization-received',
    context: {
      status: decidedStatus,
      explanation: { actor: { type: 'system' }, provider_response: { payment_service_transaction_id: provider.id } },
    },
  });
  expect(items.find((item) => item.context.event === 'LateAuthorizationReversed')).toMatchObject({
    name: 'late-authorization-reversed',
    context: { via: 'void', status: decidedStatus },
  });
  // Voided at the provider: it holds nothing for this payment any more.
  expect(provider.status).toBe('voided');
  // The record keeps the decided failure.
  expect((await h.get(account, id)).status).toBe(decidedStatus);
  const names = await eventually(async () => {
    const sent = receiver.requests
      .filter((request) => request.event.target && (request.event.target as { id?: string }).id === id)
      .map((request) => request.event.name);
    return sent.includes('transaction.late-authorization-reversed') ? sent : undefined;
  }, `the webhooks of ${id}`);
  expect(names).toEqual(
    expect.arrayContaining(['transaction.late-authorization-received', 'transaction.late-authorization-reversed']),
  );
}

it('a wallet payment approved after the hold window ended is voided at the provider, not dropped', async () => {
  const created = await h.authorize(account, { payment_method: paypal });
  expect(created.status).toBe('buyer_approval_pending');
  // The buyer approves at the provider (and closes the browser): the provider authorizes, its notification comes later.
  const approved = await fetch((created.payment_method as { approval_url: string }).approval_url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'decision=approve',
    redirect: 'manual',
  });
  expect(approved.status).toBe(303);
  const failed = await h.waitFor(account, created.id, (t) => t.status === 'authorization_failed', 5_000);
  expect(failed.error_code).toBe('incomplete_buyer_approval');
  await expectReversed(created.id, 'authorization_failed');
});

it('an authorization reaching the provider after reconciliation found nothing is voided there', async () => {
  const created = await h.authorize(account, { amount: 500_013 });
  expect(created.status).toBe('processing');
  const failed = await h.waitFor(account, created.id, (t) => t.status === 'authorization_failed', 5_000);
  expect(failed.error_code).toBe('service_unavailable');
  await expectReversed(created.id, 'authorization_failed');
});
