/**
 * The embedded runtime's vault on a worker thread of its own (VAULT_THREAD, the default; issue 21): a card payment,
 * a stored card and a buyer go through it as through the main thread's vault, its store is its own file, and the
 * main thread holds no vault service to reach into.
 */
import { startHarness, TEST_PANS, type Harness } from './transactions.harness';

const account = 'vault-thread';
let h: Harness;

beforeAll(async () => {
  h = await startHarness('vault-thread');
  await h.createAccount(account);
  await h.createConnection(account);
});

afterAll(async () => {
  await h?.stop();
});

it('pays by card, stores a card for a buyer and pays with it, through the vault on its thread', async () => {
  const paid = await h.authorize(account);
  expect(paid.status).toBe('authorization_succeeded');
  expect(paid.payment_method).toMatchObject({ method: 'card', scheme: 'visa', label: '1111' });

  const buyer = await h.http().post('/buyers').set(h.headers(account)).send({ display_name: 'Ada' });
  expect(buyer.status, buyer.text).toBe(201);
  const stored = await h
    .http()
    .post('/payment-methods')
    .set(h.headers(account))
    .send({ method: 'card', number: TEST_PANS[1], expiration_date: '12/30', buyer_id: buyer.body.id });
  expect(stored.status, stored.text).toBe(201);
  const again = await h.authorize(account, {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.body.id },
  });
  expect(again.status).toBe('authorization_succeeded');
  expect(again.payment_method).toMatchObject({ id: stored.body.id });

  const listed = await h.http().get(`/buyers/payment-methods?buyer_id=${buyer.body.id}`).set(h.headers(account));
  expect(listed.status, listed.text).toBe(200);
  expect(listed.body.items.map((method: { id: string }) => method.id)).toEqual([stored.body.id]);
});

it('keeps the vault out of the main thread: no vault service there to reach into', () => {
  expect(() => h.fixture.service.vault).toThrow(/thread of its own/);
});
