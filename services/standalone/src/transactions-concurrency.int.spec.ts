/**
 * Issue 4 acceptance, over HTTP against the listening gateway: the money rules hold under concurrency. 50 racing
 * refunds of $60 on a $100 capture, 50 racing captures of 30 on an authorization of 100 (multiple captures on), and
 * racing idempotent creates with one key.
 */
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'race';

beforeAll(async () => {
  h = await startHarness('concurrency');
  await h.createAccount(account, { multiple_captures_enabled: true });
  await h.createConnection(account);
});

afterAll(() => h?.stop());

const RACERS = 50;
const statusCounts = (responses: { status: number }[]) =>
  responses.reduce<Record<number, number>>(
    (counts, response) => ({ ...counts, [response.status]: (counts[response.status] ?? 0) + 1 }),
    {},
  );

it('50 concurrent $60 refunds of a $100 capture: exactly one succeeds (201), 49 are 400 saying what is left', async () => {
  const t = await h.authorize(account, { amount: 10_000, intent: 'capture' });
  const responses = await Promise.all(
    Array.from({ length: RACERS }, () =>
      h.http().post(`/transactions/${t.id}/refunds`).set(h.headers(account)).send({ amount: 6_000 }),
    ),
  );
  expect(statusCounts(responses)).toEqual({ 201: 1, 400: RACERS - 1 });
  const winner = responses.find((response) => response.status === 201)!;
  expect(winner.body).toMatchObject({ type: 'refund', status: 'succeeded', amount: 6_000 });
  for (const loser of responses.filter((response) => response.status === 400)) {
    expect(loser.body).toMatchObject({
      type: 'error',
      code: 'bad_request',
      status: 400,
      message: 'Refunds would exceed what was captured; at most 4000 is left',
    });
  }
  expect(await h.get(account, t.id)).toMatchObject({
    status: 'capture_succeeded',
    captured_amount: 10_000,
    refunded_amount: 6_000,
  });
  expect(h.simulator.ledger.counts(t.id).refunds).toBe(1);
  const refunds = (await h.http().get(`/transactions/${t.id}/refunds`).set(h.headers(account)).expect(200)).body.items;
  expect(refunds).toHaveLength(1);
});

it('50 concurrent captures of 30 on an authorization of 100 (multiple captures on): exactly three succeed', async () => {
  const t = await h.authorize(account, { amount: 100 });
  const responses = await Promise.all(
    Array.from({ length: RACERS }, () =>
      h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .set('Prefer', 'resource=transaction-capture')
        .send({ amount: 30 }),
    ),
  );
  expect(statusCounts(responses)).toEqual({ 200: 3, 400: RACERS - 3 });
  for (const winner of responses.filter((response) => response.status === 200))
    expect(winner.body).toMatchObject({ status: 'succeeded', amount: 30, final: false });
  for (const loser of responses.filter((response) => response.status === 400)) {
    expect(loser.body).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/over the limit of 100/) });
  }
  expect(await h.get(account, t.id)).toMatchObject({
    status: 'capture_succeeded',
    authorized_amount: 100,
    captured_amount: 90,
  });
  expect(h.simulator.ledger.counts(t.id).captures).toBe(3);
  const captures = (await h.http().get(`/transactions/${t.id}/captures`).set(h.headers(account)).expect(200)).body
    .items;
  expect(captures.map((capture: { status: string }) => capture.status)).toEqual([
    'succeeded',
    'succeeded',
    'succeeded',
  ]);
});

it('10 concurrent creates with one Idempotency-Key: one authorization at the simulator; the rest replay it or are 409 concurrent_request', async () => {
  const body = {
    amount: 1_999,
    currency: 'USD',
    external_identifier: 'race-create',
    payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
  };
  const responses = await Promise.all(
    Array.from({ length: 10 }, () =>
      h.http().post('/transactions').set(h.headers(account)).set('Idempotency-Key', 'race-create').send(body),
    ),
  );
  const created = responses.filter((response) => response.status === 201);
  expect(created.length).toBeGreaterThanOrEqual(1);
  for (const response of created) expect(response.body).toEqual(created[0]!.body);
  for (const response of responses.filter((r) => r.status !== 201))
    expect(response.body).toMatchObject({ status: 409, code: 'concurrent_request' });
  expect(h.simulator.ledger.counts(created[0]!.body.id).authorizations).toBe(1);
  const listed = (
    await h
      .http()
      .get('/transactions')
      .query({ external_identifier: 'race-create' })
      .set(h.headers(account))
      .expect(200)
  ).body.items;
  expect(listed).toHaveLength(1);
});

it('the card number is never answered nor stored', () => {
  expect(h.leaks).toEqual([]);
  expect(h.filesWithPan()).toEqual([]);
});
