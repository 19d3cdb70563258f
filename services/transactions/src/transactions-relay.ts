import type { MessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import { withoutStreams, withUpcasting } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { transactionsUpcasters } from './event-schema';
import { transactionEventNames } from './transactions/transaction-names';
import { TRANSACTIONS_MOVED_STREAMS } from './transactions-service';

/**
 * The transactions service's events, from its store to `transactions.events`, checkpointed in its local SQLite; read
 * through the service's schema registry, so the topic carries every event in its current shape.
 */
export const transactionsRelay = (
  storage: ServiceStorage,
  bus: MessageBus,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay =>
  new Relay({
    // Stored gift cards are the gift cards service's (`gift-cards.events`), the vault's streams the vault's
    // (`vault.events`), also those an older release wrote here.
    store: withUpcasting(withoutStreams(storage.store, TRANSACTIONS_MOVED_STREAMS), transactionsUpcasters),
    bus,
    topic: transactionsTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: transactionEventNames,
  });
