/**
 * Issue 6 acceptance (stored payment methods and the vault), over HTTP on the embedded runtime with the simulator:
 * store through the API, list/filter/delete, pay with a stored method; a method stored during a purchase becomes
 * usable only when the provider's vault-token notification arrives, and without it stays `processing` and then
 * fails (spec, Events rule 3); deleting a buyer takes their methods and shreds their card data, and the read models
 * still rebuild from the events.
 */
import Database from 'better-sqlite3';
import { SqliteEventStore } from '@switchyard/eventstore';
import { TransactionsService } from '@switchyard/transactions';
import { VaultService } from '@switchyard/vault';
import { TEST_PANS, card, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'pm';
const other = 'pm-other';

beforeAll(async () => {
  // The wait for a vault token is short here so the "then it fails" half of rule 3 is seen within the test.
  h = await startHarness('payment-methods', { env: { VAULT_TOKEN_TIMEOUT_MS: '1500', VAULT_THREAD: 'false' } });
  await h.createAccount(account);
  await h.createAccount(other);
  await h.createConnection(account);
});

afterAll(() => h?.stop());

type Body = Record<string, unknown>;
const post = (url: string, body: unknown, acct = account) =>
  h
    .http()
    .post(url)
    .set(h.headers(acct))
    .send(body as object);
const get = (url: string, acct = account) => h.http().get(url).set(h.headers(acct));

async function waitForMethod(id: string, status: string): Promise<Body> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await get(`/payment-methods/${id}`);
    if (response.status === 200 && response.body.status === status) return response.body as Body;
    if (Date.now() > deadline)
      throw new Error(`payment method ${id} never became ${status}: ${response.status} ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('POST /payment-methods', () => {
  it('stores a card: 201, succeeded, only BIN, last four, scheme and expiry shown', async () => {
    const response = await post('/payment-methods', {
      method: 'card',
      number: TEST_PANS[1],
      expiration_date: '12/30',
      security_code: '123',
      external_identifier: 'pm-ext-1',
    }).expect(201);
    expect(response.body).toMatchObject({
      type: 'payment-method',
      merchant_account_id: account,
      method: 'card',
      mode: 'card',
      scheme: 'mastercard',
      label: '4444',
      expiration_date: '12/30',
      details: { bin: '555555' },
      status: 'succeeded',
      buyer: null,
      external_identifier: 'pm-ext-1',
      usage_count: 0,
      has_replacement: false,
    });
    expect(response.text).not.toContain(TEST_PANS[1]);
    await get(`/payment-methods/${response.body.id}`).expect(200);
    await get(`/payment-methods/${response.body.id}`, other).expect(404);
  });

  it('refuses bad input with the 422 detail body and an unknown buyer with a 400', async () => {
    const bad = await post('/payment-methods', {
      method: 'card',
      number: '4111111111111112',
      expiration_date: '13/30',
    }).expect(422);
    expect(bad.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(
      expect.arrayContaining(['body.number', 'body.expiration_date']),
    );
    const unknown = await post('/payment-methods', {
      method: 'card',
      number: TEST_PANS[0],
      expiration_date: '12/30',
      buyer_id: '00000000-0000-4000-8000-000000000000',
    }).expect(400);
    expect(unknown.body.details[0]).toMatchObject({ type: 'buyer_not_found' });
    const both = await post('/payment-methods', {
      method: 'card',
      number: TEST_PANS[0],
      expiration_date: '12/30',
      buyer_id: '00000000-0000-4000-8000-000000000000',
      buyer_external_identifier: 'x',
    }).expect(422);
    expect(JSON.stringify(both.body)).toContain('buyer_external_identifier');
  });

  it('pays with a stored method (instrument_type card_token) and counts the use', async () => {
    const stored = (
      await post('/payment-methods', { method: 'card', number: TEST_PANS[0], expiration_date: '12/30' }).expect(201)
    ).body;
    const paid = await h.authorize(account, {
      amount: 1000,
      currency: 'USD',
      payment_method: { method: 'id', id: stored.id },
    });
    expect(paid).toMatchObject({
      status: 'authorization_succeeded',
      instrument_type: 'card_token',
      payment_method: { id: stored.id, label: '1111' },
    });
    const after = (await get(`/payment-methods/${stored.id}`).expect(200)).body;
    expect(after).toMatchObject({ usage_count: 1, cit_usage_count: 1 });
    expect(after.last_used_at).toEqual(expect.any(String));
  });
});

describe('listing and deleting', () => {
  it('lists newest first with filters and pages, and deletes for good', async () => {
    const buyer = (
      await post('/buyers', { display_name: 'List Buyer', external_identifier: 'pm-list-buyer' }).expect(201)
    ).body;
    const a = (
      await post('/payment-methods', {
        method: 'card',
        number: TEST_PANS[0],
        expiration_date: '01/31',
        buyer_id: buyer.id,
      }).expect(201)
    ).body;
    const b = (
      await post('/payment-methods', {
        method: 'card',
        number: TEST_PANS[1],
        expiration_date: '02/31',
        buyer_external_identifier: 'pm-list-buyer',
      }).expect(201)
    ).body;
    expect(b.buyer).toMatchObject({ type: 'buyer', id: buyer.id, display_name: 'List Buyer' });

    const ofBuyer = (await get(`/payment-methods?buyer_id=${buyer.id}`).expect(200)).body;
    expect(ofBuyer.items.map((m: Body) => m.id)).toEqual([b.id, a.id]);
    const byExternal = (await get('/payment-methods?buyer_external_identifier=pm-list-buyer&limit=1').expect(200)).body;
    expect(byExternal.items.map((m: Body) => m.id)).toEqual([b.id]);
    const next = (
      await get(
        `/payment-methods?buyer_external_identifier=pm-list-buyer&limit=1&cursor=${encodeURIComponent(byExternal.next_cursor)}`,
      ).expect(200)
    ).body;
    expect(next.items.map((m: Body) => m.id)).toEqual([a.id]);
    expect(
      (await get('/payment-methods?status=failed&status=processing').expect(200)).body.items.every(
        (m: Body) => m.status !== 'succeeded',
      ),
    ).toBe(true);
    await get('/payment-methods?status=nope').expect(422);

    const buyerList = (await get(`/buyers/payment-methods?buyer_id=${buyer.id}`).expect(200)).body;
    expect(buyerList.items.map((m: Body) => m.id)).toEqual([b.id, a.id]);
    await get('/buyers/payment-methods').expect(422);
    await get(`/buyers/payment-methods?buyer_id=${buyer.id}&sort_by=created_at`).expect(422);

    await h.http().delete(`/payment-methods/${a.id}`).set(h.headers(account)).expect(204);
    await get(`/payment-methods/${a.id}`).expect(404);
    await h.http().delete(`/payment-methods/${a.id}`).set(h.headers(account)).expect(404);
    const refused = await post('/transactions', {
      amount: 1000,
      currency: 'USD',
      payment_method: { method: 'id', id: a.id },
    }).expect(400);
    expect(refused.body.details[0]).toMatchObject({ pointer: '/payment_method/id', type: 'payment_method_not_found' });
  });
});

describe('a method stored during a purchase (spec, Events rule 3)', () => {
  it('is processing until the vault-token notification arrives, then succeeded and usable', async () => {
    const paid = await h.authorize(account, {
      amount: 1200,
      currency: 'USD',
      store: true,
      payment_method: card({ number: TEST_PANS[2], security_code: '1234' }),
    });
    expect(paid.status).toBe('authorization_succeeded');
    const id = (paid.payment_method as Body).id as string;
    const stored = await waitForMethod(id, 'succeeded');
    expect(stored).toMatchObject({ scheme: 'amex', label: '0005' });
    const again = await h.authorize(account, { amount: 1300, currency: 'USD', payment_method: { method: 'id', id } });
    expect(again).toMatchObject({ status: 'authorization_succeeded', instrument_type: 'card_token' });
  });

  it('without the notification the payment succeeds, the method stays processing (unusable), then fails', async () => {
    // 500012: the simulator approves but never vaults the card.
    const paid = await h.authorize(account, {
      amount: 500012,
      currency: 'USD',
      store: true,
      payment_method: card({ number: TEST_PANS[1] }),
    });
    expect(paid.status).toBe('authorization_succeeded');
    const id = (paid.payment_method as Body).id as string;
    expect((await get(`/payment-methods/${id}`).expect(200)).body.status).toBe('processing');
    const early = await post('/transactions', {
      amount: 1000,
      currency: 'USD',
      payment_method: { method: 'id', id },
    }).expect(400);
    expect(early.body.details[0]).toMatchObject({ type: 'payment_method_not_ready' });
    await waitForMethod(id, 'failed');
    const late = await post('/transactions', {
      amount: 1000,
      currency: 'USD',
      payment_method: { method: 'id', id },
    }).expect(400);
    expect(late.body.details[0]).toMatchObject({ type: 'payment_method_failed' });
  });

  it('a purchase without store keeps no usable method', async () => {
    const paid = await h.authorize(account, { amount: 1000, currency: 'USD', payment_method: card() });
    const id = (paid.payment_method as Body).id as string;
    await get(`/payment-methods/${id}`).expect(404);
    const refused = await post('/transactions', {
      amount: 1000,
      currency: 'USD',
      payment_method: { method: 'id', id },
    }).expect(400);
    expect(refused.body.details[0]).toMatchObject({ type: 'payment_method_not_found' });
  });
});

describe('deleting a buyer (crypto-shredding)', () => {
  it('takes their methods, makes their card ciphertext undecryptable, and the read models still rebuild from events', async () => {
    const buyer = (await post('/buyers', { display_name: 'Shred Me' }).expect(201)).body;
    const kept = (
      await post('/payment-methods', { method: 'card', number: TEST_PANS[0], expiration_date: '12/30' }).expect(201)
    ).body;
    const stored = (
      await post('/payment-methods', {
        method: 'card',
        number: TEST_PANS[1],
        expiration_date: '12/30',
        buyer_id: buyer.id,
      }).expect(201)
    ).body;
    // Stored by the purchase: a card given for one payment only is shredded once it answered (issue 22, item 13).
    const purchase = await h.authorize(account, {
      amount: 1000,
      currency: 'USD',
      buyer_id: buyer.id,
      store: true,
      payment_method: card({ number: TEST_PANS[2] }),
    });
    expect(purchase.buyer).toMatchObject({ id: buyer.id, display_name: 'Shred Me' });

    const db = new Database(`${h.fixture.dataDir}/vault.db`, { readonly: true, fileMustExist: true });
    const rowsOf = (ids: string[]) =>
      db
        .prepare(`SELECT id, data_key_id FROM vault_cards WHERE id IN (${ids.map(() => '?').join(',')})`)
        .all(...ids) as { id: string; data_key_id: string }[];
    const theirs = rowsOf([stored.id, (purchase.payment_method as Body).id as string]);
    expect(theirs).toHaveLength(2);
    expect(new Set(theirs.map((row) => row.data_key_id)).size).toBe(1); // one data key per buyer
    const buyerKey = theirs[0]!.data_key_id;
    expect(db.prepare('SELECT COUNT(*) AS n FROM vault_data_keys WHERE id = ?').get(buyerKey)).toEqual({ n: 1 });

    await h.http().delete(`/buyers/${buyer.id}`).set(h.headers(account)).expect(204);

    await get(`/payment-methods/${stored.id}`).expect(404);
    expect((await get(`/payment-methods?buyer_id=${buyer.id}`).expect(200)).body.items).toEqual([]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM vault_data_keys WHERE id = ?').get(buyerKey)).toEqual({ n: 0 });
    expect(rowsOf([stored.id, (purchase.payment_method as Body).id as string])).toEqual([]);
    const vault = h.fixture.service.vault.slices.vault;
    expect(vault.reveal(account, stored.id)).toBeNull();
    expect(vault.reveal(account, kept.id)?.number).toBe(TEST_PANS[0]);
    db.close();

    // The history is intact: the transaction still reads, and every read model rebuilds from the events.
    expect((await h.get(account, purchase.id)).status).toBe('authorization_succeeded');
    const listed = (await get('/payment-methods?limit=100').expect(200)).body.items as Body[];
    // The vault's read models from its store, the methods' usage from the transactions store.
    const store = new SqliteEventStore(`${h.fixture.dataDir}/transactions.db`);
    const vaultStore = new SqliteEventStore(`${h.fixture.dataDir}/vault.db`);
    const rebuiltVault = new VaultService({
      store: vaultStore,
      db: new Database(':memory:'),
      transactionEvents: store,
    });
    const rebuilt = new TransactionsService({ store, db: new Database(':memory:'), vault: rebuiltVault });
    try {
      await rebuiltVault.catchUp();
      await rebuilt.catchUp();
      const again = rebuiltVault.slices.paymentMethods.list({ merchant_account_id: account, limit: 100 }).items;
      expect(again.map((m) => [m.id, m.status, m.label, m.usage_count])).toEqual(
        listed.map((m) => [m.id, m.status, m.label, m.usage_count]),
      );
      expect(rebuiltVault.slices.buyers.find(account, buyer.id)).toBeNull();
      expect(rebuilt.transactions.readModel.find(purchase.id)?.state.status).toBe('authorization_succeeded');
    } finally {
      await rebuilt.stop();
      await rebuiltVault.stop();
      await store.close();
      await vaultStore.close();
    }
  });
});
