/**
 * Issue 4 acceptance, over HTTP: refunds — partial then the rest (→ `refunded`), refund all, the limits, a failed
 * refund (500009), the spec's refund state row `processing` → `succeeded` by settlement file ingestion (500008), the
 * settlement notification path, idempotent refunds, and the refund reads.
 */
import { expectErrorBody } from '@switchyard/testing';
import { isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'ref';
let connectionId: string;

beforeAll(async () => {
  h = await startHarness('refunds');
  await h.createAccount(account);
  connectionId = await h.createConnection(account);
});

afterAll(() => h?.stop());

const refund = (id: string, body: object = {}, extra: Record<string, string> = {}, acct = account) =>
  h.http().post(`/transactions/${id}/refunds`).set(h.headers(acct)).set(extra).send(body);
const captured = (amount: number) => h.authorize(account, { amount, intent: 'capture' });
const ingest = (file: { fileName: string; content: string }, acct = account, paymentServiceId = connectionId) =>
  h
    .http()
    .post(`/payment-services/${paymentServiceId}/settlement-files`)
    .set(h.headers(acct))
    .send({ file_name: file.fileName, content: file.content });

describe('refund lifecycle', () => {
  it('a partial refund, then the rest → refunded; nothing more can be refunded', async () => {
    const t = await captured(10_000);
    const partial = await refund(t.id, { amount: 4_000, reason: 'damaged', external_identifier: 'rma-1' }).expect(201);
    expect(partial.body).toMatchObject({
      type: 'refund',
      transaction_id: t.id,
      status: 'succeeded',
      amount: 4_000,
      currency: 'USD',
      reason: 'damaged',
      external_identifier: 'rma-1',
      target_type: 'payment-method',
    });
    expect(await h.get(account, t.id)).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 10_000,
      refunded_amount: 4_000,
    });
    const rest = await refund(t.id).expect(201);
    expect(rest.body).toMatchObject({ status: 'succeeded', amount: 6_000 });
    expect(await h.get(account, t.id)).toMatchObject({ status: 'refunded', refunded_amount: 10_000 });
    const more = await refund(t.id, { amount: 1 }).expect(400);
    expectErrorBody(more.body, 400, 'bad_request');
    expect(h.simulator.ledger.counts(t.id).refunds).toBe(2);
  });

  it('refunds/all refunds everything not yet refunded, as a list', async () => {
    const t = await captured(3_000);
    await refund(t.id, { amount: 1_000 }).expect(201);
    const all = await h.http().post(`/transactions/${t.id}/refunds/all`).set(h.headers(account)).send({}).expect(201);
    expect(all.body).toMatchObject({ items: [{ type: 'refund', status: 'succeeded', amount: 2_000 }] });
    expect((await h.get(account, t.id)).status).toBe('refunded');
  });

  it('400 before anything was captured, and above what is left (naming what is left)', async () => {
    const authorized = await h.authorize(account, { amount: 1_000 });
    expectErrorBody((await refund(authorized.id, { amount: 100 }).expect(400)).body, 400, 'bad_request');
    const t = await captured(1_000);
    await refund(t.id, { amount: 700 }).expect(201);
    const over = await refund(t.id, { amount: 301 }).expect(400);
    expect(over.body.message).toMatch(/at most 300/);
    expect(over.body.details).toEqual([expect.objectContaining({ pointer: '/amount', message: 'at most 300' })]);
  });

  it('500009: the refund fails (refund_period_expired), the money stays captured and can be asked for again', async () => {
    const t = await captured(500_009);
    const failed = await refund(t.id, { amount: 100 }).expect(201);
    expect(failed.body).toMatchObject({
      status: 'failed',
      amount: 100,
      error_code: 'refund_period_expired',
      raw_response_code: '300012',
    });
    expect(await h.get(account, t.id)).toMatchObject({ status: 'capture_succeeded', refunded_amount: 0 });
    const again = await refund(t.id).expect(201);
    expect(again.body).toMatchObject({ status: 'failed', amount: 500_009 });
    expect((await h.http().get(`/refunds/${failed.body.id}`).set(h.headers(account)).expect(200)).body.status).toBe(
      'failed',
    );
  });
});

describe('refunds settling asynchronously (500008, spec: Refund statuses)', () => {
  it('processing → succeeded when the settlement file is ingested (the refund notification lost on the way)', async () => {
    const t = await captured(500_008);
    const pending = await refund(t.id).expect(201);
    expect(pending.body).toMatchObject({ status: 'processing', amount: 500_008 });
    expect(await h.get(account, t.id)).toMatchObject({ status: 'capture_succeeded', refunded_amount: 0 });
    // A processing refund holds its amount.
    await refund(t.id, { amount: 1 }).expect(400);

    // The simulator's refund notification is lost: only the file can settle the refund.
    const realFetch = globalThis.fetch;
    const lost = vi
      .spyOn(globalThis, 'fetch')
      .mockImplementation((input, init) =>
        String(input instanceof Request ? input.url : input).includes('/notifications')
          ? Promise.reject(new TypeError('lost'))
          : realFetch(input, init),
      );
    let file: { fileName: string; content: string };
    try {
      file = await h.simulator.produceSettlementFile();
    } finally {
      lost.mockRestore();
    }
    expect(file.content).toContain(`refund,`);
    expect(file.content).toContain(pending.body.id);
    expect((await h.http().get(`/refunds/${pending.body.id}`).set(h.headers(account)).expect(200)).body.status).toBe(
      'processing',
    );

    const ingested = await ingest(file).expect(200);
    expect(ingested.body).toMatchObject({
      type: 'settlement-file-ingestion',
      file_name: file.fileName,
      refunds_settled: 1,
      unmatched: 0,
    });
    const settled = (await h.http().get(`/refunds/${pending.body.id}`).set(h.headers(account)).expect(200)).body;
    expect(settled).toMatchObject({ status: 'succeeded', amount: 500_008 });
    expect(settled.updated_at >= settled.created_at).toBe(true);
    // The transaction-level `refunded` status is unchanged by the way the refund settled.
    expect(await h.get(account, t.id)).toMatchObject({ status: 'refunded', refunded_amount: 500_008 });
    const history = (await h.http().get(`/transactions/${t.id}/events`).set(h.headers(account)).expect(200)).body.items;
    expect(history.at(-1)).toMatchObject({
      context: { event: 'RefundSucceeded', via: 'settlement', refundId: pending.body.id },
    });

    // The same file again changes nothing.
    expect((await ingest(file).expect(200)).body).toMatchObject({ refunds_settled: 0 });
  });

  it('the refund notification settles it too; the file then finds it already settled', async () => {
    const t = await captured(500_008);
    const pending = await refund(t.id, { amount: 8 }).expect(201);
    expect(pending.body.status).toBe('processing');
    const from = h.simulator.deliveries.length;
    const file = await h.simulator.produceSettlementFile();
    expect(h.simulator.deliveries.slice(from)).toEqual([
      expect.objectContaining({
        url: expect.stringContaining(`/payment-services/${connectionId}/notifications`),
        status: 204,
      }),
    ]);
    expect(
      (await h.http().get(`/transactions/${t.id}/refunds/${pending.body.id}`).set(h.headers(account)).expect(200)).body,
    ).toMatchObject({ status: 'succeeded', payment_service_refund_id: expect.any(String) });
    expect((await ingest(file).expect(200)).body).toMatchObject({ refunds_settled: 0, already_settled: 1 });
    expect(await h.get(account, t.id)).toMatchObject({ status: 'capture_succeeded', refunded_amount: 8 });
  });

  it("another merchant account's file records are unmatched; a malformed file is 400", async () => {
    const t = await captured(500_008);
    const pending = await refund(t.id, { amount: 5 }).expect(201);
    const realFetch = globalThis.fetch;
    const lost = vi
      .spyOn(globalThis, 'fetch')
      .mockImplementation((input, init) =>
        String(input instanceof Request ? input.url : input).includes('/notifications')
          ? Promise.reject(new TypeError('lost'))
          : realFetch(input, init),
      );
    const file = await h.simulator.produceSettlementFile().finally(() => lost.mockRestore());
    const stranger = 'ref-stranger';
    await h.createAccount(stranger);
    const theirs = await h.createConnection(stranger);
    expect((await ingest(file, stranger, theirs).expect(200)).body).toMatchObject({ refunds_settled: 0, unmatched: 1 });
    // Not even addressing our connection from their account works.
    await ingest(file, stranger, connectionId).expect(404);
    expect((await h.http().get(`/refunds/${pending.body.id}`).set(h.headers(account)).expect(200)).body.status).toBe(
      'processing',
    );
    const malformed = await ingest({ fileName: 'x.csv', content: 'not,a,settlement,file\n' }).expect(400);
    expect(malformed.body.details[0]).toMatchObject({ pointer: '/content', type: 'invalid_settlement_file' });
    expect((await ingest(file).expect(200)).body).toMatchObject({ refunds_settled: 1 });
  });
});

describe('idempotent refunds', () => {
  it('the same key replays the same refund, once at the simulator; another body with it is 409', async () => {
    const t = await captured(5_000);
    const first = await refund(t.id, { amount: 1_000 }, { 'Idempotency-Key': 'refund-1' }).expect(201);
    const replay = await refund(t.id, { amount: 1_000 }, { 'Idempotency-Key': 'refund-1' }).expect(201);
    expect(replay.body).toEqual(first.body);
    expect(h.simulator.ledger.counts(t.id).refunds).toBe(1);
    expect(await h.get(account, t.id)).toMatchObject({ refunded_amount: 1_000 });
    const conflict = await refund(t.id, { amount: 2_000 }, { 'Idempotency-Key': 'refund-1' }).expect(409);
    expect(conflict.body).toMatchObject({ type: 'error', code: 'duplicate_record', status: 409 });
    // The same key on another transaction is another request.
    const u = await captured(5_000);
    expect(
      (await refund(u.id, { amount: 1_000 }, { 'Idempotency-Key': 'refund-1' }).expect(201)).body.transaction_id,
    ).toBe(u.id);
  });
});

describe('refund reads', () => {
  // Every field the reference (wire-compat §b, Refund) marks R.
  const required = [
    'id',
    'transaction_id',
    'status',
    'currency',
    'amount',
    'target_type',
    'reconciliation_id',
    'transaction_reconciliation_id',
    'created_at',
    'updated_at',
  ];

  it('GET /refunds/{id}, /transactions/{id}/refunds and /transactions/{id}/refunds/{id}; 404 from another account', async () => {
    const t = await captured(2_000);
    const a = (await refund(t.id, { amount: 500 }).expect(201)).body;
    const b = (await refund(t.id, { amount: 700 }).expect(201)).body;
    for (const field of required) expect(a[field], field).not.toBeUndefined();
    expect(a.created_at).toMatch(isoWithOffset);
    expect(a.updated_at).toMatch(isoWithOffset);
    expect((await h.http().get(`/refunds/${a.id}`).set(h.headers(account)).expect(200)).body).toEqual(a);
    expect(
      (await h.http().get(`/transactions/${t.id}/refunds/${b.id}`).set(h.headers(account)).expect(200)).body,
    ).toEqual(b);
    const listed = (await h.http().get(`/transactions/${t.id}/refunds`).set(h.headers(account)).expect(200)).body;
    expect(listed).toMatchObject({ items: [a, b], next_cursor: null });
    const page1 = (
      await h.http().get(`/transactions/${t.id}/refunds`).query({ limit: 1 }).set(h.headers(account)).expect(200)
    ).body;
    expect(page1.items).toEqual([a]);
    const page2 = (
      await h
        .http()
        .get(`/transactions/${t.id}/refunds`)
        .query({ limit: 1, cursor: page1.next_cursor })
        .set(h.headers(account))
        .expect(200)
    ).body;
    expect(page2).toMatchObject({ items: [b], next_cursor: null });

    const other = 'ref-other';
    await h.createAccount(other);
    expectErrorBody((await h.http().get(`/refunds/${a.id}`).set(h.headers(other)).expect(404)).body, 404, 'not_found');
    await h.http().get(`/transactions/${t.id}/refunds/${a.id}`).set(h.headers(other)).expect(404);
    await refund(t.id, { amount: 1 }, {}, other).expect(404);
    await h.http().get(`/refunds/7f1f7b0e-4a8e-4a35-9c52-0b1f9f2b2a11`).set(h.headers(account)).expect(404);
  });
});

describe('the card number', () => {
  it('is never answered nor stored', () => {
    expect(h.leaks).toEqual([]);
    expect(h.filesWithPan()).toEqual([]);
  });
});
