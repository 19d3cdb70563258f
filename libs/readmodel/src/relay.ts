import type { MessageBus } from '@switchyard/bus';
import {
  EVENT_ID_HEADER,
  EVENT_NAME_HEADER,
  EVENT_SCHEMA_VERSION,
  EVENT_TYPE_HEADER,
  type EventMessage,
} from '@switchyard/contracts';
import type { EventStore, RecordedEvent } from '@switchyard/eventstore';
import { observeRelayed } from '@switchyard/metrics';
import { traceOutgoingMessage } from '@switchyard/telemetry';
import type { CheckpointStore } from './checkpoints';
import { LogFollower } from './log-follower';

export interface RelayOptions {
  readonly store: EventStore;
  /** Only its `publish` (a service on a worker thread publishes through the main thread's bus). */
  readonly bus: Pick<MessageBus, 'publish'>;
  readonly topic: string;
  readonly checkpoints: CheckpointStore;
  readonly pollIntervalMs?: number;
  /** Events per publish (default 500). */
  readonly batchSize?: number;
  /**
   * The public name of an event (`api-key-pair.created`), for events that webhooks and other services know by
   * name; several when one change is announced under more than one name (a failed capture is both
   * `capture.failed` and `transaction.capture-failed`).
   */
  readonly nameOf?: (event: RecordedEvent) => string | readonly string[] | undefined;
  /** What of an event goes on the bus, when not all of it may (a password hash stays in the store); default all. */
  readonly redact?: (event: RecordedEvent) => RecordedEvent;
  /** The merchant account whose resource the event's stream is (`EventMessage.merchant_account_id`), when known. */
  readonly merchantAccountOf?: (event: RecordedEvent) => string | null | Promise<string | null>;
  readonly onError?: (error: unknown) => void;
}

const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The event's own time: `data.at` when it is an ISO 8601 date-time, else when the store recorded it. */
const occurredAt = (event: RecordedEvent): string => {
  const at = event.data !== null && typeof event.data === 'object' ? (event.data as { at?: unknown }).at : undefined;
  return typeof at === 'string' && isoDateTime.test(at) && !Number.isNaN(Date.parse(at)) ? at : event.recordedAt;
};

const metadataId = (
  metadata: Readonly<Record<string, unknown>>,
  key: 'correlationId' | 'causationId',
): string | null => {
  const value = metadata?.[key];
  return typeof value === 'string' && value !== '' ? value : null;
};

/** The envelope of a stored event on the bus (`EventMessage`, deploy/kafka/topics.md). */
export const toEventMessage = (
  event: RecordedEvent,
  names: string | readonly string[] | null = null,
  merchantAccountId: string | null = null,
): EventMessage => ({
  id: event.id,
  type: event.type,
  name: (typeof names === 'string' ? names : names?.[0]) ?? null,
  names: typeof names === 'string' ? [names] : [...(names ?? [])],
  stream_id: event.streamId,
  ...(merchantAccountId ? { merchant_account_id: merchantAccountId } : {}),
  revision: event.revision,
  position: event.position,
  recorded_at: event.recordedAt,
  occurred_at: occurredAt(event),
  correlation_id: metadataId(event.metadata, 'correlationId'),
  causation_id: metadataId(event.metadata, 'causationId'),
  schema_version: EVENT_SCHEMA_VERSION,
  data: event.data,
  metadata: event.metadata,
});

/**
 * Publishes a service's events from its event store to its topic, in log order, keyed by stream (so ordered per
 * stream on the bus). The store is the outbox: the checkpoint moves only after the bus acknowledged the batch,
 * so a crash at any point republishes from the last checkpoint: nothing is lost, and consumers drop the
 * repeats by the `event-id` header.
 */
export class Relay {
  private readonly follower: LogFollower;

  constructor(options: RelayOptions) {
    const name = `relay:${options.topic}`;
    this.follower = new LogFollower({
      name,
      store: options.store,
      checkpoints: options.checkpoints,
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
      handleBatch: async (events) => {
        // A producer span per message, the child of the span its event was appended in; `traceparent` in its headers.
        const owners = options.merchantAccountOf
          ? await Promise.all(events.map((event) => options.merchantAccountOf?.(event) ?? null))
          : null;
        const traced = events.map((event) => traceOutgoingMessage(options.topic, event.id, event.metadata));
        const published = options.bus.publish(
          options.topic,
          events.map((event, index) => {
            const message = toEventMessage(
              options.redact ? options.redact(event) : event,
              options.nameOf?.(event) ?? null,
              owners?.[index] ?? null,
            );
            return {
              key: event.streamId,
              value: JSON.stringify(message),
              headers: {
                ...traced[index]?.headers,
                [EVENT_ID_HEADER]: event.id,
                [EVENT_TYPE_HEADER]: event.type,
                ...(message.names.length > 0 ? { [EVENT_NAME_HEADER]: message.names.join(',') } : {}),
              },
            };
          }),
        );
        await published.catch((error: unknown) => {
          for (const message of traced) message.end(error);
          throw error;
        });
        for (const message of traced) message.end();
        observeRelayed(options.topic, events);
        const last = events[events.length - 1];
        if (last) options.checkpoints.save(name, last.position);
      },
    });
  }

  start(): void {
    this.follower.start();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  /** Publishes everything appended so far (tests, graceful shutdown). */
  flush(): Promise<void> {
    return this.follower.catchUp();
  }
}
