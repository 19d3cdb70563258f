/**
 * Issue 12, time travel, over HTTP: `GET /transactions/{id}?as_of=` answers the transaction as it stood at that
 * moment (authorized before the capture, captured after it, the partial refund after that; 404 before it existed;
 * 400 naming `as_of` for anything but an RFC 3339 date-time with offset), and `GET /transactions/{id}/events`
 * explains each step: who (the API key pair, or `system`), the connection, the flow rule, the provider's codes.
 */
import { expectErrorBody } from '@switchyard/testing';
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'time-travel';
let connectionId: string;
let apiKeyPairId: string;

type Body = Record<string, unknown>;
interface EventItem {
  name: string;
  created_at: string;
  context: { event: string; status: string; explanation: Body };
}

beforeAll(async () => {
  h = await startHarness('time-travel');
  await h.createAccount(account);
  connectionId = await h.createConnection(account);
  const keys = (await h.http().get('/api-key-pairs').set(h.headers()).expect(200)).body.items as {
    id: string;
    display_name: string;
  }[];
  apiKeyPairId = keys.find((key) => key.display_name === 'admin')!.id;
});

afterAll(() => h?.stop());

/** Now, once the clock has moved on: every event recorded so far is before it, every later one after it. */
const moment = async (): Promise<string> => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  const now = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  return now;
};

const asOf = (id: string, when: string, acct = account) =>
  h.http().get(`/transactions/${id}`).query({ as_of: when }).set(h.headers(acct));
const eventsOf = async (id: string): Promise<EventItem[]> =>
  (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body.items;

describe('an authorization, captured, then partly refunded', () => {
  let id: string;
  const at: Record<'beforeCreation' | 'authorized' | 'captured' | 'refunded', string> = {
    beforeCreation: '',
    authorized: '',
    captured: '',
    refunded: '',
  };

  beforeAll(async () => {
    at.beforeCreation = await moment();
    const authorized = await h.authorize(account, {
      amount: 10_000,
      intent: 'authorize',
      buyer: { billing_details: { address: { postal_code: '7788' } } },
    });
    id = authorized.id;
    expect(authorized).toMatchObject({ status: 'authorization_succeeded' });
    at.authorized = await moment();
    await h.http().post(`/transactions/${id}/capture`).set(h.headers(account)).send({}).expect(200);
    at.captured = await moment();
    await h.http().post(`/transactions/${id}/refunds`).set(h.headers(account)).send({ amount: 4_000 }).expect(201);
    at.refunded = await moment();
  });

  it('as_of between the authorization and the capture: authorized, nothing captured', async () => {
    const then = (await asOf(id, at.authorized).expect(200)).body;
    expect(then).toMatchObject({
      type: 'transaction',
      id,
      status: 'authorization_succeeded',
      authorized_amount: 10_000,
      captured_amount: 0,
      refunded_amount: 0,
      captured_at: null,
    });
    // The same moment written with another offset is the same moment.
    const shifted = new Date(Date.parse(at.authorized) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await asOf(id, shifted).expect(200)).body).toEqual(then);
  });

  it('as_of after the capture: captured', async () => {
    expect((await asOf(id, at.captured).expect(200)).body).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 10_000,
      refunded_amount: 0,
    });
  });

  it('as_of after the partial refund: the refunded amount', async () => {
    expect((await asOf(id, at.refunded).expect(200)).body).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 10_000,
      refunded_amount: 4_000,
    });
  });

  it('as_of in the future: the current state, exactly as the plain GET answers it', async () => {
    const future = new Date(Date.now() + 24 * 3600_000).toISOString();
    expect((await asOf(id, future).expect(200)).body).toEqual(await h.get(account, id));
  });

  it('as_of before the transaction existed: 404, as for an unknown transaction', async () => {
    expectErrorBody((await asOf(id, at.beforeCreation).expect(404)).body, 404, 'not_found');
  });

  it("as_of on another merchant account's transaction: 404", async () => {
    await h.createAccount('time-travel-other');
    expectErrorBody((await asOf(id, at.refunded, 'time-travel-other').expect(404)).body, 404, 'not_found');
  });

  it.each([['yesterday-ish'], ['2025-06-01T12:00:00'], ['2025-06-01'], ['2025-02-30T12:00:00Z'], ['']])(
    'as_of=%j: 400 naming as_of',
    async (value) => {
      const response = await asOf(id, value).expect(400);
      expectErrorBody(response.body, 400, 'bad_request');
      expect(response.body.details).toEqual([
        { location: 'query', pointer: '/as_of', message: expect.any(String), type: 'invalid_as_of' },
      ]);
    },
  );

  it('never answers the card number, as_of or not', () => {
    expect(h.leaks).toEqual([]);
  });

  it('the events name the actor (the API key pair), the connection and the provider codes of the authorization', async () => {
    const events = await eventsOf(id);
    const authorization = events.find((item) => item.context.event === 'AuthorizationSucceeded');
    expect(authorization).toMatchObject({
      name: 'payment-connector-response-transaction-authorization-succeeded',
      context: {
        status: 'authorization_succeeded',
        explanation: {
          actor: { type: 'api-key-pair', id: apiKeyPairId },
          payment_service_id: connectionId,
          flow_rule_id: null,
          provider_response: expect.objectContaining({
            avs_response_code: 'no_match',
            cvv_response_code: 'match',
            payment_service_transaction_id: expect.any(String),
          }),
        },
      },
    });
    // Every step of this transaction was asked for by the same key, at the same connection.
    for (const item of events)
      expect(item.context.explanation).toMatchObject({
        actor: { type: 'api-key-pair', id: apiKeyPairId },
        payment_service_id: connectionId,
      });
    const refund = events.find((item) => item.context.event === 'RefundSucceeded');
    expect(refund?.context.explanation.provider_response).toMatchObject({ provider_operation_id: expect.any(String) });
  });

  it('as_of the time of each event: the state after the last event of that instant (times are to the millisecond)', async () => {
    const events = await eventsOf(id);
    for (const item of events) {
      const lastOfInstant = events.filter((other) => other.created_at === item.created_at).at(-1)!;
      expect((await asOf(id, item.created_at).expect(200)).body.status).toBe(lastOfInstant.context.status);
    }
  });
});

describe('the events explain', () => {
  it('which flow rule decided the route', async () => {
    const rule = await h.createFlowRule(account, {
      action: 'route-transaction',
      conditions: [{ name: 'amount', operator: 'greater_than_or_equal', value: 70_000 }],
      outcome: { type: 'list', result: [connectionId] },
    });
    const t = await h.authorize(account, { amount: 70_000 });
    const created = (await eventsOf(t.id)).find((item) => item.context.event === 'TransactionCreated');
    expect(created?.context.explanation).toMatchObject({
      flow_rule_id: rule,
      payment_service_id: connectionId,
      provider_response: null,
    });
  });

  it('`system` for what a provider notification recorded', async () => {
    // 500001: the authorization answers pending; the simulator's notification approves it later.
    const t = await h.authorize(account, { amount: 500_001 });
    expect(t.status).toBe('processing');
    await h.waitFor(account, t.id, (current) => current.status === 'authorization_succeeded');
    const events = await eventsOf(t.id);
    expect(events.find((item) => item.context.event === 'AuthorizationPending')?.context.explanation).toMatchObject({
      actor: { type: 'api-key-pair', id: apiKeyPairId },
    });
    expect(events.find((item) => item.context.event === 'AuthorizationSucceeded')?.context.explanation).toMatchObject({
      actor: { type: 'system', id: 'provider-notification' },
      payment_service_id: connectionId,
    });
  });
});
