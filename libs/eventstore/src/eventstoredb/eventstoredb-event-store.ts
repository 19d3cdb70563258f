import type {
  AllStreamResolvedEvent,
  AppendExpectedRevision,
  EventData,
  Position,
  ResolvedEvent,
} from '@eventstore/db-client';
import type * as EventStoreDbClientLibrary from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { timeEventStoreAppend } from '@switchyard/metrics';
import {
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../event-store';
import type { RetryBackoff } from '../subscription/deliver-with-retry';
import { assertAppendable, assertValidExpectedRevision } from '../validation';
import { EventStoreDbSubscription } from './eventstoredb-subscription';

/**
 * The EventStoreDB client library, loaded by the first EventStoreDB store: a process on SQLite (the embedded default)
 * never loads it and its gRPC stack (179 modules, about 31 MB; docs/performance.md, Start-up and memory).
 */
function esdb(): typeof EventStoreDbClientLibrary {
  return require('@eventstore/db-client') as typeof EventStoreDbClientLibrary;
}

export interface EventStoreDbEventStoreOptions {
  /** Back-off between retries of an event whose handler threw, and between resubscriptions after an error. */
  readonly retryBackoff?: RetryBackoff;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type EsdbRecordedEvent = NonNullable<ResolvedEvent['event']>;

/**
 * The event store of the distributed mode, over EventStoreDB's gRPC client. Positions are the `$all` log
 * position written as `"<commit>/<prepare>"`. EventStoreDB needs UUIDs as event ids: an `id` given on a
 * `NewEvent` must be one.
 */
export class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<EventStoreDbSubscription>();
  private readonly appendListeners = new Set<() => void>();
  /** The one catch-up subscription from the end of `$all` that tells `onAppended` listeners; open while any listens. */
  private appendWatch: EventStoreDbSubscription | undefined;
  /** The server pushes every writer's appends to the subscription. */
  readonly appendNotifications = 'all-writers' as const;

  constructor(
    readonly client: EventStoreDbClientLibrary.EventStoreDBClient,
    private readonly options: EventStoreDbEventStoreOptions = {},
  ) {}

  /** `url` as EventStoreDB connection strings spell it, e.g. `esdb://127.0.0.1:2113?tls=false`. */
  static connect(url: string, options: EventStoreDbEventStoreOptions = {}): EventStoreDbEventStore {
    return new EventStoreDbEventStore(esdb().EventStoreDBClient.connectionString(url), options);
  }

  async append(
    streamId: string,
    events: readonly NewEvent[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    assertAppendable(streamId, events);
    assertValidExpectedRevision(options.expectedRevision);
    for (const event of events) {
      if (event.id !== undefined && !uuidPattern.test(event.id)) {
        throw new TypeError(
          `append to ${streamId}: EventStoreDB event ids must be UUIDs, got ${JSON.stringify(event.id)}`,
        );
      }
    }
    const eventData = events.map(
      (event) =>
        ({
          id: event.id ?? randomUUID(),
          contentType: 'application/json',
          type: event.type,
          data: event.data ?? null,
          metadata: event.metadata ?? {},
        }) as EventData,
    );
    try {
      const result = await timeEventStoreAppend(
        'eventstoredb',
        this.client.appendToStream(streamId, eventData, {
          expectedRevision: toEsdbExpectedRevision(options.expectedRevision),
        }),
      );
      const position = result.position ?? (await this.lastPositionOf(streamId));
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position: formatPosition(position) };
    } catch (error) {
      if (error instanceof esdb().WrongExpectedVersionError) {
        const actual = error.actualVersion;
        throw new WrongExpectedRevisionError(
          streamId,
          options.expectedRevision,
          typeof actual === 'bigint' ? Number(actual) : 'no_stream',
        );
      }
      throw toUnavailableError(error);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        fromRevision: BigInt(options.fromRevision ?? 0),
        ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
      });
      for await (const resolved of read) {
        if (resolved.event) events.push(toRecordedEvent(resolved.event));
      }
    } catch (error) {
      if (error instanceof esdb().StreamNotFoundError) return [];
      throw toUnavailableError(error);
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after === undefined ? undefined : parsePosition(options.after);
    const maxCount = options.maxCount ?? Number.POSITIVE_INFINITY;
    const events: RecordedEvent[] = [];
    if (maxCount <= 0) return events;
    try {
      // System events are skipped here rather than by a server filter (readAll has none in this client), so
      // the server's maxCount cannot be used: stop reading once enough events were kept.
      for await (const resolved of this.client.readAll({ fromPosition: after ?? esdb().START })) {
        const event = userEventOf(resolved, after);
        if (event === undefined) continue;
        events.push(event);
        if (events.length >= maxCount) break;
      }
    } catch (error) {
      throw toUnavailableError(error);
    }
    return events;
  }

  subscribe(options: SubscribeOptions): Subscription {
    const after = options.after === undefined ? undefined : parsePosition(options.after);
    const subscription = new EventStoreDbSubscription(
      (from) =>
        this.client.subscribeToAll({ fromPosition: from ?? esdb().START, filter: esdb().excludeSystemEvents() }),
      (resolved, from) => userEventOf(resolved, from),
      after,
      options,
      this.options.retryBackoff ?? {},
      (finished) => this.subscriptions.delete(finished),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: () => void): () => void {
    const entry = (): void => listener();
    this.appendListeners.add(entry);
    if (!this.appendWatch) {
      const watch = new EventStoreDbSubscription(
        // From the end: only appends from now on are news; after a reconnect it resumes from the last one seen.
        (from) =>
          this.client.subscribeToAll({ fromPosition: from ?? esdb().END, filter: esdb().excludeSystemEvents() }),
        (resolved, from) => userEventOf(resolved, from),
        undefined,
        {
          handler: async () => {
            for (const notify of this.appendListeners) {
              try {
                notify();
              } catch {
                // A listener's failure is its own.
              }
            }
          },
        },
        this.options.retryBackoff ?? {},
        (finished) => this.subscriptions.delete(finished),
      );
      this.appendWatch = watch;
      this.subscriptions.add(watch);
    }
    return () => {
      if (!this.appendListeners.delete(entry) || this.appendListeners.size > 0) return;
      const watch = this.appendWatch;
      this.appendWatch = undefined;
      void watch?.stop();
    };
  }

  async ping(): Promise<void> {
    try {
      for await (const _ of this.client.readAll({ direction: esdb().BACKWARDS, fromPosition: esdb().END, maxCount: 1 }))
        break;
    } catch (error) {
      throw toUnavailableError(error);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    await this.client.dispose();
  }

  private async lastPositionOf(streamId: string): Promise<Position> {
    for await (const resolved of this.client.readStream(streamId, {
      direction: esdb().BACKWARDS,
      fromRevision: esdb().END,
      maxCount: 1,
    })) {
      if (resolved.event?.position) return resolved.event.position;
    }
    throw new EventStoreUnavailableError(`EventStoreDB returned no position for the append to ${streamId}`, true);
  }
}

function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return esdb().ANY;
  if (expected === 'no_stream') return esdb().NO_STREAM;
  return BigInt(expected);
}

/**
 * The user event of a `$all` entry, or undefined for what callers of the port never see: system events
 * (`$`-prefixed types), unresolved links, and the checkpoint event itself (reads from a position include it).
 */
function userEventOf(resolved: AllStreamResolvedEvent, after: Position | undefined): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event || event.type.startsWith('$')) return undefined;
  if (after && event.position.commit === after.commit && event.position.prepare === after.prepare) return undefined;
  return toRecordedEvent(event);
}

function toRecordedEvent(event: EsdbRecordedEvent): RecordedEvent {
  if (!event.position)
    throw new EventStoreUnavailableError(`EventStoreDB returned event ${event.id} without a position`, false);
  const metadata = event.metadata;
  return {
    id: event.id,
    streamId: event.streamId,
    type: event.type,
    data: event.data,
    metadata: isRecord(metadata) ? metadata : {},
    revision: Number(event.revision),
    position: formatPosition(event.position),
    recordedAt: event.created.toISOString(),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

export function formatPosition(position: Position): string {
  return `${position.commit}/${position.prepare}`;
}

export function parsePosition(position: string): Position {
  const match = /^(\d+)\/(\d+)$/.exec(position);
  if (!match) throw new TypeError(`not a position of the EventStoreDB event store: ${JSON.stringify(position)}`);
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) };
}

/** Orders two positions of this store (commit first, then prepare). */
export function compareEventStoreDbPositions(a: string, b: string): number {
  const left = parsePosition(a);
  const right = parsePosition(b);
  if (left.commit !== right.commit) return left.commit < right.commit ? -1 : 1;
  if (left.prepare !== right.prepare) return left.prepare < right.prepare ? -1 : 1;
  return 0;
}

/** gRPC CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE. */
const retriableGrpcStatus = new Set([1, 2, 4, 8, 10, 14]);

/** Connection-level failures are worth retrying; everything else the server refused is not. */
export function toUnavailableError(error: unknown): unknown {
  if (error instanceof EventStoreUnavailableError || error instanceof WrongExpectedRevisionError) return error;
  if (error instanceof TypeError) return error;
  const { type, code } = (error ?? {}) as { type?: unknown; code?: unknown };
  // The client converts most failures into its CommandError classes (`type`); some paths (batch append) pass
  // the raw gRPC error through, which only carries a status `code`.
  const retriable =
    ['unavailable', 'deadline-exceeded', 'timeout', 'not-leader', 'cancelled', 'unknown'].includes(String(type)) ||
    (type === undefined && typeof code === 'number' && retriableGrpcStatus.has(code));
  const message = error instanceof Error ? error.message : String(error);
  return new EventStoreUnavailableError(`EventStoreDB: ${message}`, retriable, { cause: error });
}
