/**
 * Issue 5 acceptance, "Failover" and the other flow-rule actions over HTTP: a technical failure at the first
 * connection moves the authorization to the next one, both attempts in the transaction's events, one transaction
 * for the merchant; route-transaction rules order the connections; decline-early declines before any provider call;
 * `payment_service_id` bypasses routing; an issuer's decline is never retried elsewhere.
 */
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('routing');
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

/** An account with two card connections at the simulator, A (position 0) and B (position 1), each its own merchant id. */
async function twoConnections(account: string) {
  await h.createAccount(account);
  const a = await h.createConnection(account, {
    display_name: 'A',
    position: 0,
    fields: [{ key: 'merchant_id', value: `${account}-a` }],
  });
  const b = await h.createConnection(account, {
    display_name: 'B',
    position: 1,
    fields: [{ key: 'merchant_id', value: `${account}-b` }],
  });
  return { a, b };
}

const historyOf = async (account: string, id: string) =>
  (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body.items as {
    name: string;
    context: Record<string, unknown>;
  }[];

describe('failover', () => {
  it('first connection fails technically, second succeeds: both attempts in the events, one transaction', async () => {
    const account = 'route-failover';
    const { a, b } = await twoConnections(account);
    h.simulator.setOutage(`${account}-a`, true);
    try {
      const t = await h.authorize(account);
      expect(t).toMatchObject({ status: 'authorization_succeeded', payment_service: { id: b }, error_code: null });
      const history = await historyOf(account, t.id);
      const attempts = history.filter(
        (item) =>
          item.context.event === 'AuthorizationAttemptFailed' || item.context.event === 'AuthorizationSucceeded',
      );
      expect(attempts.map((item) => item.context)).toEqual([
        expect.objectContaining({
          event: 'AuthorizationAttemptFailed',
          paymentServiceId: a,
          nextPaymentServiceId: b,
          kind: 'failed',
          error: expect.objectContaining({ errorCode: 'service_unavailable' }),
        }),
        expect.objectContaining({ event: 'AuthorizationSucceeded', status: 'authorization_succeeded' }),
      ]);
      expect(history.find((item) => item.context.event === 'AuthorizationAttemptFailed')?.name).toBe(
        'payment-connector-response-transaction-authorization-failed',
      );
      const listed = (await h.http().get('/transactions').set(h.headers(account)).expect(200)).body.items;
      expect(listed.map((item: { id: string }) => item.id)).toEqual([t.id]);
      // Captured at the connection that authorized it.
      const captured = await h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .send({})
        .expect(200);
      expect(captured.body).toMatchObject({ status: 'capture_succeeded', payment_service: { id: b } });
    } finally {
      h.simulator.setOutage(`${account}-a`, false);
    }
  });

  it('fails with the last connection when every connection fails technically', async () => {
    const account = 'route-all-down';
    await twoConnections(account);
    h.simulator.setOutage(`${account}-a`, true);
    h.simulator.setOutage(`${account}-b`, true);
    try {
      const t = await h.authorize(account);
      expect(t).toMatchObject({ status: 'authorization_failed', error_code: 'service_unavailable' });
      const history = await historyOf(account, t.id);
      expect(history.filter((item) => item.context.event === 'AuthorizationAttemptFailed')).toHaveLength(1);
    } finally {
      h.simulator.setOutage(`${account}-a`, false);
      h.simulator.setOutage(`${account}-b`, false);
    }
  });

  it('never retries an issuer decline at another connection', async () => {
    const account = 'route-decline';
    const { a } = await twoConnections(account);
    const t = await h.authorize(account, { amount: 200_011 });
    expect(t).toMatchObject({
      status: 'authorization_declined',
      error_code: 'insufficient_funds',
      payment_service: { id: a },
    });
    expect((await historyOf(account, t.id)).some((item) => item.context.event === 'AuthorizationAttemptFailed')).toBe(
      false,
    );
  });
});

describe('flow rules', () => {
  it('route-transaction orders the connections (B first), and a matching condition is needed', async () => {
    const account = 'route-rule';
    const { a, b } = await twoConnections(account);
    const rule = await h.createFlowRule(account, {
      action: 'route-transaction',
      conditions: [{ name: 'amount', operator: 'greater_than_or_equal', value: 50_000 }],
      outcome: { type: 'list', result: [b, a] },
    });
    const big = await h.authorize(account, { amount: 60_000 });
    expect(big.payment_service).toMatchObject({ id: b });
    const actions = (await h.http().get(`/transactions/${big.id}/actions`).set(h.headers(account)).expect(200)).body
      .items;
    expect(actions).toEqual([
      expect.objectContaining({ id: 'route-transaction', rule_id: rule, outcome: { result: [b, a] } }),
    ]);
    const small = await h.authorize(account, { amount: 1_000 });
    expect(small.payment_service).toMatchObject({ id: a });
  });

  it('payment_service_id bypasses routing; the route rule is recorded as bypassed', async () => {
    const account = 'route-bypass';
    const { a, b } = await twoConnections(account);
    await h.createFlowRule(account, {
      action: 'route-transaction',
      conditions: [],
      outcome: { type: 'list', result: [b] },
    });
    const t = await h.authorize(account, { payment_service_id: a });
    expect(t.payment_service).toMatchObject({ id: a });
    const actions = (await h.http().get(`/transactions/${t.id}/actions`).set(h.headers(account)).expect(200)).body
      .items;
    expect(actions[0].outcome).toEqual({ result: [b], bypassed_by: 'payment_service_id' });
  });

  it('decline-early declines before any payment service is called (flow_decline)', async () => {
    const account = 'route-decline-early';
    await twoConnections(account);
    await h.createFlowRule(account, {
      action: 'decline-early',
      conditions: [{ name: 'card_scheme', operator: 'one_of', value: ['visa'] }],
    });
    const t = await h.authorize(account);
    expect(t).toMatchObject({ status: 'authorization_declined', error_code: 'flow_decline' });
    expect(h.simulator.ledger.counts(t.id).authorizations).toBe(0);
    const mastercard = await h.authorize(account, {
      payment_method: { method: 'card', number: '5555555555554444', expiration_date: '11/30' },
    });
    expect(mastercard.status).toBe('authorization_succeeded');
  });

  it('refuses a transaction whose route rule names no usable connection (all_attempts_skipped)', async () => {
    const account = 'route-skipped';
    const { a } = await twoConnections(account);
    await h.http().put(`/payment-services/${a}`).set(h.headers(account)).send({ active: false }).expect(200);
    await h.createFlowRule(account, {
      action: 'route-transaction',
      conditions: [],
      outcome: { type: 'list', result: [a] },
    });
    const response = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .send({
        amount: 1_000,
        currency: 'USD',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
      })
      .expect(400);
    expect(response.body.details[0]).toMatchObject({ type: 'all_attempts_skipped' });
  });
});
