import type { MessageBus } from '@switchyard/bus';
import { identityTopic } from '@switchyard/contracts';
import { withUpcasting, type RecordedEvent } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { identityUpcasters } from './event-schema';

/** The spec's public names of identity events. Usage (`ApiKeyPairUsed`) is internal: no webhook per request. */
const publicNames: Readonly<Record<string, string>> = {
  ApiKeyPairCreated: 'api-key-pair.created',
  ApiKeyPairUpdated: 'api-key-pair.updated',
  ApiKeyPairDeleted: 'api-key-pair.deleted',
};

export const identityEventName = (event: Pick<RecordedEvent, 'type'>): string | undefined => publicNames[event.type];

/**
 * A dashboard password's hash stays in identity's store: `UserPasswordSet` goes on the bus as the fact that the
 * password changed (user id, time), without the hash, so no topic, consumer or Kafka backup ever holds one.
 */
export const withoutSecrets = (event: RecordedEvent): RecordedEvent => {
  if (event.type !== 'UserPasswordSet') return event;
  const { passwordHash: _hash, ...rest } = event.data as { passwordHash?: string };
  return { ...event, data: rest };
};

/** The identity service's events, from its store to `identity.events`, checkpointed in its local SQLite. */
export const identityRelay = (
  storage: ServiceStorage,
  bus: MessageBus,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay =>
  new Relay({
    store: withUpcasting(storage.store, identityUpcasters),
    bus,
    topic: identityTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: identityEventName,
    redact: withoutSecrets,
  });
