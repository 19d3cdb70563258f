import type { MessageBus } from '@switchyard/bus';
import { vaultTopic } from '@switchyard/contracts';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';

/**
 * The vault service's events (buyers, stored payment methods, network tokens, account updater jobs, digital wallets,
 * checkout sessions — never a card number, security code or key), from its store to `vault.events`, checkpointed in
 * its local SQLite. They have no public names.
 */
export const vaultRelay = (
  storage: ServiceStorage,
  bus: Pick<MessageBus, 'publish'>,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay =>
  new Relay({
    store: storage.store,
    bus,
    topic: vaultTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
  });
