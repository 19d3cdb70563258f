/**
 * Did every stored event reach Kafka? A service's event store is its outbox: its relay publishes the store's log to
 * the service's topic and moves its checkpoint only afterwards, so a kill can republish a batch (at least once) but
 * must never skip an event. These helpers read a stopped service's SQLite store (from a copy: the evidence stays
 * untouched) and a whole topic of a given broker, and compare them:
 *
 * - missing: an event in the store that no message on the topic carries;
 * - unknown: a message whose event id the store does not hold;
 * - mismatched: a message whose stream, revision or type differs from the stored event with its id;
 * - outOfOrder: a stream whose events first appear on the topic in another order than their revisions;
 * - republished: messages beyond one per event (a batch published again after a kill: allowed, counted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore, type RecordedEvent } from '@switchyard/eventstore';
import { readTopics, type TopicMessage } from '../../distributed.fixture';

export interface StoredEvent {
  readonly id: string;
  readonly streamId: string;
  readonly revision: number;
  readonly type: string;
}

export interface RelayVerification {
  readonly inStore: number;
  /** Distinct events on the topic. */
  readonly onKafka: number;
  /** Messages on the topic, repeats included. */
  readonly messages: number;
  readonly republished: number;
  readonly missing: readonly StoredEvent[];
  readonly unknown: readonly string[];
  readonly mismatched: readonly {
    readonly id: string;
    readonly stored: StoredEvent;
    readonly published: StoredEvent;
  }[];
  readonly outOfOrder: readonly { readonly streamId: string; readonly revisions: readonly number[] }[];
  /** Messages whose value is not an event envelope. */
  readonly unreadable: number;
}

/**
 * Every event of a SQLite event store file, read from a copy of the file (and its WAL) with `SqliteEventStore`:
 * the service that owns it should be stopped, and the file is never opened for writing.
 */
export async function readStoredEvents(storeFile: string): Promise<StoredEvent[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-store-copy-'));
  try {
    const copy = path.join(dir, path.basename(storeFile));
    fs.copyFileSync(storeFile, copy);
    if (fs.existsSync(`${storeFile}-wal`)) fs.copyFileSync(`${storeFile}-wal`, `${copy}-wal`);
    const store = new SqliteEventStore(copy);
    try {
      const events: RecordedEvent[] = await store.readAll();
      return events.map((event) => ({
        id: event.id,
        streamId: event.streamId,
        revision: event.revision,
        type: event.type,
      }));
    } finally {
      await store.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Every message of `topic` on `brokers`, from the beginning (the distributed fixture's `readTopics`, pointed at
 * this broker): read until every id of `expectIds` was seen or `timeoutMs` passed, then on to the end offsets.
 */
export async function readTopicOf(
  brokers: string,
  topic: string,
  expectIds: ReadonlySet<string>,
  timeoutMs = 30_000,
): Promise<TopicMessage[]> {
  const before = process.env.KAFKA_BROKERS;
  process.env.KAFKA_BROKERS = brokers;
  try {
    const allSeen = (messages: readonly TopicMessage[]) => {
      const seen = new Set(messages.map(eventIdOf));
      return [...expectIds].every((id) => seen.has(id));
    };
    // Waiting for ids that never come ends in an error: read what there is instead, and let the comparison tell.
    return await readTopics([topic], { until: allSeen, timeoutMs }).catch(() => readTopics([topic], { timeoutMs }));
  } finally {
    if (before === undefined) delete process.env.KAFKA_BROKERS;
    else process.env.KAFKA_BROKERS = before;
  }
}

const envelopeOf = (
  message: Pick<TopicMessage, 'value'>,
): { id?: string; stream_id?: string; revision?: number; type?: string } | null => {
  try {
    return JSON.parse(message.value?.toString() ?? '') as {
      id?: string;
      stream_id?: string;
      revision?: number;
      type?: string;
    };
  } catch {
    return null;
  }
};

const eventIdOf = (message: Pick<TopicMessage, 'value'>): string | undefined => envelopeOf(message)?.id;

export function verifyRelayed(
  stored: readonly StoredEvent[],
  messages: readonly Pick<TopicMessage, 'partition' | 'offset' | 'value'>[],
): RelayVerification {
  const byId = new Map(stored.map((event) => [event.id, event]));
  const firstArrival = new Map<string, StoredEvent>();
  const unknown: string[] = [];
  const mismatched: { id: string; stored: StoredEvent; published: StoredEvent }[] = [];
  let unreadable = 0;
  const inTopicOrder = [...messages].sort(
    (a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)),
  );
  for (const message of inTopicOrder) {
    const envelope = envelopeOf(message);
    if (!envelope?.id || typeof envelope.stream_id !== 'string' || typeof envelope.revision !== 'number') {
      unreadable += 1;
      continue;
    }
    if (firstArrival.has(envelope.id)) continue;
    const published: StoredEvent = {
      id: envelope.id,
      streamId: envelope.stream_id,
      revision: envelope.revision,
      type: envelope.type ?? '',
    };
    firstArrival.set(envelope.id, published);
    const own = byId.get(envelope.id);
    if (!own) unknown.push(envelope.id);
    else if (own.streamId !== published.streamId || own.revision !== published.revision || own.type !== published.type)
      mismatched.push({ id: envelope.id, stored: own, published });
  }

  const revisionsByStream = new Map<string, number[]>();
  for (const event of firstArrival.values())
    revisionsByStream.set(event.streamId, [...(revisionsByStream.get(event.streamId) ?? []), event.revision]);
  const outOfOrder = [...revisionsByStream]
    .filter(([, revisions]) => revisions.some((revision, i) => i > 0 && revision <= (revisions[i - 1] ?? -1)))
    .map(([streamId, revisions]) => ({ streamId, revisions }));

  return {
    inStore: stored.length,
    onKafka: firstArrival.size,
    messages: messages.length,
    republished: messages.length - unreadable - firstArrival.size,
    missing: stored.filter((event) => !firstArrival.has(event.id)),
    unknown,
    mismatched,
    outOfOrder,
    unreadable,
  };
}
