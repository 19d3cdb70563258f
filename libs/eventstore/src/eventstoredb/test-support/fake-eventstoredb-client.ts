import {
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamRecordedEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type AppendResult,
  type EventData,
  type EventStoreDBClient,
  type Position,
  type ReadPosition,
} from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';

interface StoredEvent {
  readonly streamId: string;
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly revision: bigint;
  readonly position: Position;
  readonly created: Date;
}

/**
 * The part of `EventStoreDBClient` the adapter uses, in memory, behaving as the server does where the adapter
 * depends on it: `$all` holds system events too, `readAll` from a position includes the event at it,
 * `subscribeToAll` excludes it, `readStream` of a missing stream fails with StreamNotFoundError while iterating,
 * and a conflict is the client's WrongExpectedVersionError. It lets the behaviour suite exercise the adapter's
 * own mapping code where no server can run; it proves nothing about the server (the e2e suite does).
 */
export class FakeEventStoreDbClient {
  private readonly log: StoredEvent[] = [];
  private readonly waiting = new Set<() => void>();
  private nextPosition = 1000n;

  constructor() {
    this.record('$settings', '$metadata', {});
  }

  asClient(): EventStoreDBClient {
    return this as unknown as EventStoreDBClient;
  }

  async appendToStream(
    streamName: string,
    events: EventData[],
    options: { expectedRevision?: AppendExpectedRevision } = {},
  ): Promise<AppendResult> {
    await Promise.resolve();
    const existing = this.log.filter((stored) => stored.streamId === streamName);
    const current = existing.at(-1)?.revision;
    const expected = options.expectedRevision ?? 'any';
    const conflict =
      expected === 'no_stream'
        ? current !== undefined
        : expected === 'stream_exists'
          ? current === undefined
          : expected !== 'any' && current !== expected;
    if (conflict) {
      throw new WrongExpectedVersionError(undefined, { streamName, expected, current: current ?? 'no_stream' });
    }
    let last: StoredEvent | undefined;
    for (const event of events) last = this.record(streamName, event.type, event.data, event.metadata, event.id);
    // A system event between user events, as the server's own streams write them.
    this.record(`$$${streamName}`, '$metadata', {});
    for (const wake of this.waiting) wake();
    return { success: true, nextExpectedRevision: last!.revision, position: last!.position };
  }

  readStream(
    streamName: string,
    options: { fromRevision?: bigint | 'start' | 'end'; maxCount?: number | bigint; direction?: string } = {},
  ) {
    const log = this.log;
    return (async function* () {
      await Promise.resolve();
      let events = log.filter((stored) => stored.streamId === streamName);
      if (events.length === 0) throw new StreamNotFoundError(undefined, streamName);
      if (options.direction === 'backwards') events = [...events].reverse();
      else if (typeof options.fromRevision === 'bigint')
        events = events.filter((stored) => stored.revision >= (options.fromRevision as bigint));
      for (const stored of events.slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER)))
        yield { event: toRecorded(stored) };
    })();
  }

  readAll(options: { fromPosition?: ReadPosition; maxCount?: number | bigint; direction?: string } = {}) {
    const log = this.log;
    return (async function* () {
      await Promise.resolve();
      let events =
        options.direction === 'backwards'
          ? [...log].reverse()
          : log.filter((stored) => isAtOrAfter(stored.position, options.fromPosition));
      events = events.slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER));
      for (const stored of events) yield { event: toRecorded(stored) } satisfies AllStreamResolvedEvent;
    })();
  }

  subscribeToAll(options: { fromPosition?: ReadPosition; filter?: { regex?: string } } = {}): AllStreamSubscription {
    let unsubscribed = false;
    let wakeUp: (() => void) | undefined;
    const log = this.log;
    const waiting = this.waiting;
    const filter = options.filter?.regex === undefined ? undefined : new RegExp(options.filter.regex);
    const from = options.fromPosition;
    const events = (async function* () {
      let index = log.findIndex((stored) => isAtOrAfter(stored.position, from));
      if (index < 0) index = log.length;
      if (
        from !== undefined &&
        from !== 'start' &&
        from !== 'end' &&
        log[index] &&
        isSamePosition(log[index]!.position, from)
      )
        index += 1;
      while (!unsubscribed) {
        const stored = log[index];
        if (stored === undefined) {
          await new Promise<void>((resolve) => {
            wakeUp = resolve;
            waiting.add(resolve);
          });
          waiting.delete(wakeUp!);
          continue;
        }
        index += 1;
        if (filter && !filter.test(stored.type)) continue;
        yield { event: toRecorded(stored) } satisfies AllStreamResolvedEvent;
      }
    })();
    return Object.assign(events, {
      unsubscribe: async (): Promise<void> => {
        unsubscribed = true;
        wakeUp?.();
      },
    }) as unknown as AllStreamSubscription;
  }

  async dispose(): Promise<void> {}

  private record(
    streamId: string,
    type: string,
    data: unknown,
    metadata?: unknown,
    id: string = randomUUID(),
  ): StoredEvent {
    const previous = [...this.log].reverse().find((stored) => stored.streamId === streamId);
    this.nextPosition += 137n;
    const stored: StoredEvent = {
      streamId,
      id,
      type,
      // The server stores JSON text: what comes back is a copy.
      data: JSON.parse(JSON.stringify(data)) as unknown,
      metadata: metadata === undefined ? undefined : (JSON.parse(JSON.stringify(metadata)) as unknown),
      revision: previous ? previous.revision + 1n : 0n,
      position: { commit: this.nextPosition, prepare: this.nextPosition },
      created: new Date(),
    };
    this.log.push(stored);
    return stored;
  }
}

function toRecorded(stored: StoredEvent): AllStreamRecordedEvent {
  return { ...stored, isJson: true, data: stored.data as Record<string, unknown> } as AllStreamRecordedEvent;
}

function isSamePosition(a: Position, b: Position): boolean {
  return a.commit === b.commit && a.prepare === b.prepare;
}

function isAtOrAfter(position: Position, from: ReadPosition | undefined): boolean {
  if (from === undefined || from === 'start') return true;
  if (from === 'end') return false;
  return position.commit > from.commit || (position.commit === from.commit && position.prepare >= from.prepare);
}
