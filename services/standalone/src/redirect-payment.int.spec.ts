/**
 * Issue 5, "Redirect payment methods" and "Provider notifications" over HTTP: a PayPal-like wallet at the simulator.
 * `method` and `redirect_url` in, `approval_url` out, `integration_client` stored; the buyer approves (or cancels)
 * on the provider's page and comes back through Switchyard to the merchant; the final status arrives only by the
 * provider's signed notification. An abandoned approval ends after the hold window (`incomplete_buyer_approval`).
 */
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'wallet';
let connection: string;
const redirectUrl = 'https://shop.example/paypal/return';

beforeAll(async () => {
  h = await startHarness('redirect-payment', { settleDelayMs: 20, env: { BUYER_APPROVAL_WINDOW_MS: '1500' } });
  await h.createAccount(account);
  connection = await h.createConnection(account, {
    display_name: 'PayPal',
    payment_service_definition_id: 'mock-paypal',
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
});

afterAll(async () => {
  await h.stop();
});

const paypal = { method: 'paypal', country: 'US', currency: 'USD', redirect_url: redirectUrl };

async function decide(approvalUrl: string, decision: 'approve' | 'cancel'): Promise<URL> {
  const page = await fetch(approvalUrl);
  expect(page.status).toBe(200);
  expect(await page.text()).toMatch(/<form/i);
  const submitted = await fetch(approvalUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `decision=${decision}`,
    redirect: 'manual',
  });
  expect(submitted.status).toBe(303);
  const back = await fetch(submitted.headers.get('location') ?? '', { redirect: 'manual' });
  expect(back.status).toBe(303);
  return new URL(back.headers.get('location') ?? '');
}

it('shows the connection its notification endpoint, to configure at the provider', async () => {
  const shown = await h.http().get(`/payment-services/${connection}`).set(h.headers(account)).expect(200);
  expect(shown.body).toMatchObject({
    method: 'paypal',
    webhook_url: `${h.baseUrl}/payment-services/${connection}/notifications`,
  });
});

it('approves a wallet payment: buyer_approval_pending with approval_url, then authorized by the provider notification', async () => {
  const created = await h.authorize(account, {
    currency: 'USD',
    country: 'US',
    integration_client: 'web',
    payment_method: paypal,
  });
  expect(created).toMatchObject({
    status: 'buyer_approval_pending',
    method: 'paypal',
    integration_client: 'web',
    redirect_url: redirectUrl,
    payment_method: { method: 'paypal', mode: 'redirect', approval_url: expect.stringMatching(/\/v1\/approvals\//) },
    payment_service: { id: connection, method: 'paypal' },
  });
  const back = await decide((created.payment_method as { approval_url: string }).approval_url, 'approve');
  expect(`${back.origin}${back.pathname}`).toBe(redirectUrl);
  expect(back.searchParams.get('transaction_id')).toBe(created.id);
  const authorized = await h.waitFor(account, created.id, (t) => t.status === 'authorization_succeeded');
  expect(authorized).toMatchObject({ authorized_amount: 10_000, payment_method: { approval_url: null } });
  const captured = await h
    .http()
    .post(`/transactions/${created.id}/capture`)
    .set(h.headers(account))
    .send({})
    .expect(200);
  expect(captured.body.status).toBe('capture_succeeded');
});

it('declines a wallet payment the buyer cancelled (cancelled_buyer_approval), by notification', async () => {
  const created = await h.authorize(account, { payment_method: paypal });
  await decide((created.payment_method as { approval_url: string }).approval_url, 'cancel');
  const declined = await h.waitFor(account, created.id, (t) => t.status === 'authorization_declined');
  expect(declined.error_code).toBe('cancelled_buyer_approval');
});

it('ends an abandoned approval after the hold window (incomplete_buyer_approval)', async () => {
  const created = await h.authorize(account, { payment_method: paypal });
  const abandoned = await h.waitFor(account, created.id, (t) => t.status === 'authorization_failed', 10_000);
  expect(abandoned).toMatchObject({
    error_code: 'incomplete_buyer_approval',
    buyer_approval_timedout_at: expect.any(String),
  });
});

it('refuses a redirect method no connection takes, and a card on the wallet connection', async () => {
  const klarna = await h
    .http()
    .post('/transactions')
    .set(h.headers(account))
    .send({ amount: 100, currency: 'USD', payment_method: { ...paypal, method: 'klarna' } })
    .expect(400);
  expect(klarna.body.details[0]).toMatchObject({ type: 'no_payment_service' });
  const card = await h
    .http()
    .post('/transactions')
    .set(h.headers(account))
    .send({
      amount: 100,
      currency: 'USD',
      payment_service_id: connection,
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
    })
    .expect(400);
  expect(card.body.details[0]).toMatchObject({ type: 'payment_method_not_supported' });
});
