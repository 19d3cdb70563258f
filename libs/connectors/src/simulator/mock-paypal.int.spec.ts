import type { AuthorizationResult, AuthorizeRequest, CapabilityRefusal, Connector } from '../connector';
import { connectorRegistry } from '../index';
import { mockPaypalDefinition } from './mock-paypal-definition';
import { newReference, startSimulatorHarness, submitForm, type SimulatorHarness } from './simulator.harness';

let harness: SimulatorHarness;
let paypal: Connector;

beforeAll(async () => {
  harness = await startSimulatorHarness();
  paypal = harness.connect({}, mockPaypalDefinition);
});

afterAll(() => harness.stop());

const returnUrl = 'https://switchyard.example/transactions/t-1/return?step=approval';

function walletRequest(overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    reference: newReference(),
    amount: 1299,
    currency: 'USD',
    paymentInstrument: { type: 'redirect', redirect: { method: 'paypal', returnUrl, country: 'US' } },
    capture: false,
    ...overrides,
  };
}

/** Authorizes and checks the answer only asks for the buyer's approval; the simulator's transaction id. */
async function awaitingBuyer(request: AuthorizeRequest): Promise<{ id: string; approvalUrl: string }> {
  const result: AuthorizationResult | CapabilityRefusal = await paypal.authorize(request);
  if (result.outcome !== 'buyer_approval_required') throw new Error(`unexpected outcome ${result.outcome}`);
  expect(result.approvalUrl).toBe(`${harness.simulator.url}/v1/approvals/${result.providerTransactionId}`);
  return { id: result.providerTransactionId!, approvalUrl: result.approvalUrl! };
}

async function notifiedStatus(reference: string) {
  const [delivered] = await harness.waitForNotifications(reference);
  return paypal.parseNotification(delivered!.raw, delivered!.headers);
}

describe('buyer approval', () => {
  it('approves on the page: 303 back with the provider transaction id, then a signed `authorized` notification', async () => {
    const request = walletRequest();
    const { id, approvalUrl } = await awaitingBuyer(request);
    expect(await paypal.sync({ reference: request.reference })).toMatchObject({
      transaction: { status: 'buyer_approval_required', authorizedAmount: 0 },
    });
    expect(harness.notificationsFor(request.reference)).toHaveLength(0);

    const page = await fetch(approvalUrl);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const body = await page.text();
    expect(body).toContain('12.99 USD');
    expect(body).toContain('paypal');
    expect(body).toMatch(/name="decision" value="approve">Pay with PayPal</);
    expect(body).toMatch(/name="decision" value="cancel">Cancel and return</);

    const answer = await submitForm(approvalUrl, { decision: 'approve' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`${returnUrl}&provider_transaction_id=${id}`);
    expect(await notifiedStatus(request.reference)).toMatchObject({
      type: 'authorization',
      status: 'authorized',
      providerTransactionId: id,
      amount: 1299,
      sequence: 1,
    });
    expect(await paypal.sync({ reference: request.reference, providerTransactionId: id })).toMatchObject({
      transaction: { status: 'authorized', authorizedAmount: 1299 },
    });
    expect((await submitForm(approvalUrl, { decision: 'cancel' })).status).toBe(409);
  });

  it.each([
    [1299, true, { status: 'captured' }],
    [200011, false, { status: 'declined', errorCode: 'insufficient_funds' }],
    [300013, false, { status: 'failed', errorCode: 'service_error' }],
  ])('approval of %i (capture %s) follows the amount table: %o', async (amount, capture, notified) => {
    const request = walletRequest({ amount, capture });
    const { approvalUrl } = await awaitingBuyer(request);
    expect((await submitForm(approvalUrl, { decision: 'approve' })).status).toBe(303);
    expect(await notifiedStatus(request.reference)).toMatchObject(notified);
  });

  it('cancel on the page: declined with cancelled_buyer_approval, by notification only', async () => {
    const request = walletRequest();
    const { approvalUrl } = await awaitingBuyer(request);
    expect((await submitForm(approvalUrl, { decision: 'cancel' })).status).toBe(303);
    expect(await notifiedStatus(request.reference)).toMatchObject({
      status: 'declined',
      errorCode: 'cancelled_buyer_approval',
      rawResponseCode: '200022',
    });
    const again = await fetch(approvalUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'approval_completed' });
  });

  it('cancel from the merchant before the buyer decides: cancelled, and the page is closed', async () => {
    const request = walletRequest();
    const { id, approvalUrl } = await awaitingBuyer(request);
    expect(await paypal.cancel({ reference: request.reference, providerTransactionId: id })).toMatchObject({
      outcome: 'succeeded',
    });
    expect((await fetch(approvalUrl)).status).toBe(409);
  });
});

describe('after approval', () => {
  it('captures, refunds and voids like a card', async () => {
    const captured = walletRequest({ amount: 5000 });
    const first = await awaitingBuyer(captured);
    await submitForm(first.approvalUrl, { decision: 'approve' });
    const ref = { reference: captured.reference, providerTransactionId: first.id };
    expect(await paypal.capture({ ...ref, amount: 5000, currency: 'USD' })).toMatchObject({
      outcome: 'succeeded',
      capturedAmount: 5000,
    });
    expect(
      await paypal.refund({ ...ref, refundReference: 'wallet-refund', amount: 2000, currency: 'USD' }),
    ).toMatchObject({ outcome: 'succeeded' });

    const voided = walletRequest();
    const second = await awaitingBuyer(voided);
    await submitForm(second.approvalUrl, { decision: 'approve' });
    expect(await paypal.void({ reference: voided.reference, providerTransactionId: second.id })).toMatchObject({
      outcome: 'succeeded',
    });
  });
});

describe('definition', () => {
  it('is registered as mock-paypal with delayed capture only, and refuses what it cannot do', async () => {
    expect(connectorRegistry.get('mock-paypal')).toMatchObject({ id: 'mock-paypal', displayName: 'PayPal simulator' });
    expect(paypal.definitionId).toBe('mock-paypal');
    expect(Object.entries(paypal.capabilities).filter(([, on]) => on)).toEqual([['delayedCapture', true]]);
    const ref = { reference: 'unused', providerTransactionId: 'sim_txn_unused' };
    expect(await paypal.capture({ ...ref, amount: 100, currency: 'USD', final: false })).toMatchObject({
      outcome: 'refused',
      capability: 'multipleCaptures',
    });
    expect(await paypal.incrementAuthorization({ ...ref, amount: 100, currency: 'USD' })).toMatchObject({
      outcome: 'refused',
      capability: 'incrementalAuthorization',
    });
  });
});
