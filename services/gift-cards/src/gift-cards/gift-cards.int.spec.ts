/**
 * The gift cards slice over a real store, read model and vault, beside the payment services that hold the gift card
 * service, with the real gift card provider: the simulator (`mock-gift-card`, docs/simulator.md "Gift cards"), a
 * fresh one per test, called by its connector. Store, read, list, delete, balances, issue and activate, usage
 * counted from the transaction streams (the transactions service's store), and no number or PIN anywhere but the vault.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import {
  ConnectorUnavailableError,
  giftCardDigitsOf,
  mockGiftCardDefinition,
  MockGiftCardConnector,
  type GiftCardConnector,
} from '@switchyard/connectors';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { giftCardServiceDirectory, PaymentServices } from '@switchyard/transactions';
import { GiftCardsService } from '../gift-cards-service';
import type { GiftCards } from './gift-cards.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const shopA = { merchant_account_id: 'shop-a' };
const shopB = { merchant_account_id: 'shop-b' };
// Digits 7–15 appear in neither the BIN, sub-BIN nor last four: searched for wherever the card must not be.
// The simulator: a PIN starting with 0 holds the PIN as an integer, a number ending 0000 is expired, PIN 10000 is
// refused (invalid_gift_card); a card first seen by a balance check holds US dollars.
const NUMBER = '6033991234567894321';
const PIN = '0150073';
const SIMULATOR_MERCHANT = 'sim-gift-cards';

/** The real connector, counting what the slice asks of the provider; `loseAnswer` loses the next answer of one. */
function counting(connector: GiftCardConnector, calls: string[]): GiftCardConnector {
  return new Proxy(connector, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        calls.push(String(key));
        const answer: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        answers.push(answer);
        if (loseAnswer !== key) return answer;
        // The provider did the work; its answer never came back in time.
        loseAnswer = undefined;
        throw new ConnectorUnavailableError('mock-gift-card timed out', true, undefined, { timedOut: true });
      };
    },
  });
}

let dir: string;
/** The transactions service's storage: the payment services (the gift card service) and the transaction streams. */
let storage: ServiceStorage;
let host: ServiceHost;
/** The gift cards service's own. */
let cardsStorage: ServiceStorage;
let service: GiftCardsService;
let paymentServices: PaymentServices;
let giftCards: GiftCards;
let simulator: RunningSimulator;
/** The provider calls the slice made, by connector method. */
let calls: string[];
/** The connector method whose next answer is lost after the provider did the work (a timeout on the way back). */
let loseAnswer: keyof GiftCardConnector | undefined;
/** What the provider answered each call, lost or not. */
let answers: unknown[];
let clock = Date.parse('2026-01-01T00:00:00.000Z');

beforeEach(async () => {
  dir = createTestDataDir('gift-cards');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date((clock += 1000)) });
  paymentServices = new PaymentServices(host.context);
  simulator = await startSimulator({ webhookSecret: 'whsec_gift_cards_slice' });
  calls = [];
  loseAnswer = undefined;
  answers = [];
  const config = { baseUrl: simulator.url, merchantId: SIMULATOR_MERCHANT };
  const connector = new MockGiftCardConnector(config, mockGiftCardDefinition);
  const provider = counting(connector, calls);
  cardsStorage = openServiceStorage('gift-cards', { dataDir: dir });
  service = new GiftCardsService({
    store: cardsStorage.store,
    db: cardsStorage.db,
    now: () => new Date((clock += 1000)),
    key: randomBytes(32),
    fingerprintKey: randomBytes(32),
    services: giftCardServiceDirectory(paymentServices, () => provider),
    transactionEvents: storage.store,
  });
  giftCards = service.giftCards;
  host.add(paymentServices);
  await catchUp();
});
afterEach(async () => {
  await service.stop();
  await host.stop();
  await cardsStorage.close();
  await storage.close();
  await simulator.stop();
  removeTestDataDir(dir);
});

const giftCardService = (
  merchantAccountId: string,
  overrides: { active?: boolean; payment_service_definition_id?: string } = {},
) =>
  paymentServices.create(merchantAccountId, {
    display_name: 'Gift cards',
    payment_service_definition_id: 'mock-gift-card',
    fields: [],
    accepted_currencies: ['EUR'],
    accepted_countries: ['NL'],
    ...overrides,
  });

const store = (scope = shopA, body: Record<string, unknown> = {}) =>
  giftCards.create({
    ...scope,
    body: { number: NUMBER, pin: PIN, buyer_external_identifier: 'buyer-1', ...body } as never,
  });

/** A gift card charge of a payment, as the split-payment flow appends it to its transaction's stream. */
const redeemed = (giftCardId: string | undefined, merchantInitiated: boolean, at: string) =>
  storage.store.append(
    `transaction-${randomUUID()}`,
    [
      {
        type: 'GiftCardRedemptionSucceeded',
        data: {
          redemptionId: randomUUID(),
          ...(giftCardId ? { giftCardId } : {}),
          providerRedemptionId: 'r-1',
          merchantInitiated,
          at,
        },
      },
    ],
    { expectedRevision: 'no_stream' },
  );

const rejection = async (promise: Promise<unknown>): Promise<ApiError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};

/** Both stores' logs. */
const everything = async () => JSON.stringify([await storage.store.readAll(), await cardsStorage.store.readAll()]);

const catchUp = async () => {
  await host.catchUp();
  await service.catchUp();
};

describe('stored gift cards', () => {
  it('stores a card the service accepts: number and PIN in the vault only, the rest in its stream and read model', async () => {
    const service = await giftCardService('shop-a');
    const card = await store();
    expect(card).toEqual({
      type: 'gift-card',
      id: expect.any(String),
      merchant_account_id: 'shop-a',
      gift_card_service: {
        type: 'gift-card-service',
        id: service.id,
        gift_card_service_definition_id: 'mock-gift-card',
        display_name: 'Gift cards',
      },
      bin: '603399',
      sub_bin: '1234',
      last4: '4321',
      currency: 'USD',
      expiration_date: null,
      buyer: {
        type: 'buyer',
        id: null,
        merchant_account_id: 'shop-a',
        display_name: null,
        external_identifier: 'buyer-1',
        inquiries: [],
        created_at: card.created_at,
        updated_at: card.created_at,
      },
      usage_count: 0,
      cit_usage_count: 0,
      last_used_at: null,
      cit_last_used_at: null,
      created_at: expect.any(String),
      updated_at: card.created_at,
    });
    expect(await giftCards.get({ ...shopA, gift_card_id: card.id })).toEqual(card);
    expect(giftCards.credentialsFor('shop-a', card.id)).toEqual({ number: NUMBER, pin: PIN });
    expect(giftCards.credentialsFor('shop-b', card.id)).toBeNull();
    await expect(giftCards.get({ ...shopB, gift_card_id: card.id })).rejects.toMatchObject({ status: 404 });

    const events = await cardsStorage.store.readStream(`gift-card-${card.id}`);
    expect(events.map((event) => event.type)).toEqual(['GiftCardStored']);
    expect(events[0]!.data).toMatchObject({
      bin: '603399',
      subBin: '1234',
      last4: '4321',
      buyerExternalIdentifier: 'buyer-1',
      buyerId: null,
    });
    const all = await everything();
    for (const secret of [NUMBER, NUMBER.slice(8, 15), PIN]) expect(all).not.toContain(secret);
  });

  it('does not store a card the service refuses (400 naming the code), nor without a gift card service', async () => {
    expect(await rejection(store())).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type: 'no_gift_card_service' })],
    });
    await giftCardService('shop-a', { active: false });
    expect(await rejection(store())).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type: 'no_gift_card_service' })],
    });
    // A card connection is not a gift card service.
    await giftCardService('shop-a', { payment_service_definition_id: 'mock-card' });
    expect(await rejection(store())).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type: 'no_gift_card_service' })],
    });

    await giftCardService('shop-a');
    const wrongPin = await rejection(store(shopA, { pin: '10000' }));
    const message = '10000: Validation error: the gift card number or PIN is not valid.';
    const detail = { location: 'body', pointer: '', type: 'invalid_gift_card', message };
    expect(wrongPin).toMatchObject({ status: 400, code: 'bad_request', details: [detail] });
    expect(wrongPin.message).toMatch(/invalid_gift_card/);
    expect(await rejection(store(shopA, { number: '6033991234567890000' }))).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type: 'expired_card' })],
    });
    expect((await giftCards.list({ ...shopA, limit: 20 })).items).toEqual([]);
    expect(cardsStorage.db.prepare('SELECT count(*) AS n FROM vault_gift_cards').get()).toEqual({ n: 0 });
  });

  it('answers 502 when the gift card service cannot be reached, and stores nothing', async () => {
    await giftCardService('shop-a');
    simulator.setOutage(SIMULATOR_MERCHANT, true);
    expect(await rejection(store())).toMatchObject({ status: 502, code: 'bad_gateway' });
    expect(
      await rejection(giftCards.balances({ ...shopA, body: { items: [{ number: NUMBER, pin: PIN }] } })),
    ).toMatchObject({ status: 502 });
    expect((await giftCards.list({ ...shopA, limit: 20 })).items).toEqual([]);
  });

  it('lists newest first, pages, filters by buyer, and keeps accounts apart', async () => {
    await giftCardService('shop-a');
    await giftCardService('shop-b');
    const first = await store(shopA, { buyer_external_identifier: 'buyer-1' });
    const second = await store(shopA, {
      buyer_external_identifier: null,
      buyer_id: '0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b',
    });
    const third = await store(shopA, { buyer_external_identifier: 'buyer-1' });
    await store(shopB);
    const ids = (page: { items: readonly { id: string }[] }) => page.items.map((item) => item.id);
    expect(ids(await giftCards.list({ ...shopA, limit: 20 }))).toEqual([third.id, second.id, first.id]);
    const page1 = await giftCards.list({ ...shopA, limit: 2 });
    expect(page1).toMatchObject({ limit: 2, previous_cursor: null, next_cursor: expect.any(String) });
    const page2 = await giftCards.list({ ...shopA, limit: 2, cursor: page1.next_cursor });
    expect(ids(page2)).toEqual([first.id]);
    expect(page2.next_cursor).toBeNull();
    expect(ids(await giftCards.list({ ...shopA, limit: 2, cursor: page2.previous_cursor }))).toEqual([
      third.id,
      second.id,
    ]);
    expect(ids(await giftCards.list({ ...shopA, limit: 20, buyer_external_identifier: 'buyer-1' }))).toEqual([
      third.id,
      first.id,
    ]);
    expect(
      ids(await giftCards.list({ ...shopA, limit: 20, buyer_id: '0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b' })),
    ).toEqual([second.id]);
    expect(second.buyer).toMatchObject({ id: '0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b', external_identifier: null });
    expect((await store(shopA, { buyer_external_identifier: null })).buyer).toBeNull();
  });

  it('deletes: the number and PIN are erased at once, the card is gone for every reader, and another account cannot delete it', async () => {
    await giftCardService('shop-a');
    const card = await store();
    expect(await rejection(giftCards.delete({ ...shopB, gift_card_id: card.id }))).toMatchObject({ status: 404 });
    expect(giftCards.credentialsFor('shop-a', card.id)).not.toBeNull();

    await giftCards.delete({ ...shopA, gift_card_id: card.id });
    expect(giftCards.credentialsFor('shop-a', card.id)).toBeNull();
    expect(cardsStorage.db.prepare('SELECT count(*) AS n FROM vault_gift_cards').get()).toEqual({ n: 0 });
    await expect(giftCards.get({ ...shopA, gift_card_id: card.id })).rejects.toMatchObject({ status: 404 });
    expect((await giftCards.list({ ...shopA, limit: 20 })).items).toEqual([]);
    expect(await rejection(giftCards.delete({ ...shopA, gift_card_id: card.id }))).toMatchObject({ status: 404 });
    expect(await rejection(giftCards.balances({ ...shopA, body: { items: [{ id: card.id }] } }))).toMatchObject({
      status: 404,
    });
    expect((await cardsStorage.store.readStream(`gift-card-${card.id}`)).map((event) => event.type)).toEqual([
      'GiftCardStored',
      'GiftCardDeleted',
    ]);
  });
});

describe('usage, from the transaction streams', () => {
  it('counts every redemption of a stored card, buyer-initiated ones apart, and sorts a buyer’s cards by last use', async () => {
    await giftCardService('shop-a');
    const [used, cit, never] = [await store(), await store(), await store()];
    const other = await store(shopA, { buyer_external_identifier: 'buyer-2' });

    await redeemed(used.id, true, '2026-02-01T10:00:00.000Z');
    await redeemed(used.id, true, '2026-02-03T10:00:00.000Z');
    await redeemed(used.id, true, '2026-02-02T10:00:00.000Z'); // late: last_used_at stays the latest
    await redeemed(cit.id, false, '2026-02-01T12:00:00.000Z');
    await redeemed(cit.id, true, '2026-02-01T13:00:00.000Z');
    await redeemed(undefined, false, '2026-02-04T00:00:00.000Z'); // a card given by number: nothing stored to count
    await redeemed(randomUUID(), false, '2026-02-04T00:00:00.000Z'); // unknown card: ignored
    await catchUp();

    expect(await giftCards.get({ ...shopA, gift_card_id: used.id })).toMatchObject({
      usage_count: 3,
      cit_usage_count: 0,
      last_used_at: '2026-02-03T10:00:00.000Z',
      cit_last_used_at: null,
    });
    expect(await giftCards.get({ ...shopA, gift_card_id: cit.id })).toMatchObject({
      usage_count: 2,
      cit_usage_count: 1,
      last_used_at: '2026-02-01T13:00:00.000Z',
      cit_last_used_at: '2026-02-01T12:00:00.000Z',
    });

    const order = (order_by: 'asc' | 'desc') =>
      giftCards
        .buyerList({ ...shopA, buyer_external_identifier: 'buyer-1', sort_by: 'last_used_at', order_by })
        .items.map((item) => item.id);
    expect(order('desc')).toEqual([used.id, cit.id, never.id]);
    expect(order('asc')).toEqual([cit.id, used.id, never.id]);
    const [summary] = giftCards.buyerList({
      ...shopA,
      buyer_external_identifier: 'buyer-1',
      sort_by: 'last_used_at',
      order_by: 'desc',
    }).items;
    expect(summary).toEqual({
      type: 'gift-card',
      id: used.id,
      merchant_account_id: 'shop-a',
      bin: '603399',
      sub_bin: '1234',
      last4: '4321',
      currency: 'USD',
      expiration_date: null,
      balance: null,
      balance_error_code: null,
      balance_raw_error_code: null,
      balance_raw_error_message: null,
      usage_count: 3,
      cit_usage_count: 0,
      last_used_at: '2026-02-03T10:00:00.000Z',
      cit_last_used_at: null,
    });
    expect(
      giftCards
        .buyerList({ ...shopA, buyer_external_identifier: 'buyer-2', sort_by: 'last_used_at', order_by: 'desc' })
        .items.map((item) => item.id),
    ).toEqual([other.id]);
    expect(
      giftCards.buyerList({ ...shopB, buyer_external_identifier: 'buyer-1', sort_by: 'last_used_at', order_by: 'desc' })
        .items,
    ).toEqual([]);
    // The stores only: listing asks the service nothing.
    expect(calls.filter((call) => call === 'balance')).toHaveLength(4);
  });

  it('rebuilds the same counters from the log', async () => {
    await giftCardService('shop-a');
    const card = await store();
    await redeemed(card.id, false, '2026-02-01T10:00:00.000Z');
    await catchUp();
    const before = await giftCards.get({ ...shopA, gift_card_id: card.id });
    cardsStorage.db.exec(
      "DELETE FROM gift_cards; DELETE FROM gift_card_usage; DELETE FROM checkpoints WHERE name IN ('projection:gift-cards', 'projection:gift-card-usage')",
    );
    await catchUp();
    expect(await giftCards.get({ ...shopA, gift_card_id: card.id })).toEqual(before);
  });
});

describe('balances, issue and activate', () => {
  it('answers one summary per card in order: given by number, stored, refused', async () => {
    await giftCardService('shop-a');
    const stored = await store(shopA, { pin: '02000' });
    const { items } = await giftCards.balances({
      ...shopA,
      body: {
        items: [
          { number: '6033990000000001000', pin: '01000' },
          { id: stored.id },
          { number: '6033990000000000000', pin: '01000' },
          { number: NUMBER, pin: '10000' },
        ],
      },
    });
    expect(
      items.map((item) => [
        item.id,
        item.last4,
        item.balance,
        item.currency,
        item.balance_error_code,
        item.balance_raw_error_code,
      ]),
    ).toEqual([
      [null, '1000', 1000, 'USD', null, null],
      [stored.id, '4321', 2000, 'USD', null, null],
      [null, '0000', null, null, 'expired_card', '10001'],
      [null, '4321', null, null, 'invalid_gift_card', '10000'],
    ]);
    const refused = { balance_raw_error_message: 'Validation error: the gift card number or PIN is not valid.' };
    expect(items[3]).toMatchObject({ ...refused, usage_count: 0, last_used_at: null });

    const unknown = await rejection(
      giftCards.balances({ ...shopA, body: { items: [{ number: NUMBER, pin: PIN }, { id: randomUUID() }] } }),
    );
    expect(unknown).toMatchObject({
      status: 404,
      details: [expect.objectContaining({ location: 'body', pointer: '/items/1/id', type: 'gift_card_not_found' })],
    });
    expect(await rejection(giftCards.balances({ ...shopB, body: { items: [{ id: stored.id }] } }))).toMatchObject({
      status: 404,
    });
  });

  it('issues a card: its number and PIN answered, replayed for the same Idempotency-Key, kept only sealed', async () => {
    await giftCardService('shop-a');
    const body = { theme: 'birthday', amount: 5000, currency: 'EUR' };
    const issued = await giftCards.issue({ ...shopA, body, idempotency_key: 'issue-1' });
    // The simulator makes up the number (16–19 digits) and the PIN (0 and 7 digits): as a real provider would.
    const card = { number: issued.number as string, pin: issued.pin as string };
    expect(card.number).toMatch(/^\d{16,19}$/);
    expect(card.pin).toMatch(/^0\d{7}$/);
    const digits = giftCardDigitsOf(card.number);
    expect(issued).toEqual({
      type: 'gift-card',
      id: null,
      merchant_account_id: 'shop-a',
      ...{ bin: digits.bin, sub_bin: digits.subBin, last4: digits.last4 },
      currency: 'EUR',
      expiration_date: null,
      balance: 5000,
      balance_error_code: null,
      balance_raw_error_code: null,
      balance_raw_error_message: null,
      usage_count: 0,
      cit_usage_count: 0,
      last_used_at: null,
      cit_last_used_at: null,
      ...card,
    });
    // The provider holds it as answered.
    expect(simulator.giftCard(card.number)).toMatchObject({ balance: 5000, currency: 'EUR' });
    expect(await giftCards.issue({ ...shopA, body, idempotency_key: 'issue-1' })).toEqual(issued);
    expect(calls).toEqual(['issue']);
    expect(
      await rejection(giftCards.issue({ ...shopA, body: { ...body, amount: 1 }, idempotency_key: 'issue-1' })),
    ).toMatchObject({ status: 409 });
    const kept = JSON.stringify(cardsStorage.db.prepare('SELECT * FROM idempotency_keys').all());
    expect(kept).toContain('issue-1');
    for (const secret of [card.number, card.pin]) expect(kept).not.toContain(secret);
    expect(await everything()).not.toContain(card.number);

    // Without a key, another card.
    const another = await giftCards.issue({ ...shopA, body });
    expect(another).toMatchObject({ balance: 5000, currency: 'EUR' });
    expect(another.number).not.toBe(card.number);
    expect(calls).toEqual(['issue', 'issue']);
  });

  it('activates a card: its summary with the balance; idempotent by key', async () => {
    await giftCardService('shop-a');
    // A card first seen with PIN 0987654 holds 9,876.54; the activation loads 25.00 more.
    const body = { number: NUMBER, pin: '0987654', amount: 2500, currency: 'EUR' };
    const activated = await giftCards.activate({ ...shopA, body, idempotency_key: 'activate-1' });
    const loaded = { balance: 987_654 + 2_500, currency: 'EUR', balance_error_code: null };
    expect(activated).toMatchObject({ id: null, bin: '603399', sub_bin: '1234', last4: '4321', ...loaded });
    expect(await giftCards.activate({ ...shopA, body, idempotency_key: 'activate-1' })).toEqual(activated);
    expect(calls).toEqual(['activate']);
    expect(simulator.giftCard(NUMBER)).toMatchObject({ balance: 987_654 + 2_500 });
    for (const secret of [NUMBER, '0987654'])
      expect(JSON.stringify(cardsStorage.db.prepare('SELECT * FROM idempotency_keys').all())).not.toContain(secret);
  });

  it('issues one card when the answer is lost: a retry with the key gets the card the provider issued, not a second', async () => {
    await giftCardService('shop-a');
    const body = { theme: 'birthday', amount: 5000, currency: 'EUR' };
    loseAnswer = 'issue';
    expect(await rejection(giftCards.issue({ ...shopA, body, idempotency_key: 'issue-lost' }))).toMatchObject({
      status: 504,
    });
    const retried = await giftCards.issue({ ...shopA, body, idempotency_key: 'issue-lost' });
    // The provider is asked again with the same reference and answers the card it issued the first time.
    expect(calls).toEqual(['issue', 'issue']);
    expect(simulator.giftCard(retried.number as string)).toMatchObject({ balance: 5000, currency: 'EUR' });
    // The retry's answer is kept with the key: the next one is a replay, without the provider.
    expect(await giftCards.issue({ ...shopA, body, idempotency_key: 'issue-lost' })).toEqual(retried);
    expect(calls).toEqual(['issue', 'issue']);
    // Both answers of the provider, the lost one and the retry's (the key keeps the reference), name the one card.
    const theCard = expect.objectContaining({ number: retried.number, pin: retried.pin });
    expect(answers).toEqual([theCard, theCard]);
    for (const secret of [retried.number as string, retried.pin as string])
      expect(JSON.stringify(cardsStorage.db.prepare('SELECT * FROM idempotency_keys').all())).not.toContain(secret);
  });

  it('loads a card once when the activation’s answer is lost and the request is retried with its key', async () => {
    await giftCardService('shop-a');
    const body = { number: NUMBER, pin: '0987654', amount: 2500, currency: 'EUR' };
    loseAnswer = 'activate';
    expect(await rejection(giftCards.activate({ ...shopA, body, idempotency_key: 'activate-lost' }))).toMatchObject({
      status: 504,
    });
    const activated = await giftCards.activate({ ...shopA, body, idempotency_key: 'activate-lost' });
    expect(activated).toMatchObject({ balance: 987_654 + 2_500 });
    expect(simulator.giftCard(NUMBER)).toMatchObject({ balance: 987_654 + 2_500 });
    expect(calls).toEqual(['activate', 'activate']);
    expect(await giftCards.activate({ ...shopA, body, idempotency_key: 'activate-lost' })).toEqual(activated);
    expect(calls).toEqual(['activate', 'activate']);
  });
});
