/**
 * The stored cards' usage in the distributed runtime: the usage projection fed from `transactions.events` on the bus
 * (a consumer group of its own) instead of the transactions service's store, which another process owns.
 *
 * The bus delivers at least once: each event is applied in one SQLite transaction with the record of its id
 * (`gift_card_usage_events`), so a redelivery counts nothing twice. An event the store-following projection of an
 * earlier release already applied (at or before its checkpoint, `gift-card-usage`) is skipped too. Reads may lag a
 * moment behind a payment here; the embedded runtime keeps following the store (read-your-writes).
 */
import type { BusSubscription, IncomingMessage, MessageBus } from '@switchyard/bus';
import { transactionsTopic, type EventMessage } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type Database from 'better-sqlite3';

export interface GiftCardUsageConsumerOptions {
  readonly bus: MessageBus;
  /** GIFT_CARDS_CONSUMER_GROUP (default `gift-cards`): one per installation sharing a broker. */
  readonly groupId: string;
  /** How the transactions store orders its positions (`compareSqlitePositions`, `compareEventStoreDbPositions`). */
  readonly comparePositions: (a: string, b: string) => number;
}

/** The name the store-following usage projection kept its checkpoint under (`Projector`, embedded and older releases). */
const storeCheckpointName = 'gift-card-usage';

export class GiftCardUsageConsumer {
  private subscription: BusSubscription | null = null;
  private readonly applyOnce: (event: RecordedEvent) => void;

  constructor(
    db: Database.Database,
    projection: Projection,
    private readonly options: GiftCardUsageConsumerOptions,
  ) {
    db.exec('CREATE TABLE IF NOT EXISTS gift_card_usage_events (event_id TEXT PRIMARY KEY)');
    db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
    const seen = db.prepare<[string]>('INSERT OR IGNORE INTO gift_card_usage_events (event_id) VALUES (?)');
    const storeCheckpoint = (
      db.prepare('SELECT position FROM checkpoints WHERE name = ?').get(storeCheckpointName) as
        | { position: string }
        | undefined
    )?.position;
    this.applyOnce = db.transaction((event: RecordedEvent) => {
      if (storeCheckpoint !== undefined && options.comparePositions(event.position, storeCheckpoint) <= 0) return;
      if (seen.run(event.id).changes === 0) return;
      projection.apply(event, db);
    });
  }

  /** Joins the group (resolves once live); a new group reads the topic from its beginning. */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.subscription = await this.options.bus.subscribe({
      groupId: this.options.groupId,
      topics: [transactionsTopic],
      fromBeginning: true,
      handler: async (message) => this.ingest(message),
    });
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  private ingest(message: IncomingMessage): void {
    const event = JSON.parse(message.value) as EventMessage;
    if (event.type !== 'GiftCardRedemptionSucceeded') return;
    this.applyOnce({
      id: event.id,
      streamId: event.stream_id,
      type: event.type,
      data: event.data,
      metadata: event.metadata,
      revision: event.revision,
      position: event.position,
      recordedAt: event.recorded_at,
    });
  }
}
