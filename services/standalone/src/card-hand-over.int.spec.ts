/**
 * Issue 19 item 4, over HTTP in the embedded runtime: the gateway hands the card data of a `POST /transactions` to
 * the vault (`vault.cards.hand-over`) before the transactions service sees the request, which then holds the card's
 * id and the security code's alias only. What the transactions service is asked (its create handler's payload) and
 * everything it sends the vault are searched for the card number and security code. Idempotency-Key semantics stay:
 * a replay answers the first transaction and its freshly vaulted card is shredded, another card (or another security
 * code) under the same key is a 409, and a refused request leaves no card behind.
 */
import { startHarness, type Harness } from './transactions.harness';

const NUMBER = '5555555555554444';
const CVC = '737';
const account = 'hand-over';

let h: Harness;
/** Every payload the transactions service's create handler got, and every argument its vault port got, as JSON. */
let reached: string[];
/** The card ids the vault minted for hand-overs, in order. */
let minted: string[];

beforeAll(async () => {
  h = await startHarness('card-hand-over', { env: { VAULT_THREAD: 'false' } });
  await h.createAccount(account);
  await h.createConnection(account);
  const { transactions, vault } = h.fixture.service;
  const authorizations = (transactions.transactions as unknown as { authorizations: { create: () => unknown } })
    .authorizations;
  const create = authorizations.create.bind(authorizations);
  vi.spyOn(authorizations, 'create').mockImplementation((...args: unknown[]) => {
    reached.push(JSON.stringify(args));
    return (create as (...a: unknown[]) => unknown)(...args);
  });
  const port = vault.port as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of [
    'storeCard',
    'findCard',
    'takeHandedOverCard',
    'cardAliases',
    'aliasSecurityCode',
    'removeCards',
    'resolveBuyer',
  ]) {
    const real = port[name]?.bind(port);
    if (!real) throw new Error(`no ${name} on the vault port`);
    vi.spyOn(port, name).mockImplementation((...args: unknown[]) => {
      reached.push(JSON.stringify(args));
      return real(...args);
    });
  }
  const handOver = vault.port.handOverCard.bind(vault.port);
  vi.spyOn(vault.port, 'handOverCard').mockImplementation(async (request) => {
    const answer = await handOver(request);
    if (answer.card_id) minted.push(answer.card_id);
    return answer;
  });
});

beforeEach(() => {
  reached = [];
  minted = [];
});

afterAll(async () => {
  vi.restoreAllMocks();
  expect(h.leaks).toEqual([]);
  await h.stop();
});

const card = (overrides: Record<string, unknown> = {}) => ({
  method: 'card',
  number: NUMBER,
  expiration_date: '11/30',
  security_code: CVC,
  ...overrides,
});

const post = (body: Record<string, unknown>, key?: string) => {
  const call = h.http().post('/transactions').set(h.headers(account));
  return (key ? call.set('Idempotency-Key', key) : call).send(body);
};

/** Whether the vault still has a card (after the transactions service caught up: one-off cards shredded). */
const inVault = async (id: string) => {
  await h.fixture.service.transactions.catchUp();
  return h.fixture.service.vault.slices.vault.find(account, id) !== null;
};

function expectNoCardReachedTransactions(): void {
  expect(reached.length).toBeGreaterThan(0);
  for (const json of reached) {
    expect(json).not.toContain(NUMBER);
    expect(json).not.toContain(`"${CVC}"`);
  }
}

it('a card payment: the transactions service gets the card id and aliases, never the number or the code', async () => {
  const response = await post({ amount: 1_000, currency: 'USD', payment_method: card() }).expect(201);
  expect(response.body).toMatchObject({
    status: 'authorization_succeeded',
    payment_method: { label: '4444', scheme: 'mastercard' },
  });
  expect(minted).toHaveLength(1);
  expect(response.body.payment_method.id).toBe(minted[0]);
  expectNoCardReachedTransactions();
  expect(h.fixture.service.vault.port.storeCard).not.toHaveBeenCalled();
  // The one-off card is shredded once the payment is done.
  expect(await inVault(minted[0] as string)).toBe(false);
});

it("a stored method's security code goes to the vault too", async () => {
  const stored = await h
    .http()
    .post('/payment-methods')
    .set(h.headers(account))
    .send({ method: 'card', number: NUMBER, expiration_date: '11/30' })
    .expect(201);
  reached = [];
  const response = await post({
    amount: 1_100,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.body.id, security_code: CVC },
  }).expect(201);
  expect(response.body.status).toBe('authorization_succeeded');
  expectNoCardReachedTransactions();
  expect(minted).toEqual([]);
});

it('a replay answers the first transaction; the card vaulted for the replay is shredded', async () => {
  const body = { amount: 1_200, currency: 'USD', payment_method: card() };
  const first = await post(body, 'hand-over-1').expect(201);
  const again = await post(body, 'hand-over-1').expect(201);
  expect(again.body).toEqual(first.body);
  expect(minted).toHaveLength(2);
  expect(first.body.payment_method.id).toBe(minted[0]);
  expect(await inVault(minted[1] as string)).toBe(false);
  expect(h.simulator.ledger.counts(first.body.id).authorizations).toBe(1);
  expectNoCardReachedTransactions();
});

it('another card or another security code under the same key is a 409, and leaves no card behind', async () => {
  const body = { amount: 1_300, currency: 'USD', payment_method: card() };
  await post(body, 'hand-over-2').expect(201);
  for (const other of [
    card({ number: '4111111111111111' }),
    card({ security_code: '738' }),
    card({ security_code: undefined }),
  ]) {
    const conflict = await post({ ...body, payment_method: other }, 'hand-over-2').expect(409);
    expect(conflict.body).toMatchObject({ type: 'error', code: 'duplicate_record', status: 409 });
  }
  expect(minted).toHaveLength(4);
  for (const id of minted.slice(1)) expect(await inVault(id)).toBe(false);
});

it('a refused request (a buyer that does not exist) answers as before and leaves no card behind', async () => {
  const response = await post({
    amount: 1_400,
    currency: 'USD',
    buyer_id: '00000000-0000-4000-8000-00000000dead',
    payment_method: card(),
  }).expect(400);
  expect(response.body.details).toEqual([expect.objectContaining({ location: 'body', pointer: '/buyer_id' })]);
  expect(minted).toHaveLength(1);
  expect(await inVault(minted[0] as string)).toBe(false);
});

it('bad card fields are refused by the gateway before anything reaches the vault', async () => {
  const response = await post({ amount: 1_500, currency: 'USD', payment_method: card({ number: '5555555555554445' }) });
  expect(response.status).toBe(422);
  expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'payment_method', 'number'] });
  expect(minted).toEqual([]);
  expect(reached).toEqual([]);
});
