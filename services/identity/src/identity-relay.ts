import type { MessageBus } from '@switchyard/bus';
import { identityTopic } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';

/** The spec's public names of identity events. Usage (`ApiKeyPairUsed`) is internal: no webhook per request. */
const publicNames: Readonly<Record<string, string>> = {
  ApiKeyPairCreated: 'api-key-pair.created',
  ApiKeyPairUpdated: 'api-key-pair.updated',
  ApiKeyPairDeleted: 'api-key-pair.deleted',
};

export const identityEventName = (event: Pick<RecordedEvent, 'type'>): string | undefined => publicNames[event.type];

/** The identity service's events, from its store to `identity.events`, checkpointed in its local SQLite. */
export const identityRelay = (storage: ServiceStorage, bus: MessageBus, options: { pollIntervalMs: number; onError: (error: unknown) => void }): Relay =>
  new Relay({
    store: storage.store,
    bus,
    topic: identityTopic,
    checkpoints: new SqliteCheckpointStore(storage.db),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: identityEventName,
  });
