/**
 * The stored cards' usage in the distributed runtime: the usage projection fed from `transactions.events` on the bus
 * (a consumer group of its own) instead of the transactions service's store, which another process owns
 * (`TopicProjection`: each redemption counted once, nothing the store-following projection counted counted again).
 */
import type Database from 'better-sqlite3';
import type { MessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import { TopicProjection, type Projection } from '@switchyard/readmodel';

export interface GiftCardUsageConsumerOptions {
  readonly bus: MessageBus;
  /** GIFT_CARDS_CONSUMER_GROUP (default `gift-cards`): one per installation sharing a broker. */
  readonly groupId: string;
  /** How the transactions store orders its positions (`compareSqlitePositions`, `compareEventStoreDbPositions`). */
  readonly comparePositions: (a: string, b: string) => number;
}

export const giftCardUsageFromTopic = (
  db: Database.Database,
  projection: Projection,
  options: GiftCardUsageConsumerOptions,
): TopicProjection =>
  new TopicProjection(db, projection, {
    ...options,
    topic: transactionsTopic,
    types: new Set(['GiftCardRedemptionSucceeded']),
    seenTable: 'gift_card_usage_events',
    // Read by the stored card's next listing, not by the payment that redeemed it.
    batched: true,
  });
