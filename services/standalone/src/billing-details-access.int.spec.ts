/**
 * `buyers.billing-details.read` is enforced everywhere billing details show (issue 22, item 4): buyers, a
 * transaction's buyer, a payment method's buyer, the dashboard and webhook payloads. An analyst (the role single
 * sign-on falls back to) sees `billing_details: null`; analyst + pii-viewer sees them, tax id included.
 */
import { signToken } from '@switchyard/testing';
import { card, startHarness, ACCOUNT_HEADER, type Harness } from './transactions.harness';
import { WebhookReceiver } from './webhooks.receiver';

const TAX_ID = 'GB987654321';
const billingDetails = {
  first_name: 'Grace',
  last_name: 'Hopper',
  email_address: 'grace@example.com',
  tax_id: { value: TAX_ID, kind: 'gb.vat' },
};
const account = 'pii-shop';
let h: Harness;
let buyerId: string;
let transactionId: string;
let paymentMethodId: string;
const receivers = { full: new WebhookReceiver(), redacted: new WebhookReceiver() };

async function headersOf(roles: string[], scopes = ['*.read', '*.write']): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: roles.join('+'), roles },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600 });
  return { authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account };
}

beforeAll(async () => {
  h = await startHarness('billing-details-access', {
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_WORKER_INTERVAL_MS: '20' },
  });
  await h.createAccount(account);
  await h.createConnection(account);
  for (const receiver of Object.values(receivers)) await receiver.up();
  // One subscription made by a key that reads billing details, one by a system manager, which does not.
  const subscribe = async (headers: Record<string, string>, url: string) =>
    h
      .http()
      .post('/webhook-subscriptions')
      .set(headers)
      .send({ url, event_names: ['transaction.authorized'] })
      .expect(201);
  await subscribe(h.headers(account), receivers.full.url);
  await subscribe(await headersOf(['system-manager']), receivers.redacted.url);

  buyerId = (
    await h
      .http()
      .post('/buyers')
      .set(h.headers(account))
      .send({ display_name: 'Grace', billing_details: billingDetails })
      .expect(201)
  ).body.id;
  paymentMethodId = (
    await h
      .http()
      .post('/payment-methods')
      .set(h.headers(account))
      .send({ ...card(), buyer_id: buyerId })
      .expect(201)
  ).body.id;
  transactionId = (await h.authorize(account, { buyer_id: buyerId, amount: 1500 })).id;
});

afterAll(async () => {
  for (const receiver of Object.values(receivers)) await receiver.down();
  await h?.stop();
});

/** Every place the API shows the buyer's billing details, read with these headers. */
async function billingDetailsSeen(headers: Record<string, string>): Promise<unknown[]> {
  const get = async (url: string) => (await h.http().get(url).set(headers).expect(200)).body;
  const buyer = await get(`/buyers/${buyerId}`);
  const buyers = await get('/buyers');
  const transaction = await get(`/transactions/${transactionId}`);
  const method = await get(`/payment-methods/${paymentMethodId}`);
  return [
    buyer.billing_details,
    buyers.items.find((item: { id: string }) => item.id === buyerId).billing_details,
    transaction.buyer.billing_details,
    method.buyer.billing_details,
  ];
}

describe('over the API', () => {
  it('an analyst key gets billing_details null in buyers, transactions and payment methods', async () => {
    const seen = await billingDetailsSeen(await headersOf(['analyst']));
    expect(seen).toEqual([null, null, null, null]);
  });

  it('analyst + pii-viewer sees them, tax id included; so does a narrower token of an administrator key only with the scope', async () => {
    for (const seen of await billingDetailsSeen(await headersOf(['analyst', 'pii-viewer'])))
      expect(seen).toMatchObject({ tax_id: { value: TAX_ID } });
    const narrow = await billingDetailsSeen(
      await headersOf(['administrator'], ['buyers.read', 'transactions.read', 'payment-methods.read']),
    );
    expect(narrow).toEqual([null, null, null, null]);
  });
});

describe('in the dashboard', () => {
  it('an analyst user sees the transaction without billing details; an analyst + pii-viewer with them', async () => {
    const seenBy = async (roles: string[], email: string) => {
      await h.fixture.service.identity.users.create({
        email,
        display_name: email,
        roles,
        password: 'a long pass phrase',
      });
      const login = await h
        .http()
        .post('/dashboard/api/login')
        .set({ origin: h.baseUrl, 'sec-fetch-site': 'same-origin' })
        .send({ email, password: 'a long pass phrase' })
        .expect(200);
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const page = await h
        .http()
        .get(`/dashboard/api/transactions/${transactionId}`)
        .query({ merchant_account_id: account })
        .set('cookie', cookie)
        .expect(200);
      return page.body;
    };
    const analyst = await seenBy(['analyst'], 'analyst@example.com');
    expect(analyst.transaction.buyer.billing_details).toBeNull();
    expect(JSON.stringify(analyst)).not.toContain(TAX_ID);
    const viewer = await seenBy(['analyst', 'pii-viewer'], 'viewer@example.com');
    expect(viewer.transaction.buyer.billing_details).toMatchObject({ tax_id: { value: TAX_ID } });
  });
});

describe('in webhook payloads', () => {
  it('a subscription made by a caller without the scope gets them as null; one made by a caller with it, in full', async () => {
    await vi.waitFor(
      () => expect(receivers.full.requests.length * receivers.redacted.requests.length).toBeGreaterThan(0),
      { timeout: 10_000 },
    );
    const target = (receiver: WebhookReceiver) =>
      receiver.requests[0]!.event.target as { buyer: { billing_details: unknown } };
    expect(target(receivers.full).buyer.billing_details).toMatchObject({ tax_id: { value: TAX_ID } });
    expect(target(receivers.redacted).buyer.billing_details).toBeNull();
    expect(receivers.redacted.requests.every((request) => !request.rawBody.includes(TAX_ID))).toBe(true);
  });
});
