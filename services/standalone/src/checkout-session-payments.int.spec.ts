/**
 * Paying with a checkout session (issue 6 item 8): the card the buyer's browser attached (no JWT) pays once through
 * `payment_method: {method: "checkout-session", id}` — its security code reaches the provider and is gone after —
 * and a second payment, or one after the session expired, is refused. A session's card can also be stored as a
 * payment method (`POST /payment-methods`, method `checkout-session`), which uses the session too.
 */
import { TEST_PANS, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'cs-pay';

beforeAll(async () => {
  h = await startHarness('checkout-session-payments');
  await h.createAccount(account);
  await h.createConnection(account);
});

afterAll(() => h?.stop());

const post = (url: string, body: unknown) =>
  h
    .http()
    .post(url)
    .set(h.headers(account))
    .send(body as object);
/** The buyer's browser: no Authorization header, the session id is the credential. */
const attach = (sessionId: string, card: Record<string, unknown>) =>
  h
    .http()
    .post(`/checkout/sessions/${sessionId}/fields`)
    .send({ payment_method: { method: 'card', expiration_date: '11/30', ...card } });

async function sessionWithCard(card: Record<string, unknown>): Promise<string> {
  const session = (await post('/checkout/sessions', {}).expect(201)).body.id as string;
  await attach(session, card).expect(204);
  return session;
}

it('pays once with the session’s card: security code sent (cvv match), checkout_session_id shown, then refused as used', async () => {
  const session = await sessionWithCard({ number: TEST_PANS[0], security_code: '123' });
  const paid = await h.authorize(account, {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'checkout-session', id: session },
  });
  expect(paid).toMatchObject({
    status: 'authorization_succeeded',
    checkout_session_id: session,
    instrument_type: 'pan',
    cvv_response_code: 'match',
    payment_method: { label: '1111', scheme: 'visa' },
  });

  const again = await post('/transactions', {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'checkout-session', id: session },
  }).expect(400);
  expect(again.body.details[0]).toMatchObject({ pointer: '/payment_method/id', type: 'checkout_session_used' });
  // The session shows its card (never the number) and that it is used up: no more fields.
  await attach(session, { number: TEST_PANS[1] }).expect(400);
});

it('refuses a session without card fields, an unknown one, and another account’s', async () => {
  const empty = (await post('/checkout/sessions', {}).expect(201)).body.id as string;
  const bare = await post('/transactions', {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'checkout-session', id: empty },
  }).expect(400);
  expect(bare.body.details[0]).toMatchObject({ type: 'checkout_session_without_card' });
  const unknown = await post('/transactions', {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'checkout-session', id: '00000000-0000-4000-8000-000000000001' },
  }).expect(400);
  expect(unknown.body.details[0]).toMatchObject({ type: 'checkout_session_not_found' });
  await h.createAccount('cs-pay-other');
  await h.createConnection('cs-pay-other');
  const theirs = await sessionWithCard({ number: TEST_PANS[0] });
  const foreign = await h
    .http()
    .post('/transactions')
    .set(h.headers('cs-pay-other'))
    .send({ amount: 1000, currency: 'USD', payment_method: { method: 'checkout-session', id: theirs } })
    .expect(400);
  expect(foreign.body.details[0]).toMatchObject({ type: 'checkout_session_not_found' });
});

it('stores the session’s card as a payment method for a buyer, which then pays by id', async () => {
  const buyer = (await post('/buyers', { display_name: 'Session Buyer' }).expect(201)).body.id as string;
  const session = await sessionWithCard({ number: TEST_PANS[1], security_code: '321' });
  const stored = (
    await post('/payment-methods', { method: 'checkout-session', id: session, buyer_id: buyer }).expect(201)
  ).body;
  expect(stored).toMatchObject({ status: 'succeeded', label: '4444', scheme: 'mastercard', buyer: { id: buyer } });
  const reused = await post('/payment-methods', { method: 'checkout-session', id: session }).expect(400);
  expect(reused.body.details[0]).toMatchObject({ type: 'checkout_session_used' });
  const paid = await h.authorize(account, {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.id },
  });
  expect(paid).toMatchObject({
    status: 'authorization_succeeded',
    instrument_type: 'card_token',
    cvv_response_code: 'not_provided',
  });
});

it('pays with a stored method chosen with its code for its own buyer only; a refusal keeps the session', async () => {
  const buyer = async (name: string) => (await post('/buyers', { display_name: name }).expect(201)).body.id as string;
  const ada = await buyer('Ada');
  const bob = await buyer('Bob');
  const card = { method: 'card', number: TEST_PANS[0], expiration_date: '11/30', buyer_id: ada };
  const adas = (await post('/payment-methods', card).expect(201)).body.id as string;
  const session = (await post('/checkout/sessions', {}).expect(201)).body.id as string;
  const fields = { payment_method: { method: 'id', id: adas, security_code: '123' } };
  await h.http().put(`/checkout/sessions/${session}/fields`).send(fields).expect(204);

  const paymentMethod = { method: 'checkout-session', id: session };
  const pay = (buyerId: string) =>
    post('/transactions', { amount: 1000, currency: 'USD', buyer_id: buyerId, payment_method: paymentMethod });
  const refused = await pay(bob).expect(400);
  const mismatch = { pointer: '/payment_method/id', type: 'payment_method_buyer_mismatch' };
  expect(refused.body.details[0]).toMatchObject(mismatch);
  const paid = (await pay(ada).expect(201)).body;
  expect(paid).toMatchObject({ status: 'authorization_succeeded', instrument_type: 'card_token' });
  expect(paid.checkout_session_id).toBe(session);
  expect(paid.cvv_response_code).toBe('match');
});

it('never answers or writes the card number in clear', () => {
  expect(h.leaks).toEqual([]);
  expect(h.filesWithPan()).toEqual([]);
});
