import type { MessageBus } from '@switchyard/bus';
import { webhooksTopic } from '@switchyard/contracts';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';

/**
 * The webhooks service's events, from its store to `webhooks.events`, checkpointed in its local SQLite. They have
 * no public names (nothing is delivered about webhooks themselves); secrets and passwords travel sealed, as stored.
 */
export const webhooksRelay = (storage: ServiceStorage, bus: MessageBus, options: { pollIntervalMs: number; onError: (error: unknown) => void }): Relay =>
  new Relay({
    store: storage.store,
    bus,
    topic: webhooksTopic,
    checkpoints: new SqliteCheckpointStore(storage.db),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
  });
