/**
 * What goes on a dead-letter topic (`<topic>.dead-letter`): the parked messages, as they were, with headers saying
 * which group parked them, why and after how many attempts; and the commands of `cli dead-letters replay | discard`,
 * which the parking group reads from the same topic (in the same partition as the stream, so the member that owns
 * the stream's partition gets them, in order).
 */
import type { IncomingMessage, OutgoingMessage } from '../message-bus';

export const DEAD_LETTER_SUFFIX = '.dead-letter';

export const deadLetterTopicOf = (topic: string): string => `${topic}${DEAD_LETTER_SUFFIX}`;
export const isDeadLetterTopic = (topic: string): boolean => topic.endsWith(DEAD_LETTER_SUFFIX);
export const topicOfDeadLetters = (deadLetterTopic: string): string =>
  deadLetterTopic.slice(0, -DEAD_LETTER_SUFFIX.length);

export const deadLetterHeaders = {
  /** The consumer group that parked the message (or that a command is for). */
  group: 'dead-letter-group',
  topic: 'dead-letter-topic',
  /** Where the message was in its topic. */
  partition: 'dead-letter-partition',
  offset: 'dead-letter-offset',
  /** `failed`: its handler failed every attempt; `behind-parked`: an earlier message of its stream is parked. */
  reason: 'dead-letter-reason',
  attempts: 'dead-letter-attempts',
  /** The last error, `<name>: <message>`, at most 1,000 characters, digit runs that could be a card number masked. */
  error: 'dead-letter-error',
  parkedAt: 'dead-letter-parked-at',
  /** On commands only: `replay` or `discard`. */
  command: 'dead-letter-command',
  /** Commands: the dead-letter entry replayed, or the last one discarded (an offset in the same partition). */
  entry: 'dead-letter-entry-offset',
  /** Replay commands: the stream's entry before `entry` in the dead-letter partition, -1 for none. */
  previous: 'dead-letter-previous-offset',
} as const;

export type ParkReason = 'failed' | 'behind-parked';
export type DeadLetterCommandKind = 'replay' | 'discard';

/** A record as a dead-letter topic holds it. */
export interface DeadLetterRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface DeadLetterCommand {
  readonly kind: DeadLetterCommandKind;
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
  readonly entry: number;
  readonly previous: number;
  /** Replay: the message as its handler first saw it. */
  readonly original: IncomingMessage;
}

const MAX_ERROR_LENGTH = 1_000;

/**
 * An error as a header: its name and message only (no stack), shortened, and every run of 12 or more digits —
 * possibly separated by spaces or dashes, as a card number can be written — masked: a handler's error must not
 * carry a card number onto a topic.
 */
export const errorText = (error: unknown): string => {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\d(?:[ -]?\d){11,}/g, '[digits]').slice(0, MAX_ERROR_LENGTH);
};

const isOwnHeader = (name: string): boolean => name.startsWith('dead-letter-');

const originalHeaders = (headers: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !isOwnHeader(name)));

export interface ParkedMessageInfo {
  readonly groupId: string;
  readonly reason: ParkReason;
  readonly attempts: number;
  readonly error?: unknown;
  readonly at: Date;
}

/** The dead-letter record of a message being parked: the message as it was, plus why. */
export function parkedRecordOf(message: IncomingMessage, info: ParkedMessageInfo): OutgoingMessage {
  return {
    key: message.key,
    value: message.value,
    headers: {
      ...originalHeaders(message.headers),
      [deadLetterHeaders.group]: info.groupId,
      [deadLetterHeaders.topic]: message.topic,
      [deadLetterHeaders.partition]: String(message.partition),
      [deadLetterHeaders.offset]: message.offset,
      [deadLetterHeaders.reason]: info.reason,
      [deadLetterHeaders.attempts]: String(info.attempts),
      ...(info.error !== undefined ? { [deadLetterHeaders.error]: errorText(info.error) } : {}),
      [deadLetterHeaders.parkedAt]: info.at.toISOString(),
    },
  };
}

/** A parked entry (not a command) of a dead-letter topic. */
export const isParkedEntry = (record: Pick<DeadLetterRecord, 'headers'>): boolean =>
  record.headers[deadLetterHeaders.command] === undefined && record.headers[deadLetterHeaders.group] !== undefined;

/** The command asking `entry`'s group to handle it again; `previous` is the stream's entry before it (-1: none). */
export function replayCommandOf(entry: DeadLetterRecord, previous: number): OutgoingMessage {
  return {
    key: entry.key,
    value: entry.value,
    headers: {
      ...entry.headers,
      [deadLetterHeaders.command]: 'replay',
      [deadLetterHeaders.entry]: String(entry.offset),
      [deadLetterHeaders.previous]: String(previous),
    },
  };
}

/** The command dropping a stream's pending entries up to `through` (its newest): later messages flow again. */
export function discardCommandOf(entry: DeadLetterRecord): OutgoingMessage {
  const pick = (name: string) => entry.headers[name] ?? '';
  return {
    key: entry.key,
    value: '',
    headers: {
      [deadLetterHeaders.command]: 'discard',
      [deadLetterHeaders.group]: pick(deadLetterHeaders.group),
      [deadLetterHeaders.topic]: pick(deadLetterHeaders.topic),
      [deadLetterHeaders.partition]: pick(deadLetterHeaders.partition),
      [deadLetterHeaders.entry]: String(entry.offset),
    },
  };
}

const integer = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
};

/** The command a dead-letter record carries; undefined for a parked entry or a record that is not well formed. */
export function commandOf(record: IncomingMessage): DeadLetterCommand | undefined {
  const headers = record.headers;
  const kind = headers[deadLetterHeaders.command];
  if (kind !== 'replay' && kind !== 'discard') return undefined;
  const groupId = headers[deadLetterHeaders.group];
  const topic = headers[deadLetterHeaders.topic];
  const partition = integer(headers[deadLetterHeaders.partition]);
  const entry = integer(headers[deadLetterHeaders.entry]);
  const previous = integer(headers[deadLetterHeaders.previous]) ?? -1;
  if (!groupId || !topic || partition === undefined || entry === undefined) return undefined;
  const original: IncomingMessage = {
    topic,
    partition,
    offset: headers[deadLetterHeaders.offset] ?? '0',
    key: record.key,
    value: record.value,
    headers: originalHeaders(headers),
  };
  return { kind, groupId, topic, partition, key: record.key, entry, previous, original };
}
