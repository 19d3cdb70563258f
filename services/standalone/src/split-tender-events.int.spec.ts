/**
 * Issue 19, item 3: split tender's stored gift cards redeemed by the gift cards service, asked with events
 * (`GiftCardRedemptionRequested`/`GiftCardReversalRequested` on the transaction stream, the answers on the gift cards
 * service's `gift-card-redemption-<id>`), in the embedded runtime (the in-process bus between them). The number and
 * PIN of a stored card reach neither the transactions service's store nor its requests; a roll-back reverses through
 * the gift cards service; a success reported after the roll-back is reversed and never completes the payment.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { EVENT_ID_HEADER, giftCardsTopic, type EventMessage } from '@switchyard/contracts';
import { waitFor } from '@switchyard/testing';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'split-events';

let serial = 0;
const giftNumber = () => `606062${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++serial).padStart(4, '1')}`;

async function ledger(number: string): Promise<{ balance: number; redemptions: { status: string; amount: number }[] }> {
  const response = await fetch(`${h.simulator.url}/v1/gift-cards/cards/${number}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { balance: number; redemptions: { status: string; amount: number }[] };
}

const pay = (body: Record<string, unknown>) =>
  h
    .http()
    .post('/transactions')
    .set(h.headers(account))
    .send({ currency: 'USD', ...body });

async function storedCard(pin = '05000'): Promise<{ id: string; number: string }> {
  const number = giftNumber();
  const created = await h.http().post('/gift-cards').set(h.headers(account)).send({ number, pin });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id as string, number };
}

/** A store's events (read-only), optionally of one stream. */
function eventsOf(file: string, streamId?: string): { stream_id: string; type: string; data: string }[] {
  const db = new Database(path.join(h.fixture.dataDir, file), { readonly: true });
  try {
    const rows = db.prepare('SELECT stream_id, type, data FROM events ORDER BY position').all() as {
      stream_id: string;
      type: string;
      data: string;
    }[];
    return streamId ? rows.filter((row) => row.stream_id === streamId) : rows;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  h = await startHarness('split-tender-events', { simulator: {} });
  await h.createAccount(account);
  await h.createConnection(account);
  await h.createConnection(account, {
    display_name: 'Gift cards',
    payment_service_definition_id: 'mock-gift-card',
    fields: [],
  });
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

it('a stored card is redeemed by the gift cards service: request and answer are events, no number in transactions.db', async () => {
  const card = await storedCard();
  const response = await pay({
    amount: 3_000,
    intent: 'capture',
    payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
    gift_cards: [{ id: card.id, amount: 1_200 }],
  });
  expect(response.status, response.text).toBe(201);
  expect(response.body).toMatchObject({
    status: 'capture_succeeded',
    captured_amount: 1_800,
    gift_card_redemptions: [expect.objectContaining({ status: 'succeeded', amount: 1_200 })],
  });
  expect((await ledger(card.number)).balance).toBe(5_000 - 1_200);

  const stream = eventsOf('transactions.db', `transaction-${response.body.id}`);
  const types = stream.map((event) => event.type);
  expect(types).toContain('GiftCardRedemptionRequested');
  expect(types.indexOf('GiftCardRedemptionRequested')).toBeLessThan(types.indexOf('GiftCardRedemptionSucceeded'));
  const redemptionId = (
    JSON.parse(stream.find((e) => e.type === 'GiftCardRedemptionRequested')!.data) as {
      redemptionId: string;
    }
  ).redemptionId;
  expect(eventsOf('gift-cards.db', `gift-card-redemption-${redemptionId}`).map((event) => event.type)).toEqual([
    'GiftCardRedemptionStarted',
    'GiftCardRedeemed',
  ]);
  // The middle digits of the number and the PIN: nowhere in the transactions service's store.
  const everything = eventsOf('transactions.db')
    .map((event) => event.data)
    .join('\n');
  expect(everything).not.toContain(card.number.slice(6, 15));
});

it('rolled back through the gift cards service; a success reported after the roll-back is reversed, never completes', async () => {
  const card = await storedCard();
  const poor = { number: giftNumber(), pin: '00100', amount: 1_000 }; // holds 1.00: insufficient_funds
  // The stored card first: redeemed, then reversed when the second fails.
  const response = await pay({ amount: 2_000, gift_cards: [{ id: card.id, amount: 1_000 }, poor] });
  expect(response.status, response.text).toBe(201);
  expect(response.body).toMatchObject({ status: 'authorization_failed', error_code: 'insufficient_funds' });
  expect((response.body.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual([
    'reversed',
    'failed',
  ]);
  expect((await ledger(card.number)).balance).toBe(5_000);
  const reversedId = (
    JSON.parse(
      eventsOf('transactions.db', `transaction-${response.body.id}`).find(
        (e) => e.type === 'GiftCardReversalRequested',
      )!.data,
    ) as { redemptionId: string }
  ).redemptionId;
  expect(eventsOf('gift-cards.db', `gift-card-redemption-${reversedId}`).map((e) => e.type)).toEqual([
    'GiftCardRedemptionStarted',
    'GiftCardRedeemed',
    'GiftCardRedemptionUndone',
  ]);

  // The stored card second, after a card that fails: never asked of the provider, its reversal reverses nothing.
  const second = await pay({
    amount: 2_000,
    gift_cards: [
      { number: giftNumber(), pin: '00100', amount: 1_000 },
      { id: card.id, amount: 1_000 },
    ],
  });
  expect(second.body).toMatchObject({ status: 'authorization_failed', error_code: 'insufficient_funds' });
  const statuses = (second.body.gift_card_redemptions as { status: string }[]).map((r) => r.status);
  const transactionId = second.body.id as string;
  const streamId = `transaction-${transactionId}`;
  const requested = eventsOf('transactions.db', streamId).filter((e) => e.type === 'GiftCardReversalRequested');
  expect(requested).toHaveLength(1);
  const redemptionId = (JSON.parse(requested[0]!.data) as { redemptionId: string }).redemptionId;
  expect(eventsOf('gift-cards.db', `gift-card-redemption-${redemptionId}`).map((e) => e.type)).toEqual([
    'GiftCardRedemptionUndone',
  ]);

  // A success for that redemption arrives late (a second report, as a redelivery after a crash could bring one).
  const late: EventMessage = {
    id: randomUUID(),
    type: 'GiftCardRedeemed',
    name: null,
    names: [],
    stream_id: `gift-card-redemption-${redemptionId}`,
    revision: 9,
    position: '999999',
    recorded_at: new Date().toISOString(),
    occurred_at: new Date().toISOString(),
    correlation_id: null,
    causation_id: null,
    schema_version: 1,
    data: { redemptionId, transactionId, merchantAccountId: account, providerRedemptionId: 'late', amount: 1_000 },
    metadata: {},
  };
  await h.fixture.service.bus.publish(giftCardsTopic, [
    { key: late.stream_id, value: JSON.stringify(late), headers: { [EVENT_ID_HEADER]: late.id } },
  ]);
  await waitFor(
    'the late success reversed',
    async () =>
      eventsOf('transactions.db', streamId).filter((e) => e.type === 'GiftCardReversalRequested').length === 2 ||
      undefined,
    10_000,
  );
  const after = await h.http().get(`/transactions/${transactionId}`).set(h.headers(account));
  expect(after.body).toMatchObject({ status: 'authorization_failed', error_code: 'insufficient_funds' });
  expect((after.body.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual(statuses);
  await waitFor(
    'the reversal answered',
    async () =>
      eventsOf('gift-cards.db', `gift-card-redemption-${redemptionId}`).length === 1 &&
      eventsOf('transactions.db', streamId).at(-1)?.type === 'GiftCardReversalRequested'
        ? true
        : undefined,
    10_000,
  );
  // The gift cards service reverses a redemption once: the card keeps its balance.
  expect((await ledger(card.number)).balance).toBe(5_000);
});
