/**
 * `cli dead-letters list | replay | discard` over any bus: a `DeadLetterLog` reads a bus's dead-letter topics and the
 * groups' parked-stream state, and appends commands (Kafka: `KafkaDeadLetterLog`; the embedded runtime's data
 * directory: `SqliteBusState`; an in-process broker: `InProcessDeadLetterLog`). The commands are carried out by the
 * consumer group itself, when it runs (`DeadLettering`).
 */
import type { OutgoingMessage } from '../message-bus';
import {
  deadLetterHeaders,
  deadLetterTopicOf,
  discardCommandOf,
  isParkedEntry,
  replayCommandOf,
  topicOfDeadLetters,
  type DeadLetterRecord,
} from './dead-letter-records';
import type { ParkedStreams } from './parked-streams';

export interface DeadLetterLogAppend extends OutgoingMessage {
  /** The partition of the dead-letter topic: the one of the entry the command is about. */
  readonly partition: number;
}

export interface DeadLetterLog {
  deadLetterTopics(): Promise<string[]>;
  read(deadLetterTopic: string): Promise<DeadLetterRecord[]>;
  /** A group's parked streams per partition of `topic` (the data topic). */
  parkedStreams(groupId: string, topic: string): Promise<Map<number, ParkedStreams>>;
  append(deadLetterTopic: string, messages: readonly DeadLetterLogAppend[]): Promise<void>;
  close(): Promise<void>;
}

export interface DeadLetterEntry {
  readonly group: string;
  readonly topic: string;
  readonly key: string;
  /** `parked`: waiting for a replay or a discard; `done`: replayed, discarded, or superseded by a later parking. */
  readonly state: 'parked' | 'done';
  readonly reason: string;
  readonly attempts: number;
  readonly error: string | null;
  readonly parked_at: string | null;
  readonly partition: number;
  readonly offset: string;
  readonly dead_letter_partition: number;
  readonly dead_letter_offset: number;
  readonly event_id: string | null;
  readonly event_type: string | null;
}

export interface DeadLetterFilter {
  readonly topic?: string | undefined;
  readonly group?: string | undefined;
  readonly key?: string | undefined;
  /** Also entries already done. */
  readonly all?: boolean | undefined;
}

/** The dead-letter entries, oldest first per stream; only the parked ones unless `all`. */
export async function listDeadLetters(log: DeadLetterLog, filter: DeadLetterFilter = {}): Promise<DeadLetterEntry[]> {
  const topics = filter.topic !== undefined ? [deadLetterTopicOf(filter.topic)] : await log.deadLetterTopics();
  const entries: DeadLetterEntry[] = [];
  for (const deadLetterTopic of topics) {
    const topic = topicOfDeadLetters(deadLetterTopic);
    const records = (await log.read(deadLetterTopic)).filter(isParkedEntry);
    const states = new Map<string, Map<number, ParkedStreams>>();
    for (const record of records) {
      const group = record.headers[deadLetterHeaders.group] ?? '';
      if (filter.group !== undefined && group !== filter.group) continue;
      if (filter.key !== undefined && record.key !== filter.key) continue;
      if (!states.has(group)) states.set(group, await log.parkedStreams(group, topic));
      const entry = entryOf(topic, group, record, states.get(group)!);
      if (filter.all || entry.state === 'parked') entries.push(entry);
    }
  }
  return entries;
}

function entryOf(
  topic: string,
  group: string,
  record: DeadLetterRecord,
  states: Map<number, ParkedStreams>,
): DeadLetterEntry {
  const partition = Number(record.headers[deadLetterHeaders.partition] ?? -1);
  const stream = states.get(partition)?.get(record.key);
  const parked = stream !== undefined && record.offset >= stream.first && record.offset <= stream.last;
  return {
    group,
    topic,
    key: record.key,
    state: parked ? 'parked' : 'done',
    reason: record.headers[deadLetterHeaders.reason] ?? 'unknown',
    attempts: Number(record.headers[deadLetterHeaders.attempts] ?? 0),
    error: record.headers[deadLetterHeaders.error] ?? null,
    parked_at: record.headers[deadLetterHeaders.parkedAt] ?? null,
    partition,
    offset: record.headers[deadLetterHeaders.offset] ?? '',
    dead_letter_partition: record.partition,
    dead_letter_offset: record.offset,
    event_id: record.headers['event-id'] ?? null,
    event_type: record.headers['event-type'] ?? null,
  };
}

export interface StreamSelection {
  readonly group: string;
  readonly topic: string;
  /** One stream; absent: every parked stream of the group on the topic. */
  readonly key?: string | undefined;
}

/** What a request appended: per stream, the last dead-letter offset it covers. */
export interface CommandsRequested {
  readonly streams: number;
  readonly messages: number;
  readonly through: ReadonlyMap<string, number>;
}

/** The parked entries of the selected streams, per stream in dead-letter order, with each one's predecessor. */
async function pendingOf(log: DeadLetterLog, selection: StreamSelection) {
  const deadLetterTopic = deadLetterTopicOf(selection.topic);
  const states = await log.parkedStreams(selection.group, selection.topic);
  const byStream = new Map<string, Array<{ record: DeadLetterRecord; previous: number }>>();
  const previousOf = new Map<string, number>();
  for (const record of await log.read(deadLetterTopic)) {
    if (!isParkedEntry(record) || record.headers[deadLetterHeaders.group] !== selection.group) continue;
    if (selection.key !== undefined && record.key !== selection.key) continue;
    const previous = previousOf.get(record.key) ?? -1;
    previousOf.set(record.key, record.offset);
    const partition = Number(record.headers[deadLetterHeaders.partition] ?? -1);
    const stream = states.get(partition)?.get(record.key);
    if (!stream || record.offset < stream.first || record.offset > stream.last) continue;
    byStream.set(record.key, [...(byStream.get(record.key) ?? []), { record, previous }]);
  }
  return { deadLetterTopic, byStream };
}

/**
 * Asks the group to handle the selected streams' parked messages again, in order; each stream is released after its
 * last.
 */
export async function requestReplay(log: DeadLetterLog, selection: StreamSelection): Promise<CommandsRequested> {
  const { deadLetterTopic, byStream } = await pendingOf(log, selection);
  const commands: DeadLetterLogAppend[] = [];
  const through = new Map<string, number>();
  for (const [key, pending] of byStream) {
    for (const { record, previous } of pending)
      commands.push({ ...replayCommandOf(record, previous), partition: record.partition });
    through.set(key, pending[pending.length - 1]!.record.offset);
  }
  if (commands.length > 0) await log.append(deadLetterTopic, commands);
  return { streams: byStream.size, messages: commands.length, through };
}

/** Asks the group to drop the selected streams' parked messages and release them. */
export async function requestDiscard(log: DeadLetterLog, selection: StreamSelection): Promise<CommandsRequested> {
  const { deadLetterTopic, byStream } = await pendingOf(log, selection);
  const commands: DeadLetterLogAppend[] = [];
  const through = new Map<string, number>();
  let messages = 0;
  for (const [key, pending] of byStream) {
    const last = pending[pending.length - 1]!.record;
    commands.push({ ...discardCommandOf(last), partition: last.partition });
    through.set(key, last.offset);
    messages += pending.length;
  }
  if (commands.length > 0) await log.append(deadLetterTopic, commands);
  return { streams: byStream.size, messages, through };
}

/** The selected streams still parked, with the dead-letter offsets of their pending entries. */
export async function stillParked(log: DeadLetterLog, selection: StreamSelection): Promise<Map<string, number[]>> {
  const { byStream } = await pendingOf(log, selection);
  return new Map([...byStream].map(([key, pending]) => [key, pending.map(({ record }) => record.offset)]));
}
