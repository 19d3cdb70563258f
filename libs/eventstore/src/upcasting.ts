/**
 * Event schema versions (issue 22, item 14). Every event a service appends carries the version of its data's shape in
 * its metadata (`schemaVersion`; an event without one is version 1, as everything written before this was). When a
 * service changes the shape of an event type, it raises that type's version by registering an upcaster: a pure
 * function from the data of version n to the data of version n + 1. Reads go through the service's one registry
 * (`withUpcasting`), so the command handlers of `libs/decider`, the projections, the relays and time travel all see
 * every event in its current shape, whatever release wrote it; the stored events are never rewritten.
 */
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from './event-store';

/** The metadata key of an event's schema version. */
export const SCHEMA_VERSION = 'schemaVersion';

/** The data of one version of an event type, as the next version has it. Pure: no I/O, no clock. */
export type Upcaster = (data: unknown) => unknown;

/** The schema version an event was written with (1 when it does not say). */
export function schemaVersionOf(event: Pick<RecordedEvent, 'metadata'>): number {
  const version = event.metadata?.[SCHEMA_VERSION];
  return typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : 1;
}

/** One service's upcasters: per event type, one per version step, registered in order from version 1. */
export class EventUpcasters {
  private readonly steps = new Map<string, Upcaster[]>();

  /** Registers the upcaster from `fromVersion` to `fromVersion + 1` of `type`; versions are registered in order. */
  register(type: string, fromVersion: number, upcast: Upcaster): this {
    const steps = this.steps.get(type) ?? [];
    if (fromVersion !== steps.length + 1)
      throw new Error(
        `${type}: the upcaster from version ${steps.length + 1} must be registered next, not from ${fromVersion}`,
      );
    this.steps.set(type, [...steps, upcast]);
    return this;
  }

  /** The version this service writes an event type with. */
  currentVersion(type: string): number {
    return (this.steps.get(type)?.length ?? 0) + 1;
  }

  /** The event with its data in the current shape (the same object when it is already current). */
  upcast(event: RecordedEvent): RecordedEvent {
    const from = schemaVersionOf(event);
    const steps = this.steps.get(event.type) ?? [];
    if (from > steps.length + 1)
      throw new Error(
        `${event.type} ${event.id} has schema version ${from}, ` +
          `newer than this build knows (${steps.length + 1}): upgrade the service`,
      );
    if (from === steps.length + 1) return event;
    const data = steps.slice(from - 1).reduce((current, step) => step(current), event.data);
    return { ...event, data, metadata: { ...event.metadata, [SCHEMA_VERSION]: steps.length + 1 } };
  }

  /** The event as it is appended: its metadata says the version its data has. */
  stamp(event: NewEvent): NewEvent {
    return { ...event, metadata: { ...event.metadata, [SCHEMA_VERSION]: this.currentVersion(event.type) } };
  }
}

/** The store as a service sees it: appends stamped with their schema version, every read upcast. */
export function withUpcasting(store: EventStore, upcasters: EventUpcasters): EventStore {
  return new UpcastingEventStore(store, upcasters);
}

class UpcastingEventStore implements EventStore {
  constructor(
    private readonly store: EventStore,
    private readonly upcasters: EventUpcasters,
  ) {}

  append(
    streamId: string,
    events: readonly NewEvent[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    return this.store.append(
      streamId,
      events.map((event) => this.upcasters.stamp(event)),
      options,
    );
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return (await this.store.readStream(streamId, options)).map((event) => this.upcasters.upcast(event));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.store.readAll(options)).map((event) => this.upcasters.upcast(event));
  }

  subscribe(options: SubscribeOptions): Subscription {
    return this.store.subscribe({ ...options, handler: (event) => options.handler(this.upcasters.upcast(event)) });
  }

  onAppended(listener: () => void): () => void {
    return this.store.onAppended(listener);
  }

  get appendNotifications(): EventStore['appendNotifications'] {
    return this.store.appendNotifications;
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
