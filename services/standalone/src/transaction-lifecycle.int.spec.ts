/**
 * Issue 4 acceptance, over HTTP: the full lifecycles of the reference's status list — capture, void, cancel of a
 * pending authorization, `intent: capture`, and the asynchronous ones the simulator drives by notification over real
 * HTTP (500001 pending → authorized, 500002 → declined, 500004 duplicate, 500005 out of order, 500007 capture declined).
 *
 * The simulator runs outside the embedded runtime (MOCK_CARD_URL) with a settle delay long enough to cancel a
 * pending authorization before it settles.
 */
import { signatureHeader, signNotification } from '@switchyard/connectors';
import { expectErrorBody } from '@switchyard/testing';
import { HARNESS_WEBHOOK_SECRET, isoWithOffset, startHarness, type Harness } from './transactions.harness';

const SETTLE_DELAY_MS = 400;
let h: Harness;
const account = 'life';
let connectionId: string;

beforeAll(async () => {
  h = await startHarness('lifecycle', { settleDelayMs: SETTLE_DELAY_MS });
  await h.createAccount(account);
  connectionId = await h.createConnection(account);
});

afterAll(() => h?.stop());

const post = (path: string, body?: object, extra: Record<string, string> = {}) => {
  const req = h.http().post(path).set(h.headers(account)).set(extra);
  return body === undefined ? req : req.send(body);
};
const eventsOf = async (id: string): Promise<string[]> =>
  (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body.items.map(
    (item: { context: { event: string } }) => item.context.event,
  );
const notificationUrl = () => `${h.baseUrl}/payment-services/${connectionId}/notifications`;
/** Waits until `count` more notifications (than `from`) were delivered; returns them. */
async function deliveriesAfter(from: number, count: number, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (h.simulator.deliveries.length < from + count) {
    if (Date.now() > deadline)
      throw new Error(`expected ${count} deliveries, saw ${h.simulator.deliveries.length - from}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return h.simulator.deliveries.slice(from, from + count);
}

describe('authorize, then', () => {
  it('capture → capture_succeeded', async () => {
    const t = await h.authorize(account, { amount: 7_500 });
    expect(t).toMatchObject({ status: 'authorization_succeeded', captured_at: null });
    const captured = await post(`/transactions/${t.id}/capture`, {}).expect(200);
    expect(captured.body).toMatchObject({
      type: 'transaction',
      id: t.id,
      status: 'capture_succeeded',
      authorized_amount: 7_500,
      captured_amount: 7_500,
      intent_outcome: 'succeeded',
    });
    expect(captured.body.captured_at).toMatch(isoWithOffset);
    expect(await h.get(account, t.id)).toEqual(captured.body);
    expect(h.simulator.ledger.counts(t.id)).toMatchObject({ authorizations: 1, captures: 1 });
    // Captured money is refunded, not voided.
    expectErrorBody((await post(`/transactions/${t.id}/void`).expect(400)).body, 400, 'bad_request');
  });

  it('void → authorization_voided; nothing can be captured or voided afterwards', async () => {
    const t = await h.authorize(account, { amount: 1_500 });
    const voided = await post(`/transactions/${t.id}/void`, undefined, { Prefer: 'resource=transaction-void' }).expect(
      200,
    );
    expect(voided.body).toMatchObject({
      type: 'transaction-void',
      status: 'succeeded',
      code: null,
      transaction: { id: t.id, status: 'authorization_voided' },
    });
    expect(voided.body.transaction.voided_at).toMatch(isoWithOffset);
    expect(await h.get(account, t.id)).toMatchObject({ status: 'authorization_voided', captured_amount: 0 });
    expect((await post(`/transactions/${t.id}/capture`, {}).expect(400)).body.message).toMatch(/void/i);
    await post(`/transactions/${t.id}/void`).expect(400);
    expect(h.simulator.ledger.counts(t.id)).toMatchObject({ voids: 1, captures: 0 });
    expect(await eventsOf(t.id)).toEqual(expect.arrayContaining(['VoidRequested', 'VoidSucceeded']));
  });

  it('void without Prefer answers the transaction', async () => {
    const t = await h.authorize(account, { amount: 1_600 });
    const voided = await post(`/transactions/${t.id}/void`).expect(200);
    expect(voided.body).toMatchObject({ type: 'transaction', id: t.id, status: 'authorization_voided' });
  });

  it('cancel is refused (400) once authorized, without calling the payment service', async () => {
    const t = await h.authorize(account, { amount: 1_700 });
    const refused = await post(`/transactions/${t.id}/cancel`).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.message).toMatch(/void or refund/);
    expect(h.simulator.ledger.counts(t.id).cancels).toBe(0);
    expect((await h.get(account, t.id)).status).toBe('authorization_succeeded');
  });
});

describe('intent: capture', () => {
  it('processing → capture_succeeded in one call, with one direct, final capture', async () => {
    const t = await h.authorize(account, { amount: 2_200, intent: 'capture' });
    expect(t).toMatchObject({
      status: 'capture_succeeded',
      intent: 'capture',
      authorized_amount: 2_200,
      captured_amount: 2_200,
      intent_outcome: 'succeeded',
    });
    const captures = (await h.http().get(`/transactions/${t.id}/captures`).set(h.headers(account)).expect(200)).body;
    expect(captures).toMatchObject({
      items: [{ type: 'transaction-capture', status: 'succeeded', amount: 2_200, final: true, tracking: [] }],
      next_cursor: null,
    });
    expect(h.simulator.ledger.counts(t.id)).toMatchObject({ authorizations: 1, captures: 0 });
    await post(`/transactions/${t.id}/capture`, { amount: 1 }).expect(400);
  });
});

describe('pending authorizations settled by notification (over real HTTP)', () => {
  it('500001: processing → authorization_succeeded when the notification arrives', async () => {
    const from = h.simulator.deliveries.length;
    const t = await h.authorize(account, { amount: 500_001 });
    expect(t).toMatchObject({
      status: 'processing',
      intent_outcome: 'pending',
      payment_service_transaction_id: expect.any(String),
    });
    const settled = await h.waitFor(account, t.id, (x) => x.status !== 'processing', SETTLE_DELAY_MS + 5_000);
    expect(settled).toMatchObject({ status: 'authorization_succeeded', authorized_amount: 500_001, error_code: null });
    expect(await deliveriesAfter(from, 1)).toEqual([expect.objectContaining({ url: notificationUrl(), status: 204 })]);
  });

  it('500001 with intent capture: processing → capture_succeeded by notification', async () => {
    const t = await h.authorize(account, { amount: 500_001, intent: 'capture' });
    expect(t.status).toBe('processing');
    expect(await h.waitFor(account, t.id, (x) => x.status !== 'processing', SETTLE_DELAY_MS + 5_000)).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 500_001,
    });
  });

  it('500001 canceled before it settles: cancel succeeds, and the transaction stays canceled', async () => {
    const t = await h.authorize(account, { amount: 500_001 });
    expect(t.status).toBe('processing');
    // Not authorized yet: nothing to capture or void.
    expect((await post(`/transactions/${t.id}/capture`, {}).expect(400)).body.message).toMatch(/not authorized/);
    await post(`/transactions/${t.id}/void`).expect(400);
    const canceled = await post(`/transactions/${t.id}/cancel`).expect(200);
    expect(canceled.body).toMatchObject({ type: 'transaction-cancel', status: 'succeeded', transaction: { id: t.id } });
    expect(canceled.body.transaction.canceled_at).toMatch(isoWithOffset);
    // None of the reference's nine statuses says "canceled": a canceled authorization ends failed, error_code canceled.
    expect(canceled.body.transaction).toMatchObject({
      status: 'authorization_failed',
      error_code: 'canceled',
      intent_outcome: 'failed',
    });
    expect(h.simulator.ledger.counts(t.id).cancels).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS + 200));
    const after = await h.get(account, t.id);
    expect(after).toMatchObject({ status: canceled.body.transaction.status, authorized_amount: 0 });
    await post(`/transactions/${t.id}/capture`, {}).expect(400);
    await post(`/transactions/${t.id}/cancel`).expect(400);
  });

  it('500002: processing → authorization_declined by notification (issuer_decline)', async () => {
    const t = await h.authorize(account, { amount: 500_002 });
    expect(t.status).toBe('processing');
    const settled = await h.waitFor(account, t.id, (x) => x.status !== 'processing', SETTLE_DELAY_MS + 5_000);
    expect(settled).toMatchObject({
      status: 'authorization_declined',
      error_code: 'issuer_decline',
      raw_response_code: '200012',
      intent_outcome: 'failed',
    });
    // The decline reached the issuer: its AVS and CVV results come with it.
    expect(settled).toMatchObject({ avs_response_code: 'unavailable', cvv_response_code: 'match' });
  });

  // The transaction is already authorized here, so applying the copy would change nothing either: the deduplication
  // itself is proven against a pending authorization below ("the same notification delivered twice is applied once").
  it('500004: a notification the simulator sends twice is acknowledged (204) twice, changing nothing', async () => {
    const from = h.simulator.deliveries.length;
    const t = await h.authorize(account, { amount: 500_004 });
    expect(t.status).toBe('authorization_succeeded');
    const before = await eventsOf(t.id);
    const [first, second] = await deliveriesAfter(from, 2, SETTLE_DELAY_MS + 5_000);
    expect(first).toMatchObject({ url: notificationUrl(), status: 204 });
    expect(second).toEqual(first);
    const after = await eventsOf(t.id);
    expect(after).toEqual(before);
    expect(after.filter((event) => event === 'AuthorizationSucceeded')).toHaveLength(1);
    expect((await h.get(account, t.id)).status).toBe('authorization_succeeded');
  });

  it('500005: notifications out of order (authorized, then the older pending) end authorized', async () => {
    const from = h.simulator.deliveries.length;
    const t = await h.authorize(account, { amount: 500_005 });
    expect(t.status).toBe('processing');
    const delivered = await deliveriesAfter(from, 2, SETTLE_DELAY_MS + 5_000);
    expect(delivered.map((d) => d.status)).toEqual([204, 204]);
    expect(delivered[0]!.eventId).not.toBe(delivered[1]!.eventId);
    const t2 = await h.get(account, t.id);
    expect(t2).toMatchObject({ status: 'authorization_succeeded', authorized_amount: 500_005 });
    expect((await eventsOf(t.id)).filter((event) => event === 'AuthorizationSucceeded')).toHaveLength(1);
  });

  it('500010: an outage at the payment service → authorization_failed (service_unavailable), nothing recorded there', async () => {
    const t = await h.authorize(account, { amount: 500_010 });
    expect(t).toMatchObject({ status: 'authorization_failed', error_code: 'service_unavailable' });
    expect(h.simulator.ledger.counts(t.id).authorizations).toBe(0);
  });
});

/**
 * Notifications a pending authorization would obey: its own harness, whose simulator takes an hour to settle 500001,
 * so the transaction stays `processing` for as long as the test needs and only the notifications sent here reach it.
 */
describe('the provider-notification endpoint, against an authorization still pending', () => {
  let pending: Harness;
  let pendingConnection: string;
  beforeAll(async () => {
    pending = await startHarness('lifecycle-notifications', { settleDelayMs: 3_600_000 });
    await pending.createAccount(account);
    pendingConnection = await pending.createConnection(account);
  });
  afterAll(() => pending?.stop());

  const notify = (body: string, signature?: string) => {
    const url = `/payment-services/${pendingConnection}/notifications`;
    const request = pending.http().post(url).set('content-type', 'application/json');
    return (signature === undefined ? request : request.set(signatureHeader, signature)).send(body);
  };
  const now = () => Math.floor(Date.now() / 1000);
  const eventsOfPending = async (id: string): Promise<string[]> =>
    (await pending.http().get(`/transactions/${id}/events`).set(pending.headers(account)).expect(200)).body.items.map(
      (item: { context: { event: string } }) => item.context.event,
    );
  /** A well-formed authorization notification about `t`, as the simulator would send it. */
  const notification = (t: { id: string; [field: string]: unknown }, eventId: string, fields: object) =>
    JSON.stringify({
      event_id: eventId,
      type: 'authorization',
      sequence: 2,
      occurred_at: new Date().toISOString(),
      reference: t.id,
      transaction_id: t.payment_service_transaction_id,
      amount: 500_001,
      currency: 'USD',
      ...fields,
    });

  it('401 for an unsigned or forged notification, which leaves the authorization pending, no new event', async () => {
    const t = await pending.authorize(account, { amount: 500_001 });
    expect(t.status).toBe('processing');
    const before = await eventsOfPending(t.id);
    const body = notification(t, `evt-forged-${t.id}`, { status: 'declined', error_code: 'issuer_decline' });
    const altered = body.replace('"declined"', '"authorized"');
    const forgeries: [string, string | undefined][] = [
      ['unsigned', undefined],
      ['a signature of zeros', `t=${now()},v1=${'0'.repeat(64)}`],
      ['signed with another secret', signNotification('whsec_someone_else_0123456789', body, now())],
      ['the signature of another body', signNotification(HARNESS_WEBHOOK_SECRET, altered, now())],
      ['signed an hour ago', signNotification(HARNESS_WEBHOOK_SECRET, body, now() - 3_600)],
    ];
    for (const [forgery, signature] of forgeries) {
      const refused = await notify(body, signature);
      expect(refused.status, `${forgery}: ${refused.text}`).toBe(401);
      expectErrorBody(refused.body, 401, 'unauthorized');
    }
    expect(await pending.get(account, t.id)).toMatchObject({ status: 'processing', error_code: null });
    expect(await eventsOfPending(t.id)).toEqual(before);
    // What the refusals kept out: the same notification, signed, declines the authorization.
    await notify(body, signNotification(HARNESS_WEBHOOK_SECRET, body, now())).expect(204);
    const declined = await pending.get(account, t.id);
    expect(declined).toMatchObject({ status: 'authorization_declined', error_code: 'issuer_decline' });
  });

  it('the same notification delivered twice is applied once: a second `pending` appends nothing', async () => {
    const t = await pending.authorize(account, { amount: 500_001 });
    expect(t.status).toBe('processing');
    const before = await eventsOfPending(t.id);
    const body = notification(t, `evt-twice-${t.id}`, { status: 'pending' });
    await notify(body, signNotification(HARNESS_WEBHOOK_SECRET, body, now())).expect(204);
    const once = await eventsOfPending(t.id);
    // Applied: each `pending` the provider sends is recorded, so a second delivery would be recorded again.
    expect(once).toEqual([...before, 'AuthorizationPending']);
    await notify(body, signNotification(HARNESS_WEBHOOK_SECRET, body, now())).expect(204);
    expect(await eventsOfPending(t.id)).toEqual(once);
    // Another event id with the same content is another notification: recorded.
    const another = notification(t, `evt-other-${t.id}`, { status: 'pending' });
    await notify(another, signNotification(HARNESS_WEBHOOK_SECRET, another, now())).expect(204);
    expect(await eventsOfPending(t.id)).toEqual([...once, 'AuthorizationPending']);
    expect((await pending.get(account, t.id)).status).toBe('processing');
  });
});

describe('capture declined (500007)', () => {
  it('the capture is declined and the transaction is back to authorization_succeeded', async () => {
    const t = await h.authorize(account, { amount: 500_007 });
    const declined = await post(`/transactions/${t.id}/capture`, {}, { Prefer: 'resource=transaction-capture' }).expect(
      200,
    );
    expect(declined.body).toMatchObject({
      type: 'transaction-capture',
      status: 'declined',
      amount: 500_007,
      code: 'expired_authorization',
      raw_response_code: '200004',
      transaction: { id: t.id, status: 'authorization_succeeded', captured_amount: 0 },
    });
    expect(await h.get(account, t.id)).toMatchObject({
      status: 'authorization_succeeded',
      captured_amount: 0,
      captured_at: null,
    });
    const events = await eventsOf(t.id);
    expect(events.slice(-2)).toEqual(['CaptureRequested', 'CaptureDeclined']);
    // The authorization is still open: a void releases it.
    await post(`/transactions/${t.id}/void`).expect(200);
    expect((await h.get(account, t.id)).status).toBe('authorization_voided');
  });
});

describe('the card number', () => {
  it('is never answered nor stored', () => {
    expect(h.leaks).toEqual([]);
    expect(h.filesWithPan()).toEqual([]);
  });
});
