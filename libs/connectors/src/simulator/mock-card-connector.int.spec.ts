import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  AuthorizationResult,
  AuthorizeRequest,
  CapabilityRefusal,
  Connector,
  ProviderNotification,
} from '../connector';
import { ConnectorUnavailableError, NotificationRejectedError } from '../connector-errors';
import { connectorRegistry } from '../index';
import { signatureHeader } from './notification-signature';
import type { RunningSimulator } from './simulator-server';
import { newReference, startSimulatorHarness, type SimulatorHarness } from './simulator.harness';

let harness: SimulatorHarness;
let simulator: RunningSimulator;
let connector: Connector;

function authorizeRequest(overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    reference: newReference(),
    amount: 1299,
    currency: 'USD',
    paymentInstrument: {
      type: 'card',
      card: { number: '4111111111111111', expirationDate: '11/25', securityCode: '123' },
    },
    billingPostalCode: '10001',
    capture: false,
    ...overrides,
  };
}

const connect: SimulatorHarness['connect'] = (overrides) => harness.connect(overrides);
const notificationsFor = (reference: string) => harness.notificationsFor(reference);
const providerIdOf = (result: AuthorizationResult | CapabilityRefusal) =>
  result.outcome === 'refused' ? undefined : result.providerTransactionId;

beforeAll(async () => {
  harness = await startSimulatorHarness();
  simulator = harness.simulator;
  connector = harness.connect();
});

afterAll(() => harness.stop());

describe('reference simulator values over HTTP', () => {
  it('approves an ordinary amount with AVS and CVV match', async () => {
    const result = await connector.authorize(authorizeRequest());
    expect(result).toMatchObject({
      outcome: 'succeeded',
      authorizedAmount: 1299,
      capturedAmount: 0,
      rawResponseCode: '00',
      avsResponseCode: 'match',
      cvvResponseCode: 'match',
    });
    expect(result).not.toHaveProperty('errorCode');
  });

  it.each([
    [200011, 'declined', 'insufficient_funds'],
    [200017, 'declined', 'suspected_fraud'],
    [300013, 'failed', 'service_error'],
    [400009, 'failed', 'unknown_error'],
  ])('amount %i → %s %s', async (amount, outcome, errorCode) => {
    const result = await connector.authorize(authorizeRequest({ amount }));
    expect(result).toMatchObject({ outcome, errorCode, rawResponseCode: String(amount) });
  });

  it.each([
    ['30077', 'no_match'],
    ['88001', 'partial_match_postcode'],
    ['99501', 'partial_match_address'],
    ['10001', 'match'],
    [undefined, 'unavailable'],
  ] as const)('postal code %s → AVS %s', async (billingPostalCode, avs) => {
    const result = await connector.authorize(authorizeRequest({ billingPostalCode }));
    expect(result).toMatchObject({ outcome: 'succeeded', avsResponseCode: avs });
  });

  it.each([
    ['222', 'not_provided'],
    ['333', 'no_match'],
    ['123', 'match'],
  ] as const)('security code %s → CVV %s', async (securityCode, cvv) => {
    const card = { number: '4111111111111111', expirationDate: '11/25', securityCode };
    const result = await connector.authorize(authorizeRequest({ paymentInstrument: { type: 'card', card } }));
    expect(result).toMatchObject({ outcome: 'succeeded', cvvResponseCode: cvv });
  });
});

describe('operations after an authorization', () => {
  it('captures twice, refunds, and counts each call once', async () => {
    const request = authorizeRequest({ amount: 1000 });
    const auth = await connector.authorize(request);
    const providerTransactionId = auth.outcome === 'succeeded' ? auth.providerTransactionId! : '';
    const ref = { reference: request.reference, providerTransactionId };
    expect(await connector.capture({ ...ref, amount: 400, currency: 'USD', final: false })).toMatchObject({
      outcome: 'succeeded',
      capturedAmount: 400,
    });
    expect(
      await connector.capture({ ...ref, amount: 600, currency: 'USD', previouslyCapturedAmount: 400 }),
    ).toMatchObject({ outcome: 'succeeded', capturedAmount: 1000 });
    expect(
      await connector.capture({ ...ref, amount: 1, currency: 'USD', previouslyCapturedAmount: 1000 }),
    ).toMatchObject({ outcome: 'failed', errorCode: 'invalid_amount' });
    expect(await connector.refund({ ...ref, refundReference: 'refund-1', amount: 300, currency: 'USD' })).toMatchObject(
      { outcome: 'succeeded' },
    );
    expect(simulator.ledger.counts(request.reference)).toEqual({
      authorizations: 1,
      captures: 3,
      voids: 0,
      cancels: 0,
      refunds: 1,
      increments: 0,
      syncs: 0,
    });
    const synced = await connector.sync(ref);
    expect(synced).toMatchObject({
      outcome: 'found',
      transaction: { status: 'captured', capturedAmount: 1000, refundedAmount: 300 },
    });
  });

  it('voids an uncaptured authorization, after which a capture fails', async () => {
    const request = authorizeRequest();
    const auth = await connector.authorize(request);
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'succeeded' ? auth.providerTransactionId! : '',
    };
    expect(await connector.void(ref)).toMatchObject({ outcome: 'succeeded' });
    expect(await connector.capture({ ...ref, amount: 100, currency: 'USD' })).toMatchObject({
      outcome: 'failed',
      errorCode: 'unexpected_state',
    });
  });

  it('increments an authorization; an increment by a decline amount is declined', async () => {
    const request = authorizeRequest({ amount: 5000 });
    const auth = await connector.authorize(request);
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'succeeded' ? auth.providerTransactionId! : '',
    };
    expect(await connector.incrementAuthorization({ ...ref, amount: 700, currency: 'USD' })).toMatchObject({
      outcome: 'succeeded',
      authorizedAmount: 5700,
    });
    expect(await connector.incrementAuthorization({ ...ref, amount: 200011, currency: 'USD' })).toMatchObject({
      outcome: 'declined',
      errorCode: 'insufficient_funds',
      authorizedAmount: 5700,
    });
  });

  it('declines every capture on 500007', async () => {
    const request = authorizeRequest({ amount: 500007 });
    const auth = await connector.authorize(request);
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'succeeded' ? auth.providerTransactionId! : '',
    };
    expect(await connector.capture({ ...ref, amount: 500007, currency: 'USD' })).toMatchObject({
      outcome: 'declined',
      errorCode: 'expired_authorization',
    });
  });

  it('cancels a pending authorization before its notification settles it', async () => {
    const request = authorizeRequest({ amount: 500001 });
    const auth = await connector.authorize(request);
    expect(auth).toMatchObject({ outcome: 'pending' });
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'pending' ? auth.providerTransactionId! : '',
    };
    expect(await connector.cancel(ref)).toMatchObject({ outcome: 'succeeded' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await connector.sync(ref)).toMatchObject({ outcome: 'found', transaction: { status: 'cancelled' } });
    expect(notificationsFor(request.reference)).toHaveLength(0);
  });
});

describe('unknown outcomes and infrastructure errors', () => {
  it('gives unknown on a timeout; sync by reference then finds the authorization that was made', async () => {
    const impatient = connect({ timeoutMs: 200 });
    const request = authorizeRequest({ amount: 500006 });
    expect(await impatient.authorize(request)).toEqual({ outcome: 'unknown' });
    expect(simulator.ledger.counts(request.reference).authorizations).toBe(1);
    const synced = await impatient.sync({ reference: request.reference });
    expect(synced).toMatchObject({ outcome: 'found', transaction: { status: 'authorized', authorizedAmount: 500006 } });
    expect(await impatient.sync({ reference: 'never-seen' })).toEqual({ outcome: 'not_found' });
  });

  it('answers slowly on 501000 + n, then approves: an ordinary one sent after it is answered first', async () => {
    // Order, not a stopwatch: the slow one (1 s) has reached the simulator before the ordinary one is sent.
    const answered: string[] = [];
    const slowRequest = authorizeRequest({ amount: 501_100 });
    const slow = connector.authorize(slowRequest).finally(() => answered.push('slow'));
    const reachedTheSimulator = () => expect(simulator.ledger.counts(slowRequest.reference).authorizations).toBe(1);
    await vi.waitFor(reachedTheSimulator, { timeout: 10_000 });
    const ordinary = await connector.authorize(authorizeRequest()).finally(() => answered.push('ordinary'));
    expect(ordinary).toMatchObject({ outcome: 'succeeded' });
    expect(await slow).toMatchObject({ outcome: 'succeeded', authorizedAmount: 501_100 });
    expect(answered).toEqual(['ordinary', 'slow']);
  });

  it('throws a retriable ConnectorUnavailableError on 503 (500010), recording nothing', async () => {
    const request = authorizeRequest({ amount: 500010 });
    await expect(connector.authorize(request)).rejects.toMatchObject({
      type: 'connector_unavailable',
      retriable: true,
      status: 503,
    });
    expect(simulator.ledger.counts(request.reference).authorizations).toBe(0);
  });

  it('throws a retriable ConnectorUnavailableError when the connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await connect({ baseUrl: `http://127.0.0.1:${port}` })
      .authorize(authorizeRequest())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorUnavailableError);
    expect(error).toMatchObject({ retriable: true });
  });
});

describe('capabilities turned off per connection', () => {
  const allOff = {
    multipleCaptures: false,
    incrementalAuthorization: false,
    networkTokens: false,
    trackingForwarding: false,
    threeDSecure: false,
    delayedCapture: false,
  };

  it('refuses without calling the simulator', async () => {
    const restricted = connect({ capabilities: allOff });
    const request = authorizeRequest();
    const ref = { reference: request.reference, providerTransactionId: 'sim_txn_unused' };
    expect(await restricted.authorize(request)).toEqual({
      outcome: 'refused',
      reason: 'capability_disabled',
      capability: 'delayedCapture',
    });
    expect(
      await restricted.authorize({
        ...request,
        capture: true,
        paymentInstrument: {
          type: 'network-token',
          networkToken: { token: '4111111111111111', expirationDate: '11/25' },
        },
      }),
    ).toMatchObject({ capability: 'networkTokens' });
    expect(
      await restricted.authorize({
        ...request,
        capture: true,
        threeDSecure: { version: '2.2.0', eci: '05', cryptogram: 'AAAA' },
      }),
    ).toMatchObject({ capability: 'threeDSecure' });
    expect(await restricted.capture({ ...ref, amount: 100, currency: 'USD', final: false })).toMatchObject({
      capability: 'multipleCaptures',
    });
    expect(
      await restricted.capture({
        ...ref,
        amount: 100,
        currency: 'USD',
        tracking: { carrier: 'ups', trackingNumber: '1Z' },
      }),
    ).toMatchObject({ capability: 'trackingForwarding' });
    expect(await restricted.incrementAuthorization({ ...ref, amount: 100, currency: 'USD' })).toMatchObject({
      capability: 'incrementalAuthorization',
    });
    expect(simulator.ledger.counts(request.reference)).toEqual({
      authorizations: 0,
      captures: 0,
      voids: 0,
      cancels: 0,
      refunds: 0,
      increments: 0,
      syncs: 0,
    });
    expect(restricted.capabilities).toMatchObject({ ...allOff, asynchronousRefundSettlement: true });
  });

  it('settles a 500008 refund at once when asynchronous refund settlement is off', async () => {
    const restricted = connect({ capabilities: { asynchronousRefundSettlement: false } });
    const request = authorizeRequest({ amount: 500008, capture: true });
    const auth = await restricted.authorize(request);
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'succeeded' ? auth.providerTransactionId! : '',
    };
    expect(await restricted.refund({ ...ref, refundReference: 'r-sync', amount: 100, currency: 'USD' })).toMatchObject({
      outcome: 'succeeded',
    });
  });
});

describe('notifications', () => {
  it('settles a pending authorization by a signed notification that parses back', async () => {
    const request = authorizeRequest({ amount: 500001 });
    const auth = await connector.authorize(request);
    expect(auth).toMatchObject({ outcome: 'pending' });
    const [delivered] = await harness.waitForNotifications(request.reference);
    const parsed = connector.parseNotification(delivered!.raw, delivered!.headers);
    expect(parsed).toMatchObject({
      type: 'authorization',
      status: 'authorized',
      reference: request.reference,
      providerTransactionId: auth.outcome === 'pending' ? auth.providerTransactionId : '',
      amount: 500001,
      sequence: 1,
    });
  });

  it('rejects a tampered body, a missing signature and a wrong secret', async () => {
    const request = authorizeRequest({ amount: 500002 });
    await connector.authorize(request);
    const [delivered] = await harness.waitForNotifications(request.reference);
    expect(connector.parseNotification(delivered!.raw, delivered!.headers)).toMatchObject({
      status: 'declined',
      errorCode: 'issuer_decline',
    });
    const tampered = delivered!.raw.replace('"declined"', '"authorized"');
    expect(() => connector.parseNotification(tampered, delivered!.headers)).toThrow(
      expect.objectContaining({ type: 'notification_rejected', reason: 'bad_signature' }) as Error,
    );
    expect(() => connector.parseNotification(delivered!.raw, {})).toThrow(NotificationRejectedError);
    expect(() => connect({ webhookSecret: 'other' }).parseNotification(delivered!.raw, delivered!.headers)).toThrow(
      expect.objectContaining({ reason: 'bad_signature' }) as Error,
    );
    const late = connect({ now: () => new Date(Date.now() + 3_600_000) });
    expect(() => late.parseNotification(delivered!.raw, delivered!.headers)).toThrow(
      expect.objectContaining({ reason: 'stale_timestamp' }) as Error,
    );
    expect(delivered!.headers[signatureHeader]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('delivers the 500004 notification twice with the same provider event id', async () => {
    const request = authorizeRequest({ amount: 500004 });
    await connector.authorize(request);
    const both = await harness.waitForNotifications(request.reference, 2);
    // The simulator sends one event a request.
    const [first, second] = both.map((n) => connector.parseNotification(n.raw, n.headers) as ProviderNotification);
    expect(first!.providerEventId).toBe(second!.providerEventId);
    expect(first).toEqual(second);
  });

  it('delivers 500005 notifications out of order: sequence 2 (authorized) before sequence 1 (pending)', async () => {
    const request = authorizeRequest({ amount: 500005 });
    expect(await connector.authorize(request)).toMatchObject({ outcome: 'pending' });
    const both = await harness.waitForNotifications(request.reference, 2);
    const parsed = both.map((n) => connector.parseNotification(n.raw, n.headers) as ProviderNotification);
    expect(parsed.map((n) => [n?.sequence, n?.type === 'authorization' && n.status])).toEqual([
      [2, 'authorized'],
      [1, 'pending'],
    ]);
  });

  it('delivers the 500003 failure notification while the authorize call is still running', async () => {
    const request = authorizeRequest({ amount: 500003 });
    const result = await connector.authorize(request);
    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'service_error' });
    const [delivered] = notificationsFor(request.reference);
    expect(connector.parseNotification(delivered!.raw, delivered!.headers)).toMatchObject({
      type: 'authorization',
      status: 'failed',
      errorCode: 'service_error',
    });
  });

  it('500011 answers approved but notifies failed, in either order across runs; the ledger and sync say failed', async () => {
    const notifiedBeforeAnswer = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const request = authorizeRequest({ amount: 500011 });
        const result = await connector.authorize(request);
        const notifiedFirst = notificationsFor(request.reference).length > 0;
        expect(result).toMatchObject({ outcome: 'succeeded', authorizedAmount: 500011, rawResponseCode: '00' });
        const [delivered] = await harness.waitForNotifications(request.reference);
        expect(connector.parseNotification(delivered!.raw, delivered!.headers)).toMatchObject({
          type: 'authorization',
          status: 'failed',
          errorCode: 'service_error',
          sequence: 1,
        });
        expect(await connector.sync({ reference: request.reference })).toMatchObject({
          transaction: { status: 'failed', errorCode: 'service_error', authorizedAmount: 0 },
        });
        return notifiedFirst;
      }),
    );
    expect(new Set(notifiedBeforeAnswer)).toEqual(new Set([true, false]));
  });

  it('keeps a 500008 refund pending until the settlement file, then notifies it', async () => {
    const request = authorizeRequest({ amount: 500008, capture: true });
    const auth = await connector.authorize(request);
    const ref = {
      reference: request.reference,
      providerTransactionId: auth.outcome === 'succeeded' ? auth.providerTransactionId! : '',
    };
    const refund = await connector.refund({ ...ref, refundReference: 'refund-async', amount: 2000, currency: 'USD' });
    expect(refund).toMatchObject({ outcome: 'pending' });
    const file = await simulator.produceSettlementFile();
    const providerRefundId = refund.outcome === 'pending' ? refund.providerRefundId : '';
    expect(file.content).toContain(
      `refund,${ref.providerTransactionId},${request.reference},${providerRefundId},refund-async,2000,USD,settled,`,
    );
    const [delivered] = notificationsFor(request.reference);
    expect(connector.parseNotification(delivered!.raw, delivered!.headers)).toMatchObject({
      type: 'refund',
      status: 'succeeded',
      providerRefundId,
      refundReference: 'refund-async',
      amount: 2000,
    });
    expect(await connector.sync(ref)).toMatchObject({
      transaction: { refundedAmount: 2000, refunds: [{ status: 'succeeded' }] },
    });
    expect((await simulator.produceSettlementFile()).content).not.toContain(providerRefundId!);
  });

  it('sends a vault-token notification when asked to store the card', async () => {
    const request = authorizeRequest({ storePaymentMethod: true });
    await connector.authorize(request);
    const [delivered] = await harness.waitForNotifications(request.reference);
    expect(connector.parseNotification(delivered!.raw, delivered!.headers)).toMatchObject({
      type: 'vault-token',
      cardLast4: '1111',
      expirationDate: '11/25',
    });
  });
});

describe('outages and failover', () => {
  it('fails one merchant id with 503, recording nothing, while another on the same simulator succeeds', async () => {
    const down = connect({ merchantId: 'merchant-down' });
    const request = authorizeRequest();
    simulator.setOutage('merchant-down', true);
    await expect(down.authorize(request)).rejects.toMatchObject({
      type: 'connector_unavailable',
      retriable: true,
      status: 503,
    });
    expect(simulator.ledger.counts(request.reference).authorizations).toBe(0);
    expect(await connector.authorize(request)).toMatchObject({ outcome: 'succeeded' });
    simulator.setOutage('merchant-down', false);
    expect(await down.authorize(authorizeRequest())).toMatchObject({ outcome: 'succeeded' });
  });

  it('PUT and DELETE /v1/outages/{merchant_id} switch every authorization POST of that merchant; reads still answer', async () => {
    const merchant = connect({ merchantId: 'merchant-http' });
    const request = authorizeRequest();
    const ref = {
      reference: request.reference,
      providerTransactionId: providerIdOf(await merchant.authorize(request))!,
    };
    expect((await fetch(`${simulator.url}/v1/outages/merchant-http`, { method: 'PUT' })).status).toBe(204);
    await expect(merchant.capture({ ...ref, amount: 1299, currency: 'USD' })).rejects.toMatchObject({ status: 503 });
    expect(await merchant.sync(ref)).toMatchObject({ outcome: 'found', transaction: { status: 'authorized' } });
    expect((await fetch(`${simulator.url}/v1/outages/merchant-http`, { method: 'DELETE' })).status).toBe(204);
    expect(await merchant.capture({ ...ref, amount: 1299, currency: 'USD' })).toMatchObject({ outcome: 'succeeded' });
    expect(simulator.ledger.counts(request.reference).captures).toBe(1);
  });

  it('sync by reference finds the latest of two authorizations of one reference (failover to a second connection)', async () => {
    const request = authorizeRequest();
    const first = providerIdOf(await connect({ merchantId: 'merchant-a' }).authorize(request));
    const second = providerIdOf(await connect({ merchantId: 'merchant-b' }).authorize({ ...request, capture: true }));
    expect(second).not.toBe(first);
    expect(await connector.sync({ reference: request.reference })).toMatchObject({
      outcome: 'found',
      transaction: { providerTransactionId: second, status: 'captured' },
    });
    expect(simulator.ledger.counts(request.reference).authorizations).toBe(2);
  });
});

describe('registry', () => {
  it('knows mock-card with every capability', () => {
    const definition = connectorRegistry.get('mock-card');
    expect(definition).toMatchObject({ id: 'mock-card', displayName: 'Card simulator' });
    expect(Object.values(definition!.capabilities).every(Boolean)).toBe(true);
  });
});
