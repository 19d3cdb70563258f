/**
 * Split tender's gift card side over events: redemption and reversal requests on `transactions.events` (the
 * in-process bus, delivering as Kafka would: at least once, in order per transaction) acted on by the gift cards
 * service — its store, vault and consumer — against the real provider (the simulator, a fresh one per test). Once per
 * redemption id whatever is redelivered, a crash between the provider call and its record, a reversal before its
 * request (a late request after a roll-back), and never a number or PIN outside the vault.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { InProcessMessageBus } from '@switchyard/bus';
import { mockGiftCardDefinition, MockGiftCardConnector, type GiftCardConnector } from '@switchyard/connectors';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import {
  EVENT_ID_HEADER,
  giftCardRedemptionEventTypes,
  giftCardRedemptionStream,
  transactionsTopic,
  type EventMessage,
  type GiftCardRedemptionRequestedData,
} from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import { giftCardServiceDirectory, PaymentServices } from '@switchyard/transactions';
import { GiftCardsService } from '../gift-cards-service';

const SHOP = 'shop-a';
// Digits 7–15 appear in neither the BIN, sub-BIN nor last four: searched for where the card must not be.
const NUMBER = '6033991234567894321';
const PIN = '0150073';

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let cardsStorage: ServiceStorage;
let service: GiftCardsService;
let paymentServices: PaymentServices;
let simulator: RunningSimulator;
let bus: InProcessMessageBus;
let connector: GiftCardConnector;
/** The provider calls made, by connector method. */
let calls: string[];
/** A provider that cannot be reached, while set. */
let unreachable: boolean;
/** Directory calls that fail as an unreachable transactions process does (502), before they answer again. */
let directoryDown: number;

beforeEach(async () => {
  dir = createTestDataDir('gift-card-redemptions');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db });
  paymentServices = new PaymentServices(host.context);
  host.add(paymentServices);
  simulator = await startSimulator({ webhookSecret: 'whsec_gift_card_redemptions' });
  calls = [];
  unreachable = false;
  directoryDown = 0;
  connector = new MockGiftCardConnector(
    { baseUrl: simulator.url, merchantId: 'sim-gift-cards' },
    mockGiftCardDefinition,
  );
  const down = new MockGiftCardConnector(
    { baseUrl: 'http://127.0.0.1:9', merchantId: 'sim-gift-cards', timeoutMs: 500 },
    mockGiftCardDefinition,
  );
  const provider = new Proxy(connector, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(unreachable ? down : target, args);
      };
    },
  });
  // One failed attempt parks a message, unless its failure is `retriable`.
  bus = new InProcessMessageBus({ publishWaitsForConsumers: true, redelivery: { maxAttempts: 1, initialDelayMs: 20 } });
  const directory = giftCardServiceDirectory(paymentServices, () => provider);
  cardsStorage = openServiceStorage('gift-cards', { dataDir: dir });
  service = new GiftCardsService({
    store: cardsStorage.store,
    db: cardsStorage.db,
    key: randomBytes(32),
    fingerprintKey: randomBytes(32),
    services: {
      ...directory,
      giftCardService: async (merchantAccountId, id) => {
        if (directoryDown > 0) {
          directoryDown -= 1;
          throw ApiError.badGateway(new Error('connect ECONNREFUSED (the transactions process)'));
        }
        return directory.giftCardService(merchantAccountId, id);
      },
    },
    transactionsTopic: { bus, groupId: 'gift-cards', comparePositions: () => 0 },
  });
  await host.catchUpAndFollow();
  await service.start();
});

afterEach(async () => {
  await service.stop();
  await bus.close();
  await host.stop();
  await cardsStorage.close();
  await storage.close();
  await simulator.stop();
  removeTestDataDir(dir);
});

/** The merchant account's gift card service and a card stored with it; the provider calls made so far forgotten. */
async function storedCard(): Promise<{ serviceId: string; giftCardId: string }> {
  const created = await paymentServices.create(SHOP, {
    display_name: 'Gift cards',
    payment_service_definition_id: 'mock-gift-card',
    fields: [],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  await host.catchUp();
  const card = await service.giftCards.create({ merchant_account_id: SHOP, body: { number: NUMBER, pin: PIN } });
  calls.length = 0;
  return { serviceId: created.id, giftCardId: card.id };
}

async function balance(giftCardId: string): Promise<number | null> {
  const answer = await service.giftCards.balances({ merchant_account_id: SHOP, body: { items: [{ id: giftCardId }] } });
  calls.pop();
  return answer.items[0]!.balance;
}

let position = 0;
/** Events of one transaction stream, as the transactions relay publishes them (key: the stream id). */
function publish(transactionId: string, ...events: { type: string; data: object; id?: string }[]): Promise<void> {
  const messages = events.map((event): EventMessage => {
    position += 1;
    return {
      id: event.id ?? randomUUID(),
      type: event.type,
      name: null,
      names: [],
      stream_id: `transaction-${transactionId}`,
      revision: position,
      position: String(position),
      recorded_at: '2026-02-01T10:00:00.000Z',
      occurred_at: '2026-02-01T10:00:00.000Z',
      correlation_id: null,
      causation_id: null,
      schema_version: 1,
      data: event.data as Record<string, unknown>,
      metadata: {},
    };
  });
  return bus.publish(
    transactionsTopic,
    messages.map((m) => ({ key: m.stream_id, value: JSON.stringify(m), headers: { [EVENT_ID_HEADER]: m.id } })),
  );
}

function redemption(card: { serviceId: string; giftCardId: string }, amount: number): GiftCardRedemptionRequestedData {
  return {
    redemptionId: randomUUID(),
    transactionId: randomUUID(),
    merchantAccountId: SHOP,
    giftCardServiceId: card.serviceId,
    giftCardId: card.giftCardId,
    amount,
    currency: 'USD',
  };
}

const request = (data: GiftCardRedemptionRequestedData) => ({ type: 'GiftCardRedemptionRequested', data });
const reversal = (data: GiftCardRedemptionRequestedData) => ({
  type: 'GiftCardReversalRequested',
  data: {
    redemptionId: data.redemptionId,
    transactionId: data.transactionId,
    merchantAccountId: data.merchantAccountId,
    giftCardServiceId: data.giftCardServiceId,
  },
});

async function outcomes(redemptionId: string) {
  const events = await cardsStorage.store.readStream(giftCardRedemptionStream(redemptionId));
  return events.map((event) => ({ type: event.type, data: event.data as Record<string, unknown> }));
}

it('redeems once however often the request is delivered, and records the answer on the redemption stream', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 1_000);
  const event = request(asked);

  await publish(asked.transactionId, event);
  // At least once: the same request again (a redelivery), and once more as a new message with the same data.
  await publish(asked.transactionId, { ...event, id: randomUUID() }, { ...event, id: randomUUID() });

  expect(calls).toEqual(['redeem']);
  expect(await balance(card.giftCardId)).toBe(before! - 1_000);
  const recorded = await outcomes(asked.redemptionId);
  expect(recorded.map((e) => e.type)).toEqual([
    giftCardRedemptionEventTypes.started,
    giftCardRedemptionEventTypes.redeemed,
  ]);
  expect(recorded[1]!.data).toMatchObject({
    redemptionId: asked.redemptionId,
    transactionId: asked.transactionId,
    merchantAccountId: SHOP,
    amount: 1_000,
    currency: 'USD',
    providerRedemptionId: expect.any(String),
  });
  // Never the number or PIN: only the vault holds them.
  const all = JSON.stringify(await cardsStorage.store.readAll());
  expect(all).not.toContain(NUMBER.slice(6, 15));
  expect(all).not.toContain(PIN);
});

it('records a refusal (nothing charged) and a stored card that is gone as refused, without asking the provider', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const tooMuch = redemption(card, before! + 1);
  await publish(tooMuch.transactionId, request(tooMuch));
  expect((await outcomes(tooMuch.redemptionId)).at(-1)).toMatchObject({
    type: giftCardRedemptionEventTypes.refused,
    data: { error: { errorCode: 'insufficient_funds' } },
  });
  expect(await balance(card.giftCardId)).toBe(before);

  await service.giftCards.delete({ merchant_account_id: SHOP, gift_card_id: card.giftCardId });
  calls.length = 0;
  const deleted = redemption(card, 100);
  await publish(deleted.transactionId, request(deleted));
  expect(calls).toEqual([]);
  expect((await outcomes(deleted.redemptionId)).at(-1)).toMatchObject({
    type: giftCardRedemptionEventTypes.refused,
    data: { error: { errorCode: 'invalid_gift_card' } },
  });
});

it('reverses a redemption once, and a redelivered request after it redeems nothing again', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 700);
  await publish(asked.transactionId, request(asked));
  expect(await balance(card.giftCardId)).toBe(before! - 700);

  await publish(asked.transactionId, reversal(asked), reversal(asked), request(asked));
  expect(calls).toEqual(['redeem', 'reverse']);
  expect(await balance(card.giftCardId)).toBe(before);
  expect((await outcomes(asked.redemptionId)).map((e) => e.type)).toEqual([
    giftCardRedemptionEventTypes.started,
    giftCardRedemptionEventTypes.redeemed,
    giftCardRedemptionEventTypes.reversed,
  ]);
  expect((await outcomes(asked.redemptionId)).at(-1)!.data).toMatchObject({ reversed: true });
});

it('a request arriving after its reversal (a late request after a roll-back) is never redeemed', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 500);
  await publish(asked.transactionId, reversal(asked));
  expect((await outcomes(asked.redemptionId)).at(-1)).toMatchObject({
    type: giftCardRedemptionEventTypes.reversed,
    data: { reversed: false },
  });

  await publish(asked.transactionId, request(asked));
  expect(calls).toEqual(['reverse']);
  expect(await balance(card.giftCardId)).toBe(before);
});

it('a crash between the provider call and its record: the redelivered request is answered once, charged once', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 300);
  // The crashed process claimed the request and the provider redeemed it; the answer was never recorded.
  await cardsStorage.store.append(
    giftCardRedemptionStream(asked.redemptionId),
    [{ type: giftCardRedemptionEventTypes.started, data: { redemptionId: asked.redemptionId } }],
    { expectedRevision: 'no_stream' },
  );
  await connector.redeem({
    reference: asked.redemptionId,
    card: { number: NUMBER, pin: PIN },
    amount: 300,
    currency: 'USD',
  });

  await publish(asked.transactionId, request(asked));
  expect((await outcomes(asked.redemptionId)).map((e) => e.type)).toEqual([
    giftCardRedemptionEventTypes.started,
    giftCardRedemptionEventTypes.redeemed,
  ]);
  expect(await balance(card.giftCardId)).toBe(before! - 300);
});

it('no answer from the provider is recorded as unanswered; the reversal that follows puts back what it took', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 400);
  unreachable = true;
  await publish(asked.transactionId, request(asked));
  expect((await outcomes(asked.redemptionId)).at(-1)).toMatchObject({
    type: giftCardRedemptionEventTypes.unanswered,
    data: { error: { errorCode: 'service_network_error' } },
  });
  // A reversal the provider cannot take is recorded, and tried again when asked again.
  await publish(asked.transactionId, reversal(asked));
  expect((await outcomes(asked.redemptionId)).at(-1)!.type).toBe(giftCardRedemptionEventTypes.reversalFailed);
  unreachable = false;
  await publish(asked.transactionId, reversal(asked));
  expect((await outcomes(asked.redemptionId)).at(-1)).toMatchObject({
    type: giftCardRedemptionEventTypes.reversed,
    data: { reversed: false },
  });
  expect(await balance(card.giftCardId)).toBe(before);
});

it('retries a request while the transactions process does not answer for the gift card services, never parking it', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const asked = redemption(card, 200);
  directoryDown = 3;
  await publish(asked.transactionId, request(asked));
  await vi.waitFor(async () => expect((await outcomes(asked.redemptionId)).at(-1)?.type).toBe('GiftCardRedeemed'), {
    timeout: 5_000,
  });
  expect(directoryDown).toBe(0);
  expect(calls).toEqual(['redeem']);
  expect(await balance(card.giftCardId)).toBe(before! - 200);
});

it('leaves another installation’s requests alone (a broker shared): a card never stored here, a service unknown here', async () => {
  const card = await storedCard();
  const before = await balance(card.giftCardId);
  const foreign = { ...redemption(card, 100), giftCardId: randomUUID() };
  await publish(foreign.transactionId, request(foreign));
  const unknownService = { ...redemption(card, 100), giftCardServiceId: randomUUID() };
  await publish(unknownService.transactionId, reversal(unknownService));
  expect(calls).toEqual([]);
  expect(await outcomes(foreign.redemptionId)).toEqual([]);
  expect(await outcomes(unknownService.redemptionId)).toEqual([]);
  expect(await balance(card.giftCardId)).toBe(before);
});

describe('a gift card given by number and PIN (handed over by the gateway)', () => {
  const NUMBER_GIVEN = '6033991234500004321';
  const PIN_GIVEN = '0150099';
  const vaultRows = () =>
    cardsStorage.db.prepare('SELECT id, one_off FROM vault_gift_cards').all() as { id: string; one_off: number }[];

  it('is kept encrypted as a one-off card, redeemed once by the gift cards service, and erased once answered', async () => {
    const card = await storedCard();
    const [handedOver] = service.handOver({
      merchant_account_id: SHOP,
      cards: [{ number: NUMBER_GIVEN, pin: PIN_GIVEN }],
    });
    expect(handedOver).toMatchObject({ bin: '603399', sub_bin: '1234', last4: '4321', digest: expect.any(String) });
    // The same card handed over again has the same digest (an Idempotency-Key replay), another card another one.
    const [again, other] = service.handOver({
      merchant_account_id: SHOP,
      cards: [
        { number: NUMBER_GIVEN, pin: PIN_GIVEN },
        { number: NUMBER_GIVEN, pin: '0150098' },
      ],
    });
    expect(again!.digest).toBe(handedOver!.digest);
    expect(other!.digest).not.toBe(handedOver!.digest);
    expect(vaultRows()).toEqual(
      expect.arrayContaining([
        { id: handedOver!.id, one_off: 1 },
        { id: card.giftCardId, one_off: 0 },
      ]),
    );
    // Not a stored card: never listed, read or described.
    expect(await service.describe(SHOP, handedOver!.id)).toBeNull();
    const file = cardsStorage.db
      .prepare('SELECT secret_ciphertext FROM vault_gift_cards WHERE id = ?')
      .get(handedOver!.id) as { secret_ciphertext: Buffer };
    expect(file.secret_ciphertext.toString('latin1')).not.toContain(NUMBER_GIVEN.slice(6, 15));

    const asked = { ...redemption(card, 250), giftCardId: handedOver!.id };
    // Another merchant account's request for it finds no card: left alone, the provider never asked.
    const foreign = { ...redemption(card, 250), giftCardId: handedOver!.id, merchantAccountId: 'shop-b' };
    await publish(foreign.transactionId, request(foreign));
    expect(await outcomes(foreign.redemptionId)).toEqual([]);

    await publish(asked.transactionId, request(asked), { ...request(asked), id: randomUUID() });
    expect(calls).toEqual(['redeem']);
    expect((await outcomes(asked.redemptionId)).map((e) => e.type)).toEqual([
      giftCardRedemptionEventTypes.started,
      giftCardRedemptionEventTypes.redeemed,
    ]);
    const shown = (await (await fetch(`${simulator.url}/v1/gift-cards/cards/${NUMBER_GIVEN}`)).json()) as {
      balance: number;
    };
    expect(shown.balance).toBe(Number(PIN_GIVEN) - 250);
    // Answered: the one-off card is erased; the stored card and the two not asked for yet stay.
    expect(vaultRows().map((row) => row.id)).not.toContain(handedOver!.id);
    expect(vaultRows().map((row) => row.id)).toEqual(expect.arrayContaining([card.giftCardId, again!.id, other!.id]));
    // A reversal needs no card: by reference.
    await publish(asked.transactionId, reversal(asked));
    expect((await outcomes(asked.redemptionId)).at(-1)).toMatchObject({
      type: giftCardRedemptionEventTypes.reversed,
      data: { reversed: true },
    });
    const all = JSON.stringify(await cardsStorage.store.readAll());
    expect(all).not.toContain(NUMBER_GIVEN.slice(6, 15));
    expect(all).not.toContain(PIN_GIVEN);
  });

  it('one no redemption asked for is erased after GIFT_CARD_HAND_OVER_TTL_MS; a stored card never', async () => {
    const card = await storedCard();
    const [handedOver] = service.handOver({
      merchant_account_id: SHOP,
      cards: [{ number: NUMBER_GIVEN, pin: PIN_GIVEN }],
    });
    expect(service.sweepHandedOver()).toBe(0);
    // An hour later (the default), as the sweep sees it.
    cardsStorage.db
      .prepare('UPDATE vault_gift_cards SET created_at = ? WHERE id IN (?, ?)')
      .run(new Date(Date.now() - 61 * 60 * 1000).toISOString(), handedOver!.id, card.giftCardId);
    expect(service.sweepHandedOver()).toBe(1);
    expect(vaultRows().map((row) => row.id)).toEqual([card.giftCardId]);
    // Its request, later still, finds no card: left alone (no claim, no provider call).
    const late = { ...redemption(card, 100), giftCardId: handedOver!.id };
    await publish(late.transactionId, request(late));
    expect(calls).toEqual([]);
    expect(await outcomes(late.redemptionId)).toEqual([]);
  });
});

it("records each outcome with the request's correlation id, caused by the request's event", async () => {
  const card = await storedCard();
  const asked = redemption(card, 100);
  const eventId = randomUUID();
  const correlationId = randomUUID();
  const message: EventMessage = {
    id: eventId,
    type: 'GiftCardRedemptionRequested',
    name: null,
    names: [],
    stream_id: `transaction-${asked.transactionId}`,
    revision: 1,
    position: String((position += 1)),
    recorded_at: '2026-02-01T10:00:00.000Z',
    occurred_at: '2026-02-01T10:00:00.000Z',
    correlation_id: correlationId,
    causation_id: null,
    schema_version: 1,
    data: asked as unknown as Record<string, unknown>,
    metadata: {},
  };
  await bus.publish(transactionsTopic, [
    {
      key: message.stream_id,
      value: JSON.stringify(message),
      headers: { [EVENT_ID_HEADER]: eventId, 'correlation-id': correlationId },
    },
  ]);
  const recorded = await cardsStorage.store.readStream(giftCardRedemptionStream(asked.redemptionId));
  expect(recorded.map((event) => event.type)).toEqual([
    giftCardRedemptionEventTypes.started,
    giftCardRedemptionEventTypes.redeemed,
  ]);
  for (const event of recorded) expect(event.metadata).toMatchObject({ correlationId, causationId: eventId });
});
