/**
 * What the dashboard's pages read, over HTTP on the embedded runtime (every service in process, the simulator as the
 * provider): the filtered transactions list, a transaction's timeline with the state after each event (time travel),
 * and the authorization chart's data.
 */
import { startHarness, type Harness } from '../../../standalone/src/transactions.harness';
import { SESSION_COOKIE } from './session-cookie';

const PASSWORD = 'correct horse battery staple';

let harness: Harness;
let cookie: string;
let connection: string;
let captured: { id: string };
let declined: { id: string; status: string };

beforeAll(async () => {
  harness = await startHarness('dashboard-pages');
  await harness.fixture.service.identity.users.create({
    email: 'ops@example.com',
    display_name: 'Ops',
    roles: ['analyst'],
    password: PASSWORD,
  });
  const login = await harness
    .http()
    .post('/dashboard/api/login')
    .set('origin', harness.baseUrl)
    .send({ email: 'ops@example.com', password: PASSWORD })
    .expect(200);
  cookie = `${SESSION_COOKIE}=${new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(String(login.headers['set-cookie']))![1]}`;

  connection = await harness.createConnection('default');
  captured = await harness.authorize('default', { amount: 1299, intent: 'authorize' });
  await harness
    .http()
    .post(`/transactions/${captured.id}/capture`)
    .set(harness.headers('default'))
    .send({})
    .expect(200);
  await harness
    .http()
    .post(`/transactions/${captured.id}/refunds`)
    .set(harness.headers('default'))
    .send({ amount: 500 })
    .expect(201);
  await harness.waitFor('default', captured.id, (transaction) => transaction.refunded_amount === 500);
  // Amounts choose the simulator's answers (docs/simulator.md): 200001 is an issuer decline.
  declined = await harness.authorize('default', { amount: 200001 });
  expect(declined.status).toBe('authorization_declined');
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

const get = (url: string) => harness.http().get(url).set('cookie', cookie);

describe('the transactions list', () => {
  it("answers the merchant account's transactions, newest first, with the API's filters", async () => {
    const all = await get('/dashboard/api/transactions').expect(200);
    expect((all.body.items as { id: string }[]).map((item) => item.id)).toEqual([declined.id, captured.id]);

    const byStatus = await get('/dashboard/api/transactions?status=capture_succeeded').expect(200);
    expect((byStatus.body.items as { id: string }[]).map((item) => item.id)).toEqual([captured.id]);
    const byAmount = await get('/dashboard/api/transactions?amount_gte=200000&amount_lte=300000').expect(200);
    expect((byAmount.body.items as { id: string }[]).map((item) => item.id)).toEqual([declined.id]);
    const byConnection = await get(
      `/dashboard/api/transactions?payment_service_id=${connection}&created_at_gte=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`,
    ).expect(200);
    expect(byConnection.body.items).toHaveLength(2);
    const paged = await get('/dashboard/api/transactions?limit=1').expect(200);
    expect(paged.body.items).toHaveLength(1);
    expect(
      (await get(`/dashboard/api/transactions?limit=1&cursor=${paged.body.next_cursor as string}`).expect(200)).body
        .items[0].id,
    ).toBe(captured.id);
  });

  it("refuses a malformed filter with the API's 422, and another merchant account shows nothing of this one", async () => {
    expect((await get('/dashboard/api/transactions?status=nonsense').expect(422)).body).toMatchObject({
      detail: [expect.objectContaining({ loc: expect.arrayContaining(['query']) })],
    });
    expect((await get('/dashboard/api/transactions?merchant_account_id=other').expect(200)).body.items).toEqual([]);
  });
});

describe('a transaction page', () => {
  it('has every event oldest first, each with the transaction as it stood right after it', async () => {
    const page = await get(`/dashboard/api/transactions/${captured.id}`).expect(200);
    expect(page.body.transaction).toMatchObject({ id: captured.id, status: 'capture_succeeded', refunded_amount: 500 });
    expect(page.body.timeline_complete).toBe(true);
    const steps = page.body.timeline as {
      event: { context: { event: string }; created_at: string };
      state_after: { status: string; captured_amount: number; refunded_amount: number } | null;
    }[];
    const after = (type: string) => steps.find((step) => step.event.context.event === type)?.state_after;
    expect(steps[0]?.event.context.event).toBe('TransactionCreated');
    expect(steps.map((step) => step.event.context.event)).toEqual(
      expect.arrayContaining([
        'AuthorizationSucceeded',
        'CaptureRequested',
        'CaptureSucceeded',
        'RefundRequested',
        'RefundSucceeded',
      ]),
    );
    expect(after('AuthorizationSucceeded')).toMatchObject({ status: 'authorization_succeeded', captured_amount: 0 });
    expect(after('CaptureSucceeded')).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 1299,
      refunded_amount: 0,
    });
    expect(after('RefundSucceeded')).toMatchObject({ status: 'capture_succeeded', refunded_amount: 500 });
    expect(steps.every((step) => step.state_after !== null)).toBe(true);
  });

  it('is 404 for a transaction of another merchant account, 422 for an id that is not one', async () => {
    await get(`/dashboard/api/transactions/${captured.id}?merchant_account_id=other`).expect(404);
    await get('/dashboard/api/transactions/not-a-uuid').expect(422);
  });
});

describe('the authorization chart', () => {
  it("counts the last hour's authorizations at the connection, per minute", async () => {
    const chart = await get('/dashboard/api/stats/authorizations').expect(200);
    expect(Date.parse(chart.body.to) - Date.parse(chart.body.from)).toBe(61 * 60_000);
    expect(chart.body.connections).toEqual([
      {
        payment_service_id: connection,
        attempts: 2,
        succeeded: 1,
        success_rate: 0.5,
        latency_ms_avg: expect.any(Number),
        latency_ms_max: expect.any(Number),
      },
    ]);
    const buckets = chart.body.buckets as { attempts: number; succeeded: number; declined: number; failed: number }[];
    expect(buckets.reduce((sum, bucket) => sum + bucket.attempts, 0)).toBe(2);
    expect(buckets.reduce((sum, bucket) => sum + bucket.declined + bucket.failed, 0)).toBe(1);
  });
});
