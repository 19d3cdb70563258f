import type { MessageBus } from '@switchyard/bus';
import { giftCardsTopic } from '@switchyard/contracts';
import { withUpcasting } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { giftCardsUpcasters } from './event-schema';

/**
 * The gift cards service's events (`gift-card-<uuid>`: stored, deleted — never a number or PIN), from its store to
 * `gift-cards.events`, checkpointed in its local SQLite. They have no public names.
 */
export const giftCardsRelay = (
  storage: ServiceStorage,
  bus: MessageBus,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay =>
  new Relay({
    store: withUpcasting(storage.store, giftCardsUpcasters),
    bus,
    topic: giftCardsTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
  });
