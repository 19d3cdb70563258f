/**
 * Transactions and refunds through the existing client (`@gr4vy/sdk` 1.10.18): create (with the client's defaults,
 * an idempotency key and X-Forwarded-For), get, list with filters (walked page by page), update, capture with and
 * without `Prefer`, void with and without it, cancel, sync, events (walked), actions, refunds, refunds/all, and a
 * refund by id. Every answer passes the client's own schemas, including its union of capture and void results.
 */
import { randomUUID } from 'node:crypto';
import type { Gr4vy } from '@gr4vy/sdk';
import { Error400 } from '@gr4vy/sdk/models/errors/error400.js';
import { Error404 } from '@gr4vy/sdk/models/errors/error404.js';
import { Error409 } from '@gr4vy/sdk/models/errors/error409.js';
import { CLIENT_TEST_CARD, startWireRuntime, walkPages, type WireRuntime } from './wire-client';

let w: WireRuntime;
let client: Gr4vy;
let account: string;

beforeAll(async () => {
  w = await startWireRuntime('transactions');
  account = await w.merchantAccountWithConnection();
  client = w.client(account);
});
afterAll(() => w?.stop());

const card = { method: 'card' as const, ...CLIENT_TEST_CARD };
const authorize = (overrides: Partial<Parameters<Gr4vy['transactions']['create']>[0]> = {}) =>
  client.transactions.create({ amount: 1299, currency: 'USD', paymentMethod: card, ...overrides });

describe('a card payment’s life', () => {
  it('create (idempotent, X-Forwarded-For), get, update, capture (Prefer), refunds, refunds/all, by id', async () => {
    const key = randomUUID();
    const created = await client.transactions.create(
      {
        amount: 1299,
        currency: 'USD',
        country: 'US',
        paymentMethod: card,
        externalIdentifier: 'order-1',
        metadata: { cart: 'c-1' },
      },
      undefined,
      key,
      '203.0.113.7',
    );
    expect(created).toMatchObject({
      status: 'authorization_succeeded',
      amount: 1299,
      authorizedAmount: 1299,
      intent: 'authorize',
      instrumentType: 'pan',
    });
    expect(created).toMatchObject({
      merchantInitiated: false,
      isSubsequentPayment: false,
      accountFundingTransaction: false,
      paymentSource: 'ecommerce',
    });
    const replayed = await client.transactions.create(
      {
        amount: 1299,
        currency: 'USD',
        country: 'US',
        paymentMethod: card,
        externalIdentifier: 'order-1',
        metadata: { cart: 'c-1' },
      },
      undefined,
      key,
    );
    expect(replayed.id).toBe(created.id);
    await expect(
      client.transactions.create({ amount: 1300, currency: 'USD', paymentMethod: card }, undefined, key),
    ).rejects.toBeInstanceOf(Error409);

    expect(await client.transactions.get(created.id)).toMatchObject({
      id: created.id,
      status: 'authorization_succeeded',
    });
    const updated = await client.transactions.update(
      { externalIdentifier: 'order-1b', metadata: { cart: 'c-2' } },
      created.id,
    );
    expect(updated).toMatchObject({ externalIdentifier: 'order-1b', metadata: { cart: 'c-2' } });

    const capture = await client.transactions.capture({
      transactionId: created.id,
      transactionCaptureCreate: { amount: 1000 },
      prefer: ['resource=transaction-capture'],
    });
    expect(capture).toMatchObject({
      type: 'transaction-capture',
      status: 'succeeded',
      transaction: { id: created.id, status: 'capture_succeeded', capturedAmount: 1000 },
    });

    const refund = await client.transactions.refunds.create(
      { amount: 300, reason: 'damaged' },
      created.id,
      undefined,
      randomUUID(),
    );
    expect(refund).toMatchObject({
      transactionId: created.id,
      amount: 300,
      currency: 'USD',
      targetType: 'payment-method',
      reason: 'damaged',
    });
    const rest = await client.transactions.refunds.all.create(created.id);
    expect(rest.items).toEqual([expect.objectContaining({ amount: 700, transactionId: created.id })]);
    const refunds = await client.transactions.refunds.list(created.id);
    expect(refunds.items.map((item) => item.amount).sort((a, b) => a - b)).toEqual([300, 700]);
    expect(await client.transactions.refunds.get(created.id, refund.id)).toMatchObject({ id: refund.id, amount: 300 });
    expect(await client.refunds.get(refund.id)).toMatchObject({ id: refund.id, transactionId: created.id });
    await expect(client.refunds.get(randomUUID())).rejects.toBeInstanceOf(Error404);
  });

  it('capture without Prefer answers the transaction; intent capture needs none', async () => {
    const authorized = await authorize();
    const captured = await client.transactions.capture({ transactionId: authorized.id, transactionCaptureCreate: {} });
    expect(captured).toMatchObject({ id: authorized.id, status: 'capture_succeeded', capturedAmount: 1299 });
    const direct = await authorize({ intent: 'capture' });
    expect(direct).toMatchObject({ status: 'capture_succeeded', capturedAmount: 1299, intent: 'capture' });
  });

  it('void with and without Prefer; a second void and a capture after it are refused', async () => {
    const first = await authorize();
    const voided = await client.transactions.void(first.id, ['resource=transaction-void']);
    expect(voided).toMatchObject({
      type: 'transaction-void',
      status: 'succeeded',
      transaction: { id: first.id, status: 'authorization_voided' },
    });
    const second = await authorize();
    expect(await client.transactions.void(second.id)).toMatchObject({ id: second.id, status: 'authorization_voided' });
    await expect(
      client.transactions.capture({ transactionId: second.id, transactionCaptureCreate: {} }),
    ).rejects.toBeInstanceOf(Error400);
  });

  it('sync answers the transaction as the provider knows it', async () => {
    const authorized = await authorize();
    expect(await client.transactions.sync(authorized.id)).toMatchObject({
      id: authorized.id,
      status: 'authorization_succeeded',
    });
  });

  it('cancel of a payment awaiting the buyer answers the cancel result', async () => {
    await client.paymentServices.create({
      displayName: 'PayPal',
      paymentServiceDefinitionId: 'mock-paypal',
      fields: [{ key: 'merchant_id', value: 'wire' }],
      acceptedCurrencies: ['USD'],
      acceptedCountries: ['US'],
    });
    const pending = await client.transactions.create({
      amount: 1299,
      currency: 'USD',
      country: 'US',
      paymentMethod: { method: 'paypal', country: 'US', currency: 'USD', redirectUrl: 'https://shop.example/return' },
    });
    expect(pending).toMatchObject({
      status: 'buyer_approval_pending',
      paymentMethod: { method: 'paypal', approvalUrl: expect.any(String) },
    });
    const canceled = await client.transactions.cancel(pending.id);
    expect(canceled).toMatchObject({
      type: 'transaction-cancel',
      status: 'succeeded',
      transaction: { id: pending.id },
    });
  });
});

describe('what a transaction recorded', () => {
  it('events (walked page by page) and the flow rules that matched (actions)', async () => {
    const connection = (await client.paymentServices.list({ method: 'card' })).result.items[0]!.id!;
    // The client has no flow rule operations (ours are outside the spec): the rule is added on the wire.
    const rule = await w.harness.createFlowRule(account, {
      action: 'route-transaction',
      conditions: [{ name: 'amount', operator: 'greater_than_or_equal', value: 90_000 }],
      outcome: { type: 'list', result: [connection] },
    });
    const paid = await authorize({ amount: 95_000 });
    await client.transactions.capture({ transactionId: paid.id, transactionCaptureCreate: {} });

    const walked = await walkPages(await client.transactions.events.list(paid.id, undefined, 1));
    expect(walked.items.length).toBeGreaterThan(1);
    expect(walked.pages).toBe(walked.items.length);
    expect(new Set(walked.items.map((event) => event.id)).size).toBe(walked.items.length);
    const actions = await client.transactions.actions.list(paid.id);
    expect(actions.items).toEqual([
      expect.objectContaining({ id: 'route-transaction', flow: 'card-transaction', ruleId: rule }),
    ]);
  });
});

describe('the transaction list', () => {
  it('walks our cursors to the end and applies the client’s filters', async () => {
    const buyer = await client.buyers.create({ displayName: 'Lister', externalIdentifier: 'lister-1' });
    const mine = [];
    for (const amount of [2001, 2002, 2003])
      mine.push(await authorize({ amount, buyerId: buyer.id!, externalIdentifier: `list-${amount}` }));
    await client.transactions.capture({ transactionId: mine[0]!.id, transactionCaptureCreate: {} });

    const walked = await walkPages(await client.transactions.list({ buyerId: buyer.id!, limit: 2 }));
    expect(walked.pages).toBe(2);
    expect(walked.items.map((item) => item.id).sort()).toEqual(mine.map((item) => item.id).sort());
    const since = new Date(Date.now() - 60_000);
    const filtered = await client.transactions.list({
      buyerExternalIdentifier: 'lister-1',
      status: ['authorization_succeeded'],
      amountGte: 2002,
      amountLte: 2003,
      currency: ['USD'],
      createdAtGte: since,
      updatedAtGte: since,
    });
    expect(filtered.result.items.map((item) => item.amount).sort()).toEqual([2002, 2003]);
    expect(
      (await client.transactions.list({ externalIdentifier: 'list-2001' })).result.items.map((item) => item.id),
    ).toEqual([mine[0]!.id]);
    expect((await client.transactions.list({ id: mine[1]!.id })).result.items.map((item) => item.amount)).toEqual([
      2002,
    ]);
    expect((await client.transactions.list({ amountEq: 2003, buyerId: buyer.id! })).result.items).toHaveLength(1);
  });

  it('never answered a card number', () => {
    expect(w.harness.leaks).toEqual([]);
  });
});
