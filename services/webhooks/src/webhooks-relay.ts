import type { MessageBus } from '@switchyard/bus';
import { webhooksTopic } from '@switchyard/contracts';
import { withUpcasting } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { webhooksUpcasters } from './event-schema';

/**
 * The webhooks service's events, from its store to `webhooks.events`, checkpointed in its local SQLite. They have
 * no public names (nothing is delivered about webhooks themselves); secrets and passwords travel sealed, as stored.
 */
export const webhooksRelay = (
  storage: ServiceStorage,
  bus: MessageBus,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay =>
  new Relay({
    store: withUpcasting(storage.store, webhooksUpcasters),
    bus,
    topic: webhooksTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
  });
