import type { MessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import { withUpcasting } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { transactionsUpcasters } from './event-schema';
import { transactionEventNames } from './transactions/transaction-names';

/**
 * The transactions service's events, from its store to `transactions.events`, checkpointed in its local SQLite; read
 * through the service's schema registry, so the topic carries every event in its current shape.
 */
export const transactionsRelay = (storage: ServiceStorage, bus: MessageBus, options: { pollIntervalMs: number; onError: (error: unknown) => void }): Relay =>
  new Relay({
    store: withUpcasting(storage.store, transactionsUpcasters),
    bus,
    topic: transactionsTopic,
    checkpoints: new SqliteCheckpointStore(storage.db),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: transactionEventNames,
  });
