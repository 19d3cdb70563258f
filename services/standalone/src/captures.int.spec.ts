/**
 * Issue 4 acceptance, over HTTP: captures — tracking (spec, Capture tracking entry), `Prefer:
 * resource=transaction-capture`, the captures list and get, multiple captures (merchant account flag AND payment
 * service capability), `final`, over-capture limits, and sync refused after a second capture.
 */
import { expectErrorBody } from '@switchyard/testing';
import { isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const multi = 'cap-multi';
const single = 'cap-single';
const noCapability = 'cap-no-capability';
const over = 'cap-over';
const overPercent = 'cap-over-percent';

beforeAll(async () => {
  h = await startHarness('captures');
  await h.createAccount(multi, { multiple_captures_enabled: true });
  await h.createAccount(single);
  await h.createAccount(noCapability, { multiple_captures_enabled: true });
  await h.createAccount(over, { over_capture_amount: 2_000 });
  await h.createAccount(overPercent, { over_capture_percentage: 15, multiple_captures_enabled: true });
  for (const account of [multi, single, over, overPercent]) await h.createConnection(account);
  await h.createConnection(noCapability, { capabilities: { multiple_captures: false } });
});

afterAll(() => h?.stop());

const capture = (account: string, id: string, body: object, extra: Record<string, string> = {}) =>
  h.http().post(`/transactions/${id}/capture`).set(h.headers(account)).set(extra).send(body);
const preferCapture = { Prefer: 'resource=transaction-capture' };
const tracking = (n: number) => Array.from({ length: n }, (_, i) => ({ number: `1Z${i}`, carrier: 'UPS' }));

describe('tracking', () => {
  it('422 for 6 entries, naming the field', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    const response = await capture(multi, t.id, { tracking: tracking(6) }).expect(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'tracking'] });
    expect(h.simulator.ledger.counts(t.id).captures).toBe(0);
  });

  it('422 for an entry without carrier (or without number)', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    const noCarrier = await capture(multi, t.id, { tracking: [{ number: '1Z999' }] }).expect(422);
    expect(noCarrier.body.detail[0]).toMatchObject({ loc: ['body', 'tracking', 0, 'carrier'], type: 'missing' });
    const noNumber = await capture(multi, t.id, { tracking: [{ carrier: 'UPS' }] }).expect(422);
    expect(noNumber.body.detail[0]).toMatchObject({ loc: ['body', 'tracking', 0, 'number'] });
    expect((await h.get(multi, t.id)).status).toBe('authorization_succeeded');
  });

  it('400 on a direct capture (intent: capture), which tracking does not apply to', async () => {
    const t = await h.authorize(multi, { amount: 100, intent: 'capture' });
    const response = await capture(multi, t.id, { tracking: tracking(1) }).expect(400);
    expectErrorBody(response.body, 400, 'bad_request');
    expect(response.body.message).toMatch(/tracking/i);
  });

  it('5 entries: the capture resource (Prefer) includes them; list and get return each capture with its own tracking', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    const five = [...tracking(4), { number: 'JD0001', carrier: 'DHL', url: 'https://track.example/JD0001' }];
    const first = await capture(multi, t.id, { amount: 30, tracking: five }, preferCapture).expect(200);
    expect(first.body).toMatchObject({
      type: 'transaction-capture',
      id: expect.any(String),
      transaction_id: t.id,
      status: 'succeeded',
      amount: 30,
      currency: 'USD',
      final: false,
      tracking: [
        ...tracking(4).map((entry) => ({ ...entry, url: null })),
        { number: 'JD0001', carrier: 'DHL', url: 'https://track.example/JD0001' },
      ],
      code: null,
      transaction: { type: 'transaction', id: t.id, status: 'capture_succeeded', captured_amount: 30 },
    });
    expect(first.body.created_at).toMatch(isoWithOffset);
    const second = await capture(
      multi,
      t.id,
      { amount: 20, tracking: [{ number: 'FX-2', carrier: 'FedEx' }] },
      preferCapture,
    ).expect(200);
    expect(second.body.tracking).toEqual([{ number: 'FX-2', carrier: 'FedEx', url: null }]);

    const listed = (await h.http().get(`/transactions/${t.id}/captures`).set(h.headers(multi)).expect(200)).body;
    expect(listed).toMatchObject({ next_cursor: null });
    const { transaction: _t1, ...firstCapture } = first.body;
    const { transaction: _t2, ...secondCapture } = second.body;
    expect(listed.items).toEqual([
      { ...firstCapture, updated_at: expect.any(String) },
      { ...secondCapture, updated_at: expect.any(String) },
    ]);

    const got = await h.http().get(`/transactions/${t.id}/captures/${first.body.id}`).set(h.headers(multi)).expect(200);
    expect(got.body).toMatchObject({
      id: first.body.id,
      tracking: first.body.tracking,
      transaction: { id: t.id, captured_amount: 50 },
    });
    const gotSecond = await h
      .http()
      .get(`/transactions/${t.id}/captures/${second.body.id}`)
      .set(h.headers(multi))
      .expect(200);
    expect(gotSecond.body.tracking).toEqual(second.body.tracking);
    await h.http().get(`/transactions/${t.id}/captures/nope`).set(h.headers(multi)).expect(404);

    const page1 = (
      await h.http().get(`/transactions/${t.id}/captures`).query({ limit: 1 }).set(h.headers(multi)).expect(200)
    ).body;
    expect(page1.items.map((c: { id: string }) => c.id)).toEqual([first.body.id]);
    const page2 = (
      await h
        .http()
        .get(`/transactions/${t.id}/captures`)
        .query({ limit: 1, cursor: page1.next_cursor })
        .set(h.headers(multi))
        .expect(200)
    ).body;
    expect(page2.items.map((c: { id: string }) => c.id)).toEqual([second.body.id]);
    expect(page2.next_cursor).toBeNull();
  });

  it('a connection that cannot forward tracking still accepts and stores it', async () => {
    const account = 'cap-no-forwarding';
    await h.createAccount(account);
    await h.createConnection(account, { capabilities: { tracking_forwarding: false } });
    const t = await h.authorize(account, { amount: 100 });
    const captured = await capture(account, t.id, { tracking: tracking(2) }, preferCapture).expect(200);
    expect(captured.body).toMatchObject({
      status: 'succeeded',
      tracking: tracking(2).map((entry) => ({ ...entry, url: null })),
    });
  });
});

describe('multiple captures', () => {
  it('flag on: 30 + 30 with final omitted keep it open; final: true closes it; a further capture is 400', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    expect((await capture(multi, t.id, { amount: 30 }).expect(200)).body).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 30,
    });
    expect((await capture(multi, t.id, { amount: 30 }).expect(200)).body).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 60,
    });
    const last = await capture(multi, t.id, { amount: 10, final: true }, preferCapture).expect(200);
    expect(last.body).toMatchObject({
      status: 'succeeded',
      final: true,
      transaction: { captured_amount: 70, authorized_amount: 100 },
    });
    const refused = await capture(multi, t.id, { amount: 10 }).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.message).toMatch(/final/i);
    expect(h.simulator.ledger.counts(t.id).captures).toBe(3);
  });

  it('flag on: the captures together cannot exceed the authorization (400 naming what is left)', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    await capture(multi, t.id, { amount: 60 }).expect(200);
    const refused = await capture(multi, t.id, { amount: 41 }).expect(400);
    expect(refused.body.details).toEqual([expect.objectContaining({ pointer: '/amount', message: 'at most 40' })]);
    // Omitted amount: everything not yet claimed.
    expect((await capture(multi, t.id, {}).expect(200)).body).toMatchObject({ captured_amount: 100 });
  });

  it('flag off: the first capture is the last one; a second is 400', async () => {
    const t = await h.authorize(single, { amount: 100 });
    const first = await capture(single, t.id, { amount: 30 }, preferCapture).expect(200);
    expect(first.body).toMatchObject({ status: 'succeeded', final: true });
    expectErrorBody((await capture(single, t.id, { amount: 30 }).expect(400)).body, 400, 'bad_request');
    expect(h.simulator.ledger.counts(t.id).captures).toBe(1);
    // Even final: false asks for a multiple capture the account does not allow.
    const u = await h.authorize(single, { amount: 100 });
    expect((await capture(single, u.id, { amount: 30, final: false }, preferCapture).expect(200)).body).toMatchObject({
      final: true,
    });
    await capture(single, u.id, { amount: 30 }).expect(400);
  });

  it('flag on but the payment service does not support multiple captures: a second capture is 400', async () => {
    const t = await h.authorize(noCapability, { amount: 100 });
    expect((await capture(noCapability, t.id, { amount: 30 }, preferCapture).expect(200)).body).toMatchObject({
      status: 'succeeded',
      final: true,
    });
    await capture(noCapability, t.id, { amount: 30 }).expect(400);
    expect(h.simulator.ledger.counts(t.id).captures).toBe(1);
  });

  it('POST /transactions/{id}/sync works with one capture and is refused (400) once there are two', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    await capture(multi, t.id, { amount: 30 }).expect(200);
    expect((await h.http().post(`/transactions/${t.id}/sync`).set(h.headers(multi)).expect(200)).body).toMatchObject({
      id: t.id,
      status: 'capture_succeeded',
    });
    await capture(multi, t.id, { amount: 30 }).expect(200);
    const refused = await h.http().post(`/transactions/${t.id}/sync`).set(h.headers(multi)).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.message).toMatch(/more than one capture/);
  });
});

describe('idempotent capture', () => {
  it('the same Idempotency-Key replays the capture without capturing twice', async () => {
    const t = await h.authorize(multi, { amount: 100 });
    const first = await capture(multi, t.id, { amount: 40 }, { ...preferCapture, 'Idempotency-Key': 'cap-1' }).expect(
      200,
    );
    const replay = await capture(multi, t.id, { amount: 40 }, { ...preferCapture, 'Idempotency-Key': 'cap-1' }).expect(
      200,
    );
    expect(replay.body).toEqual(first.body);
    expect(h.simulator.ledger.counts(t.id).captures).toBe(1);
    expect(await h.get(multi, t.id)).toMatchObject({ captured_amount: 40 });
    await capture(multi, t.id, { amount: 41 }, { 'Idempotency-Key': 'cap-1' }).expect(409);
  });
});

describe('over-capture', () => {
  it('over_capture_amount: the API takes captures beyond the authorization up to the limit, and refuses (400) beyond it', async () => {
    const t = await h.authorize(over, { amount: 10_000 });
    const beyond = await capture(over, t.id, { amount: 12_001 }).expect(400);
    expect(beyond.body.details).toEqual([expect.objectContaining({ pointer: '/amount', message: 'at most 12000' })]);
    expect(h.simulator.ledger.counts(t.id).captures).toBe(0);
    // A 200 also carries a declined or failed capture: the capture itself must succeed, here and at the provider.
    const upTo = await capture(over, t.id, { amount: 12_000 }, preferCapture).expect(200);
    const captured = { status: 'capture_succeeded', captured_amount: 12_000 };
    expect(upTo.body).toMatchObject({ status: 'succeeded', amount: 12_000, transaction: captured });
    expect(h.simulator.ledger.counts(t.id).captures).toBe(1);
    expect(h.simulator.ledger.findByReference(t.id)).toMatchObject({ status: 'captured', capturedAmount: 12_000 });
  });

  it('over_capture_percentage: 15 % over, summed over multiple captures; beyond it is 400', async () => {
    const t = await h.authorize(overPercent, { amount: 1_000 });
    const first = await capture(overPercent, t.id, { amount: 600 }, preferCapture).expect(200);
    expect(first.body).toMatchObject({ status: 'succeeded', amount: 600, transaction: { captured_amount: 600 } });
    const beyond = await capture(overPercent, t.id, { amount: 551 }).expect(400);
    expect(beyond.body.details).toEqual([expect.objectContaining({ message: 'at most 550' })]);
    const last = await capture(overPercent, t.id, { amount: 550, final: true }, preferCapture).expect(200);
    const captured = { status: 'capture_succeeded', captured_amount: 1_150 };
    expect(last.body).toMatchObject({ status: 'succeeded', amount: 550, transaction: captured });
    expect(h.simulator.ledger.counts(t.id).captures).toBe(2);
    expect(h.simulator.ledger.findByReference(t.id)).toMatchObject({ status: 'captured', capturedAmount: 1_150 });
  });

  it('over_capture_amount: a capture beyond the authorization, within the limit, succeeds at the payment service', async () => {
    const t = await h.authorize(over, { amount: 10_000 });
    const upTo = await capture(over, t.id, { amount: 12_000 }, preferCapture).expect(200);
    expect(upTo.body).toMatchObject({
      status: 'succeeded',
      amount: 12_000,
      transaction: { status: 'capture_succeeded', authorized_amount: 10_000, captured_amount: 12_000 },
    });
  });

  it('without over-capture the authorization is the limit', async () => {
    const t = await h.authorize(single, { amount: 1_000 });
    await capture(single, t.id, { amount: 1_001 }).expect(400);
    await capture(single, t.id, { amount: 1_000 }).expect(200);
  });
});

describe('the card number', () => {
  it('is never answered nor stored', () => {
    expect(h.leaks).toEqual([]);
    expect(h.filesWithPan()).toEqual([]);
  });
});
