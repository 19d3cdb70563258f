/**
 * Issue 22, item 12: a transaction for a merchant account that does not exist is refused with 404 — before anything
 * is stored or reaches a provider — in the embedded runtime (the distributed one: tests/transactions-distributed).
 */
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('unknown-merchant-account');
  await h.createAccount('known');
  await h.createConnection('known');
});

afterAll(async () => {
  await h.stop();
});

const payment = {
  amount: 1_299,
  currency: 'USD',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
};

it('answers 404 for a merchant account that does not exist, even when a connection was recorded for it', async () => {
  // A connection recorded under the unknown id (the service takes the account id as given).
  await h.fixture.service.transactions.paymentServices.create('ghost', {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'ghost' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  const before = h.simulator.ledger.all().length;
  const refused = await h
    .http()
    .post('/transactions')
    .set(h.headers('ghost'))
    .set('idempotency-key', 'ghost-1')
    .send(payment);
  expect(refused.status).toBe(404);
  expect(refused.body).toMatchObject({ type: 'error', code: 'not_found', status: 404 });
  expect(h.simulator.ledger.all().length).toBe(before);
  expect((await h.http().get('/transactions').set(h.headers('ghost')).expect(200)).body.items).toEqual([]);
});

it('answers 404 for an unknown merchant account without a connection, and pays for a known one', async () => {
  expect((await h.http().post('/transactions').set(h.headers('nowhere')).send(payment)).status).toBe(404);
  expect(await h.authorize('known', payment)).toMatchObject({ status: 'authorization_succeeded' });
});
