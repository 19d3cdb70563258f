/**
 * Issue 4 acceptance, over HTTP on the embedded runtime: the spec's transaction state table, the reference's
 * simulator values (declines, failures, AVS, CVV), idempotent creates, the read endpoints (list with filters and
 * paging, events, update), merchant account scoping, the required Transaction fields, and the card number never
 * stored nor answered.
 */
import { simulatorValues } from '@switchyard/connectors/src/simulator';
import { expectErrorBody } from '@switchyard/testing';
import { card, dataFiles, isoWithOffset, startHarness, TEST_PANS, type Harness } from './transactions.harness';

let h: Harness;
const account = 'tx-main';
let connectionId: string;

beforeAll(async () => {
  h = await startHarness('transactions');
  await h.createAccount(account);
  connectionId = await h.createConnection(account);
});

afterAll(() => h?.stop());

type Item = { name: string; created_at: string; context: Record<string, unknown> };
const historyOf = async (id: string, acct = account): Promise<Item[]> =>
  (await h.http().get(`/transactions/${id}/events`).set(h.headers(acct)).expect(200)).body.items;

describe('transaction states (spec, States and transitions)', () => {
  it('processing → authorization_succeeded when the payment service approves', async () => {
    const t = await h.authorize(account, { amount: 1_234 });
    expect(t).toMatchObject({
      status: 'authorization_succeeded',
      authorized_amount: 1_234,
      captured_amount: 0,
      error_code: null,
      intent_outcome: 'succeeded',
    });
    const statuses = (await historyOf(t.id)).map((item) => item.context.status);
    expect(statuses[0]).toBe('processing');
    expect(statuses.at(-1)).toBe('authorization_succeeded');
  });

  it('processing → authorization_failed when the authorization fails (300013 service_error)', async () => {
    const t = await h.authorize(account, { amount: 300_013 });
    expect(t).toMatchObject({
      status: 'authorization_failed',
      error_code: 'service_error',
      raw_response_code: '300013',
      authorized_amount: 0,
      intent_outcome: 'failed',
    });
    expect((await historyOf(t.id)).map((item) => item.context.event)).toEqual([
      'TransactionCreated',
      'AuthorizationFailed',
      'CreateRequestCompleted',
    ]);
  });

  it('processing → authorization_failed: a failure notification during the create request (500003) is held, then applied once', async () => {
    const deliveriesBefore = h.simulator.deliveries.length;
    const t = await h.authorize(account, { amount: 500_003 });
    // The simulator delivered the notification and had its answer before it answered the create call.
    expect(h.simulator.deliveries.slice(deliveriesBefore)).toEqual([
      expect.objectContaining({
        url: expect.stringContaining(`/payment-services/${connectionId}/notifications`),
        status: 204,
      }),
    ]);
    expect(t).toMatchObject({ status: 'authorization_failed', error_code: 'service_error' });
    const events = (await historyOf(t.id)).map((item) => item.context.event);
    expect(events).toEqual([
      'TransactionCreated',
      'FailureNotificationHeld',
      'AuthorizationFailed',
      'CreateRequestCompleted',
    ]);
    // Held means not applied while the request ran: the failure is recorded after the hold, exactly once, never followed by a success.
    expect(
      events.filter(
        (e) => e === 'AuthorizationFailed' || e === 'AuthorizationDeclined' || e === 'AuthorizationSucceeded',
      ),
    ).toEqual(['AuthorizationFailed']);
    expect((await h.get(account, t.id)).status).toBe('authorization_failed');
  });

  const increment = (id: string, amount: number) =>
    h.http().post(`/transactions/${id}/authorization/increment`).set(h.headers(account)).send({ amount });

  it('authorization_succeeded → authorization_succeeded: an approved increment raises authorized_amount, is in the history, and emits transaction.modified', async () => {
    const t = await h.authorize(account, { amount: 10_000, is_amount_estimated: true });
    const response = await increment(t.id, 2_500).expect(200);
    expect(response.body).toMatchObject({
      type: 'transaction-authorization-increment',
      status: 'succeeded',
      amount: 2_500,
      response_code: '00',
      error_code: null,
      transaction: { status: 'authorization_succeeded', authorized_amount: 12_500, is_amount_estimated: true },
    });
    expect((await historyOf(t.id)).map((item) => item.name)).toContain('transaction-modified-event');
    // Capturable up to the new amount.
    await h.http().post(`/transactions/${t.id}/capture`).set(h.headers(account)).send({ amount: 12_500 }).expect(200);
  });

  it.each([
    ['failed', 200_011, 'insufficient_funds'],
    ['pending', 500_001, null],
  ] as const)(
    'authorization_succeeded → authorization_succeeded: a %s increment leaves the authorization as it was',
    async (status, amount, errorCode) => {
      const t = await h.authorize(account, { amount: 10_000 });
      const response = await increment(t.id, amount).expect(200);
      expect(response.body).toMatchObject({
        status,
        error_code: errorCode,
        transaction: { status: 'authorization_succeeded', authorized_amount: 10_000 },
      });
      // Still capturable up to the previous amount, not above it.
      await h.http().post(`/transactions/${t.id}/capture`).set(h.headers(account)).send({ amount: 10_001 }).expect(400);
      const captured = await h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .send({ amount: 10_000 })
        .expect(200);
      expect(captured.body).toMatchObject({ status: 'capture_succeeded', captured_amount: 10_000 });
    },
  );

  it('refuses an increment outside authorization_succeeded (400) and on a connection without incremental authorization', async () => {
    const captured = await h.authorize(account, { amount: 1_000, intent: 'capture' });
    expectErrorBody((await increment(captured.id, 100).expect(400)).body, 400, 'bad_request');
    const declined = await h.authorize(account, { amount: 200_011 });
    expect((await increment(declined.id, 100).expect(400)).body.message).toMatch(/declined/);
    const other = 'tx-no-increments';
    await h.createAccount(other);
    const noIncrements = await h.createConnection(other, { capabilities: { incremental_authorization: false } });
    const t = await h.authorize(other, { amount: 1_000, payment_service_id: noIncrements });
    const refused = await h
      .http()
      .post(`/transactions/${t.id}/authorization/increment`)
      .set(h.headers(other))
      .send({ amount: 100 })
      .expect(400);
    expect(refused.body.message).toMatch(/does not support incremental authorization/);
    expect(h.simulator.ledger.counts(t.id).increments).toBe(0);
  });
});

describe('simulator values (reference: amount → error code, postal code → AVS, security code → CVV)', () => {
  const declines = Object.entries(simulatorValues.declineAmounts).map(
    ([amount, code]) => [Number(amount), code] as const,
  );
  const failures = Object.entries(simulatorValues.failureAmounts).map(
    ([amount, code]) => [Number(amount), code] as const,
  );

  it('has the reference examples in its tables', () => {
    expect(declines).toContainEqual([200_011, 'insufficient_funds']);
    expect(failures).toContainEqual([300_013, 'service_error']);
    expect(declines).toHaveLength(22);
    expect(failures).toHaveLength(24);
  });

  it.each(declines)('%i → authorization_declined with %s, AVS and CVV still reported', async (amount, code) => {
    const t = await h.authorize(account, { amount, buyer: { billing_details: { address: { postal_code: '10115' } } } });
    expect(t).toMatchObject({
      status: 'authorization_declined',
      error_code: code,
      raw_response_code: String(amount),
      raw_response_description: code.replace(/_/g, ' '),
      authorized_amount: 0,
      avs_response_code: 'match',
      cvv_response_code: 'match',
    });
  });

  it.each(failures)('%i → authorization_failed with %s, no AVS nor CVV', async (amount, code) => {
    const t = await h.authorize(account, { amount, buyer: { billing_details: { address: { postal_code: '10115' } } } });
    expect(t).toMatchObject({
      status: 'authorization_failed',
      error_code: code,
      raw_response_code: String(amount),
      avs_response_code: null,
      cvv_response_code: null,
    });
  });

  it('a declined transaction is final: capture, void, cancel and refund are 400', async () => {
    const t = await h.authorize(account, { amount: 200_011 });
    for (const path of ['capture', 'void', 'cancel', 'refunds']) {
      const response = await h
        .http()
        .post(`/transactions/${t.id}/${path}`)
        .set(h.headers(account))
        .send({})
        .expect(400);
      expect(response.body.message, path).toMatch(/declined/);
    }
    expect(h.simulator.ledger.counts(t.id)).toMatchObject({
      authorizations: 1,
      captures: 0,
      voids: 0,
      cancels: 0,
      refunds: 0,
    });
  });

  it('an amount outside the tables is approved with raw code 00', async () => {
    expect(await h.authorize(account, { amount: 400_010 })).toMatchObject({
      status: 'authorization_succeeded',
      raw_response_code: '00',
      error_code: null,
    });
  });

  it.each([
    ['77001', 'no_match'],
    ['88001', 'partial_match_postcode'],
    ['99001', 'partial_match_address'],
    ['10115', 'match'],
    ['7788', 'no_match'],
  ])('postal code %s → avs_response_code %s', async (postalCode, avs) => {
    const t = await h.authorize(account, { buyer: { billing_details: { address: { postal_code: postalCode } } } });
    expect(t).toMatchObject({ status: 'authorization_succeeded', avs_response_code: avs });
  });

  it('no postal code → avs_response_code unavailable', async () => {
    expect(await h.authorize(account)).toMatchObject({ avs_response_code: 'unavailable' });
  });

  it.each([
    ['222', 'not_provided'],
    ['333', 'no_match'],
    ['123', 'match'],
    ['4567', 'match'],
  ])('security code %s → cvv_response_code %s', async (securityCode, cvv) => {
    const t = await h.authorize(account, { payment_method: card({ security_code: securityCode }) });
    expect(t).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: cvv });
  });
});

describe('idempotent POST /transactions', () => {
  it('replays the first answer (same status and body) without a second authorization at the simulator', async () => {
    const body = { amount: 4_321, currency: 'USD', payment_method: card(), external_identifier: 'idem-order-1' };
    const send = () =>
      h.http().post('/transactions').set(h.headers(account)).set('Idempotency-Key', 'idem-1').send(body);
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    expect(h.simulator.ledger.counts(first.body.id).authorizations).toBe(1);
    const listed = await h
      .http()
      .get('/transactions')
      .query({ external_identifier: 'idem-order-1' })
      .set(h.headers(account))
      .expect(200);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([first.body.id]);
  });

  it('409 for the same key with a different body; a different key is a new transaction', async () => {
    const body = { amount: 4_000, currency: 'USD', payment_method: card() };
    const first = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-2')
      .send(body)
      .expect(201);
    const conflict = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-2')
      .send({ ...body, amount: 4_001 })
      .expect(409);
    expect(conflict.body).toMatchObject({
      type: 'error',
      code: 'duplicate_record',
      status: 409,
      message: expect.any(String),
    });
    const other = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-3')
      .send(body)
      .expect(201);
    expect(other.body.id).not.toBe(first.body.id);
    expect(h.simulator.ledger.counts(first.body.id).authorizations).toBe(1);
  });

  it('a key is per merchant account, and a 422 stores nothing under it', async () => {
    const body = { amount: 4_100, currency: 'USD', payment_method: card() };
    const invalid = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-4')
      .send({ ...body, currency: 'usd' })
      .expect(422);
    expect(invalid.body.detail[0]).toMatchObject({ loc: ['body', 'currency'] });
    const mine = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-4')
      .send(body)
      .expect(201);
    await h.createAccount('tx-idem-other');
    await h.createConnection('tx-idem-other');
    const theirs = await h
      .http()
      .post('/transactions')
      .set(h.headers('tx-idem-other'))
      .set('Idempotency-Key', 'idem-4')
      .send(body)
      .expect(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.merchant_account_id).toBe('tx-idem-other');
  });

  it('a declined create is replayed as declined, without asking the payment service again', async () => {
    const body = { amount: 200_011, currency: 'USD', payment_method: card() };
    const first = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-5')
      .send(body)
      .expect(201);
    expect(first.body.status).toBe('authorization_declined');
    const replay = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .set('Idempotency-Key', 'idem-5')
      .send(body)
      .expect(201);
    expect(replay.body).toEqual(first.body);
    expect(h.simulator.ledger.counts(first.body.id).authorizations).toBe(1);
  });
});

describe('reads and updates', () => {
  const listAccount = 'tx-list';
  let second: string;
  const created: { id: string; amount: number; created_at: string; status: string; payment_service: { id: string } }[] =
    [];

  beforeAll(async () => {
    await h.createAccount(listAccount);
    await h.createConnection(listAccount);
    second = await h.createConnection(listAccount, { display_name: 'Second' });
    for (const [amount, extra] of [
      [1_000, {}],
      [2_000, { external_identifier: 'order-77' }],
      [3_000, { payment_service_id: second }],
      [200_011, {}],
      [5_000, {}],
    ] as const) {
      created.push((await h.authorize(listAccount, { amount, ...extra })) as never);
    }
  });

  const list = async (query: Record<string, unknown>) =>
    (await h.http().get('/transactions').query(query).set(h.headers(listAccount)).expect(200)).body;
  const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);
  const newestFirst = () => [...created].reverse().map((t) => t.id);

  it('lists the account only, newest first, and filters by status, amount, created_at, payment service and external identifier', async () => {
    expect(ids(await list({}))).toEqual(newestFirst());
    expect(ids(await list({ status: 'authorization_declined' }))).toEqual([created[3]!.id]);
    expect(ids(await list({ status: ['authorization_declined', 'authorization_succeeded'] }))).toHaveLength(5);
    expect(ids(await list({ amount_gte: 2_000, amount_lte: 3_000 }))).toEqual([created[2]!.id, created[1]!.id]);
    expect(ids(await list({ created_at_gte: created[3]!.created_at }))).toEqual([created[4]!.id, created[3]!.id]);
    // The same instant written with another offset.
    const instant = new Date(created[3]!.created_at);
    const plusTwo = new Date(instant.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect(ids(await list({ created_at_gte: plusTwo }))).toEqual([created[4]!.id, created[3]!.id]);
    expect(ids(await list({ payment_service_id: second }))).toEqual([created[2]!.id]);
    expect(ids(await list({ external_identifier: 'order-77' }))).toEqual([created[1]!.id]);
    expect(created[0]!.payment_service.id).not.toBe(second);
  });

  it('list items are TransactionSummary: the required summary fields, type "transaction"', async () => {
    const page = await list({ limit: 1 });
    const summaryRequired = [
      'id',
      'reconciliation_id',
      'merchant_account_id',
      'currency',
      'amount',
      'status',
      'authorized_amount',
      'captured_amount',
      'refunded_amount',
      'settled_amount',
      'settled',
      'intent',
      'gift_card_redemptions',
      'created_at',
      'updated_at',
      'disputed',
    ];
    expect(page).toMatchObject({ limit: 1, previous_cursor: null, next_cursor: expect.any(String) });
    for (const field of summaryRequired) expect(page.items[0], field).toHaveProperty(field);
    expect(page.items[0]).toMatchObject({ type: 'transaction', merchant_account_id: listAccount });
    expect(page.items[0].created_at).toMatch(isoWithOffset);
  });

  it('pages with a cursor until next_cursor is null', async () => {
    const seen: string[] = [];
    let page = await list({ limit: 2 });
    expect(page.limit).toBe(2);
    for (let guard = 0; guard < 10; guard++) {
      seen.push(...ids(page));
      if (page.next_cursor === null) break;
      page = await list({ limit: 2, cursor: page.next_cursor });
    }
    expect(page.next_cursor).toBeNull();
    expect(seen).toEqual(newestFirst());
  });

  it('PUT /transactions/{id} changes external_identifier and metadata; null clears', async () => {
    const id = created[0]!.id;
    const url = `/transactions/${id}`;
    const updated = await h
      .http()
      .put(url)
      .set(h.headers(listAccount))
      .send({ external_identifier: 'renamed', metadata: { cart: '42' } })
      .expect(200);
    expect(updated.body).toMatchObject({
      id,
      external_identifier: 'renamed',
      metadata: { cart: '42' },
      status: 'authorization_succeeded',
    });
    expect(await h.get(listAccount, id)).toMatchObject({ external_identifier: 'renamed', metadata: { cart: '42' } });
    const onlyMetadata = await h
      .http()
      .put(url)
      .set(h.headers(listAccount))
      .send({ metadata: { cart: '43' } })
      .expect(200);
    expect(onlyMetadata.body).toMatchObject({ external_identifier: 'renamed', metadata: { cart: '43' } });
    const cleared = await h
      .http()
      .put(url)
      .set(h.headers(listAccount))
      .send({ external_identifier: null, metadata: null })
      .expect(200);
    expect(cleared.body).toMatchObject({ external_identifier: null, metadata: null });
  });

  it('GET /transactions/{id}/events: the history, oldest first, paged', async () => {
    const t = created[4]!;
    await h.http().post(`/transactions/${t.id}/capture`).set(h.headers(listAccount)).send({}).expect(200);
    const all: Item[] = (await h.http().get(`/transactions/${t.id}/events`).set(h.headers(listAccount)).expect(200))
      .body.items;
    expect(all[0]).toMatchObject({
      type: 'transaction-event',
      name: 'transaction-api-request',
      context: { status: 'processing' },
    });
    expect(all.map((item) => item.name)).toContain('payment-connector-response-transaction-authorization-succeeded');
    expect(all.at(-1)).toMatchObject({
      name: 'payment-connector-response-transaction-capture-succeeded',
      context: { status: 'capture_succeeded' },
    });
    const times = all.map((item) => item.created_at);
    expect([...times].sort()).toEqual(times);
    for (const time of times) expect(time).toMatch(isoWithOffset);

    const paged: Item[] = [];
    let page = (
      await h.http().get(`/transactions/${t.id}/events`).query({ limit: 2 }).set(h.headers(listAccount)).expect(200)
    ).body;
    for (let guard = 0; guard < 20; guard++) {
      paged.push(...page.items);
      if (page.next_cursor === null) break;
      page = (
        await h
          .http()
          .get(`/transactions/${t.id}/events`)
          .query({ limit: 2, cursor: page.next_cursor })
          .set(h.headers(listAccount))
          .expect(200)
      ).body;
    }
    expect(page.next_cursor).toBeNull();
    expect(paged).toEqual(all);
  });

  it("404 for another merchant account's transaction, on every route", async () => {
    const id = created[1]!.id;
    const other = h.headers(account);
    expectErrorBody((await h.http().get(`/transactions/${id}`).set(other).expect(404)).body, 404, 'not_found');
    await h.http().put(`/transactions/${id}`).set(other).send({ external_identifier: 'hijack' }).expect(404);
    await h.http().get(`/transactions/${id}/events`).set(other).expect(404);
    await h.http().post(`/transactions/${id}/capture`).set(other).send({}).expect(404);
    await h.http().post(`/transactions/${id}/void`).set(other).expect(404);
    await h.http().post(`/transactions/${id}/refunds`).set(other).send({}).expect(404);
    await h.http().get(`/transactions/${id}/refunds`).set(other).expect(404);
    await h.http().get(`/transactions/${id}/captures`).set(other).expect(404);
    expect(
      ids(
        await h
          .http()
          .get('/transactions')
          .set(other)
          .expect(200)
          .then((r) => r.body),
      ),
    ).not.toContain(id);
    expect(await h.get(listAccount, id)).toMatchObject({
      status: 'authorization_succeeded',
      external_identifier: 'order-77',
    });
  });

  it('404 for an unknown transaction', async () => {
    expectErrorBody(
      (await h.http().get('/transactions/7f1f7b0e-4a8e-4a35-9c52-0b1f9f2b2a11').set(h.headers(listAccount)).expect(404))
        .body,
      404,
      'not_found',
    );
  });
});

describe('the Transaction resource', () => {
  // Every field the reference (wire-compat §b, Transaction) marks R.
  const required = [
    'id',
    'reconciliation_id',
    'merchant_account_id',
    'currency',
    'amount',
    'status',
    'authorized_amount',
    'captured_amount',
    'refunded_amount',
    'settled_amount',
    'settled',
    'intent',
    'gift_card_redemptions',
    'created_at',
    'updated_at',
    'disputed',
    'payment_source',
    'merchant_initiated',
    'is_subsequent_payment',
    'intent_outcome',
    'multi_tender',
    'account_funding_transaction',
  ];
  const timestamps = [
    'created_at',
    'updated_at',
    'authorized_at',
    'captured_at',
    'voided_at',
    'canceled_at',
    'approval_expires_at',
    'buyer_approval_timedout_at',
  ];

  it('has every required field on GET, type "transaction", and timestamps in ISO-8601 with offset', async () => {
    const created = await h.authorize(account, { amount: 2_500, intent: 'capture', country: 'US' });
    const t = await h.get(account, created.id);
    for (const field of required) expect(t, field).toHaveProperty(field);
    for (const field of required) expect(t[field], field).not.toBeNull();
    expect(t).toMatchObject({
      type: 'transaction',
      merchant_account_id: account,
      currency: 'USD',
      amount: 2_500,
      intent: 'capture',
      status: 'capture_succeeded',
      captured_amount: 2_500,
    });
    for (const field of timestamps) if (t[field] !== null) expect(t[field], field).toMatch(isoWithOffset);
    expect(t.authorized_at).toMatch(isoWithOffset);
    expect(t.captured_at).toMatch(isoWithOffset);
    expect(t.payment_method).toMatchObject({
      type: 'payment-method',
      method: 'card',
      label: '1111',
      scheme: 'visa',
      details: { bin: '411111' },
    });
    expect(t.payment_service).toMatchObject({
      type: 'payment-service',
      id: connectionId,
      payment_service_definition_id: 'mock-card',
    });
  });
});

describe('the card number', () => {
  it('the response tap sees what is answered (a 422 echoing a PAN-like input, on purpose; nothing is stored)', async () => {
    const before = h.leaks.length;
    const echoed = await h
      .http()
      .post('/merchant-accounts')
      .set(h.headers())
      .send({ id: 'tap-check', display_name: Number(TEST_PANS[0]) })
      .expect(422);
    expect(echoed.text).toContain(TEST_PANS[0]);
    expect(h.leaks.slice(before)).toEqual(['POST /merchant-accounts']);
    h.leaks.splice(before);
  });

  it.each([
    ['a bad expiry date', { ...card(), expiration_date: '13/30' }],
    ['a failed Luhn check', { ...card(), number: '4111111111111112' }],
    ['an unknown method', { ...card(), method: 'cardx' }],
    ['an unknown field', { ...card(), pin: '1234', security_code: 'abc' }],
  ])('a 422 for %s does not echo the card number', async (_what, paymentMethod) => {
    const response = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .send({ amount: 100, currency: 'USD', payment_method: paymentMethod })
      .expect(422);
    expect(response.text).not.toContain(TEST_PANS[0]);
  });

  it('is never answered nor stored in the data directory (WAL files included)', async () => {
    // A few more cards, so every test PAN has gone through the vault.
    await h.authorize(account, { payment_method: card({ number: TEST_PANS[1], security_code: '333' }) });
    await h.authorize(account, {
      payment_method: card({ number: TEST_PANS[2], security_code: '4321' }),
      amount: 200_011,
    });
    expect(h.leaks).toEqual([]);
    const files = dataFiles(h);
    expect(files.some((file) => file.endsWith('-wal'))).toBe(true);
    expect(h.filesWithPan()).toEqual([]);
  });
});
