/**
 * The stored cards' usage from `transactions.events` (distributed runtime), over the in-process bus and a real
 * SQLite read model: a redelivered event counts once, a new consumer group reading the topic again counts nothing
 * twice, and what the store-following projection of an earlier release counted is not counted again.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { InProcessMessageBus } from '@switchyard/bus';
import { EVENT_ID_HEADER, transactionsTopic, type EventMessage } from '@switchyard/contracts';
import { compareSqlitePositions, type EventStore } from '@switchyard/eventstore';
import type { TopicProjection } from '@switchyard/readmodel';
import { giftCardUsageFromTopic } from './gift-card-usage-consumer';
import { GiftCardsReadModel } from './gift-cards.read-model';

const card = randomUUID();

function message(position: number, type = 'GiftCardRedemptionSucceeded', id = randomUUID()): EventMessage {
  return {
    id,
    type,
    name: null,
    names: [],
    stream_id: `transaction-${randomUUID()}`,
    revision: 3,
    position: String(position),
    recorded_at: '2026-02-01T10:00:00.000Z',
    occurred_at: '2026-02-01T10:00:00.000Z',
    correlation_id: null,
    causation_id: null,
    schema_version: 1,
    data: { giftCardId: card, at: `2026-02-01T10:00:0${position % 10}.000Z`, merchantInitiated: false },
    metadata: {},
  };
}

let db: Database.Database;
let bus: InProcessMessageBus;
let consumers: TopicProjection[];

beforeEach(() => {
  db = new Database(':memory:');
  bus = new InProcessMessageBus({ publishWaitsForConsumers: true });
  consumers = [];
});

afterEach(async () => {
  for (const consumer of consumers) await consumer.stop();
  await bus.close();
  db.close();
});

async function follow(groupId: string): Promise<void> {
  const consumer = giftCardUsageFromTopic(db, new GiftCardsReadModel(db).usageProjection, {
    bus,
    groupId,
    comparePositions: compareSqlitePositions,
  });
  consumers.push(consumer);
  await consumer.start();
}

const publish = (...events: EventMessage[]) =>
  bus.publish(
    transactionsTopic,
    events.map((event) => ({
      key: event.stream_id,
      value: JSON.stringify(event),
      headers: { [EVENT_ID_HEADER]: event.id },
    })),
  );

const usageCount = () =>
  (db.prepare('SELECT usage_count FROM gift_card_usage WHERE id = ?').get(card) as { usage_count: number } | undefined)
    ?.usage_count ?? 0;

it('counts each redemption once: a redelivery, and a new group reading the topic from its beginning, count nothing twice', async () => {
  await follow('gift-cards');
  const first = message(1);
  await publish(first, message(2, 'TransactionCreated'), message(3));
  expect(usageCount()).toBe(2);

  // At-least-once: the same event again (a redelivery after a crash before the offset was committed).
  await publish(first);
  expect(usageCount()).toBe(2);

  // A new consumer group reads the whole topic again.
  await follow(`gift-cards-${randomUUID()}`);
  await publish(message(4));
  expect(usageCount()).toBe(3);
});

it('skips what the store-following projection of an earlier release already counted (up to its checkpoint)', async () => {
  db.exec('CREATE TABLE checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
  db.prepare("INSERT INTO checkpoints (name, position) VALUES ('projection:gift-card-usage', '5')").run();
  await follow('gift-cards');
  await publish(message(4), message(5), message(6));
  expect(usageCount()).toBe(1);
});

it('folds once from the transactions store what the topic never brought, each event once whichever way it came', async () => {
  // Two redemptions came over the topic; the store holds them, and one the topic never had (before the relay).
  const fromTopic = [message(1), message(2)];
  await follow('gift-cards');
  await publish(...fromTopic);
  expect(usageCount()).toBe(2);
  const recorded = (m: EventMessage) => ({
    id: m.id,
    streamId: m.stream_id,
    type: m.type,
    data: m.data,
    metadata: m.metadata,
    revision: m.revision,
    position: m.position,
    recordedAt: m.recorded_at,
  });
  const onlyInStore = message(3);
  const inStore = [...fromTopic, onlyInStore, message(4, 'TransactionCreated')].map(recorded);
  const store = {
    readAll: async ({ after, maxCount }: { after?: string; maxCount: number }) =>
      inStore.filter((event) => after === undefined || Number(event.position) > Number(after)).slice(0, maxCount),
  } as unknown as EventStore;
  const usage = giftCardUsageFromTopic(db, new GiftCardsReadModel(db).usageProjection, {
    bus,
    groupId: `gift-cards-${randomUUID()}`,
    comparePositions: compareSqlitePositions,
  });
  consumers.push(usage);
  expect(await usage.foldFromStore(store, 2)).toBe(true);
  expect(usageCount()).toBe(3);
  // Once: its checkpoint is kept; and the topic read again from its beginning by a new group counts nothing twice.
  expect(await usage.foldFromStore(store)).toBe(false);
  await usage.start();
  await publish(...fromTopic, onlyInStore, message(5));
  expect(usageCount()).toBe(4);
});
