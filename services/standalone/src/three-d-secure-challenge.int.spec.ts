/**
 * Issue 5 acceptance, "challenge walk": without a browser, over HTTP — create → buyer_approval_pending → follow
 * approval_url (the simulator's ACS page) → complete the challenge → back through Switchyard's return endpoint to
 * the merchant's redirect_url → authorization_succeeded. In the same test the notification-hold rule: a failure
 * notified while the buyer is away is held, then applied when the buyer returns, and nothing succeeds after it.
 */
import { eventIdHeader, signatureHeader, signNotification } from '@switchyard/connectors';
import { HARNESS_WEBHOOK_SECRET, startHarness, THREE_DS_PANS, type Harness } from './transactions.harness';

let h: Harness;
const account = 'tds-challenge';
let connection: string;
const redirectUrl = 'https://shop.example/checkout/return?order=42';

beforeAll(async () => {
  h = await startHarness('three-d-secure-challenge', { settleDelayMs: 20 });
  await h.createAccount(account);
  await h.createThreeDsConfiguration(account);
  connection = await h.createConnection(account, { three_d_secure_enabled: true });
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

const challengeCard = {
  method: 'card',
  number: THREE_DS_PANS.challengeVisaUS,
  expiration_date: '03/30',
  security_code: '100',
  redirect_url: redirectUrl,
};

/** Follows the ACS page like a browser: GET the form, POST the chosen result, and answer where the ACS redirects. */
async function completeChallenge(approvalUrl: string, result: 'Y' | 'N'): Promise<string> {
  const page = await fetch(approvalUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  const html = await page.text();
  expect(html).toMatch(/<form[^>]+method="post"/i);
  const submitted = await fetch(approvalUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `result=${result}`,
    redirect: 'manual',
  });
  expect(submitted.status).toBe(303);
  return submitted.headers.get('location') ?? '';
}

/** The buyer's browser arriving at Switchyard's return endpoint; answers where Switchyard sends it next. */
async function returnToSwitchyard(returnUrl: string): Promise<URL> {
  expect(returnUrl.startsWith(`${h.baseUrl}/transactions/`)).toBe(true);
  const response = await fetch(returnUrl, { redirect: 'manual' });
  expect(response.status).toBe(303);
  return new URL(response.headers.get('location') ?? '');
}

const names = async (id: string) =>
  (
    (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body.items as {
      context: { event: string };
    }[]
  ).map((item) => item.context.event);

it('walks a challenge to authorization_succeeded, and holds a failure notified during another challenge until its buyer returns', async () => {
  // 1. The walk.
  const created = await h.authorize(account, { payment_service_id: connection, payment_method: challengeCard });
  expect(created).toMatchObject({
    status: 'buyer_approval_pending',
    three_d_secure: null,
    redirect_url: redirectUrl,
    payment_method: { approval_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//) },
  });
  expect(created.approval_expires_at).toEqual(expect.any(String));
  expect(h.simulator.ledger.counts(created.id).authorizations).toBe(0); // no authorization before the challenge

  const returnUrl = await completeChallenge((created.payment_method as { approval_url: string }).approval_url, 'Y');
  const back = await returnToSwitchyard(returnUrl);
  expect(`${back.origin}${back.pathname}`).toBe('https://shop.example/checkout/return');
  expect(Object.fromEntries(back.searchParams)).toEqual({
    order: '42',
    transaction_id: created.id,
    transaction_status: 'authorization_succeeded',
  });

  const done = await h.get(account, created.id);
  expect(done).toMatchObject({
    status: 'authorization_succeeded',
    three_d_secure: {
      status: 'complete',
      method: 'challenge',
      response_data: { authentication_response: 'Y', eci: '05', cavv: expect.any(String) },
    },
    payment_method: { approval_url: null },
    approval_expires_at: null,
    cvv_response_code: 'match', // the security code was kept (in memory only) for the authorization after the challenge
  });
  expect(await names(created.id)).toEqual([
    'TransactionCreated',
    'BuyerApprovalRequired',
    'ThreeDSecureCompleted',
    'AuthorizationSucceeded',
    'CreateRequestCompleted',
  ]);
  // A reload of the return page changes nothing.
  const again = await returnToSwitchyard(returnUrl);
  expect(again.searchParams.get('transaction_status')).toBe('authorization_succeeded');
  expect(await names(created.id)).toHaveLength(5);

  // 2. The hold: a second transaction paused for its challenge gets a failure notification from the payment service.
  const paused = await h.authorize(account, { payment_service_id: connection, payment_method: challengeCard });
  expect(paused.status).toBe('buyer_approval_pending');
  await notifyFailure(paused.id, paused.amount as number);
  const held = await h.get(account, paused.id);
  expect(held.status).toBe('buyer_approval_pending'); // held while the buyer is away
  expect(await names(paused.id)).toContain('FailureNotificationHeld');

  const heldBack = await returnToSwitchyard(
    await completeChallenge((paused.payment_method as { approval_url: string }).approval_url, 'Y'),
  );
  expect(heldBack.searchParams.get('transaction_status')).toBe('authorization_failed');
  const failed = await h.get(account, paused.id);
  expect(failed).toMatchObject({ status: 'authorization_failed', error_code: 'service_error' });
  const events = await names(paused.id);
  expect(events.slice(-2)).toEqual(['CreateRequestCompleted', 'AuthorizationFailed']);
  expect(events).not.toContain('AuthorizationSucceeded');
  expect(h.simulator.ledger.counts(paused.id).authorizations).toBe(0); // the held failure decided: the provider was not asked
});

it('declines a transaction whose buyer fails the challenge (failed_buyer_approval)', async () => {
  const created = await h.authorize(account, { payment_service_id: connection, payment_method: challengeCard });
  const back = await returnToSwitchyard(
    await completeChallenge((created.payment_method as { approval_url: string }).approval_url, 'N'),
  );
  expect(back.searchParams.get('transaction_status')).toBe('authorization_declined');
  expect(await h.get(account, created.id)).toMatchObject({
    status: 'authorization_declined',
    error_code: 'failed_buyer_approval',
    three_d_secure: { status: 'declined', method: 'challenge' },
  });
});

it('fails a challenge without a redirect_url (missing_redirect_url) and refuses a forged return token', async () => {
  const created = await h.authorize(account, {
    payment_service_id: connection,
    payment_method: { ...challengeCard, redirect_url: undefined },
  });
  expect(created).toMatchObject({
    status: 'authorization_failed',
    error_code: 'missing_redirect_url',
    three_d_secure: { status: 'error' },
  });
  const forged = await fetch(`${h.baseUrl}/transactions/${created.id}/buyer-return?token=forged`, {
    redirect: 'manual',
  });
  expect(forged.status).toBe(404);
});

/** A signed `authorization` notification `failed` from the simulator's provider for this transaction. */
async function notifyFailure(id: string, amount: number): Promise<void> {
  const raw = JSON.stringify({
    event_id: `evt-${id}`,
    type: 'authorization',
    sequence: 1,
    occurred_at: new Date().toISOString(),
    reference: id,
    transaction_id: `sim-${id}`,
    status: 'failed',
    amount,
    currency: 'USD',
    error_code: 'service_error',
    raw_response_code: '300013',
    raw_response_description: 'service error',
  });
  const response = await fetch(`${h.baseUrl}/payment-services/${connection}/notifications`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [signatureHeader]: signNotification(HARNESS_WEBHOOK_SECRET, raw, Math.floor(Date.now() / 1000)),
      [eventIdHeader]: `evt-${id}`,
    },
    body: raw,
  });
  expect(response.status).toBe(204);
}
