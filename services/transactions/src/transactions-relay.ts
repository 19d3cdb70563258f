import type { MessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { transactionEventNames } from './transactions/transaction-names';

/** The transactions service's events, from its store to `transactions.events`, checkpointed in its local SQLite. */
export const transactionsRelay = (storage: ServiceStorage, bus: MessageBus, options: { pollIntervalMs: number; onError: (error: unknown) => void }): Relay =>
  new Relay({
    store: storage.store,
    bus,
    topic: transactionsTopic,
    checkpoints: new SqliteCheckpointStore(storage.db),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: transactionEventNames,
  });
