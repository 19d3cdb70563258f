/**
 * The one retry and dead-letter policy of the bus, run by both adapters on every message a subscription consumes,
 * so a consumer gets it by subscribing. Per message of a topic:
 *
 * - its stream (key) is parked on this partition → the message is parked behind it (appended to the dead-letter
 *   topic) and the partition moves on;
 * - else the handler runs; a rejection is retried after a doubling back-off, up to `maxAttempts`; then the message is
 *   parked (`failed`) and its stream with it, and the partition moves on.
 *
 * The parked-stream state rides on the group's committed offset of the partition (`ParkedStreams`), committed with
 * the offset that moves past the parked message: one write, so a crash leaves either both or neither. Commands on
 * the dead-letter topic (`cli dead-letters replay | discard`) are consumed by the group like any message, in the
 * partition of their stream: a replay hands the stream's oldest pending entry to the handler and, on success, marks
 * it done in the same commit; when the last one is done the stream is released and its next message is handled.
 */
import { countDeadLetter, countDeadLetterOutcome } from '@switchyard/metrics';
import type { IncomingMessage, OutgoingMessage } from '../message-bus';
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_PARKED_STATE_BYTES,
  redeliveryDelayMs,
  type HandlerFailureListener,
  type RedeliveryOptions,
} from '../redelivery';
import {
  commandOf,
  deadLetterTopicOf,
  isDeadLetterTopic,
  parkedRecordOf,
  topicOfDeadLetters,
  type DeadLetterCommand,
  type ParkReason,
} from './dead-letter-records';
import { ParkedStreams } from './parked-streams';

export interface OffsetCommit {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to consume. */
  readonly offset: string;
  readonly metadata: string | null;
}

export interface CommittedPosition {
  readonly offset: string;
  readonly metadata: string | null;
}

/** What an adapter gives the policy: its group, its dead-letter producer, its commits. */
export interface DeadLetterTransport {
  readonly groupId: string;
  stopping(): boolean;
  /** Appends `message` to a dead-letter topic; resolves with its offset there once it is durable. */
  publishDeadLetter(topic: string, message: OutgoingMessage): Promise<number>;
  committed(topic: string, partition: number): CommittedPosition | undefined;
  /** Commits every entry in one step; resolves once durable. */
  commit(commits: readonly OffsetCommit[]): Promise<void>;
  /**
   * Commits a handled message's offset, the partition's parked streams unchanged, without waiting: `committed` gives
   * it at once, and an adapter may send it with later ones (a crash before it lands redelivers, as at least once allows).
   */
  acknowledge(commit: OffsetCommit): void;
  /** Whether this consumer owns the partition now (Kafka: assigned to it by the last join). */
  owns(topic: string, partition: number): boolean;
}

/** Per message: the handler as the adapter runs it, and its wait between attempts. */
export interface Delivery {
  run(message: IncomingMessage): Promise<void>;
  /** Waits `ms`; false when the consumer is stopping (the message is left uncommitted for the group). */
  pause(ms: number): Promise<boolean>;
}

export type DeadLetterEvent =
  | {
      readonly kind: 'parked';
      readonly groupId: string;
      readonly message: IncomingMessage;
      readonly reason: ParkReason;
      readonly attempts: number;
      readonly deadLetterOffset: number;
      readonly error?: unknown;
    }
  | {
      readonly kind: 'replayed' | 'discarded';
      readonly groupId: string;
      readonly topic: string;
      readonly key: string;
      readonly entry: number;
      readonly released: boolean;
    }
  | {
      readonly kind: 'replay-failed';
      readonly groupId: string;
      readonly topic: string;
      readonly key: string;
      readonly entry: number;
      readonly error: unknown;
    }
  | {
      readonly kind: 'state-full';
      readonly groupId: string;
      readonly message: IncomingMessage;
      readonly error: unknown;
    }
  | {
      readonly kind: 'command-skipped';
      readonly groupId: string;
      readonly topic: string;
      readonly key: string;
      readonly why: string;
    };

export type DeadLetterListener = (event: DeadLetterEvent) => void;

const levelOf: Record<DeadLetterEvent['kind'], number> = {
  parked: 50,
  'replay-failed': 50,
  'state-full': 50,
  'command-skipped': 40,
  discarded: 40,
  replayed: 30,
};

/** Default listener: one JSON line on stderr per event, the shape of the services' pino logs (no message value). */
export const logDeadLetterEvent: DeadLetterListener = (event) => {
  const { kind, groupId } = event;
  const where =
    'message' in event
      ? {
          topic: event.message.topic,
          partition: event.message.partition,
          offset: event.message.offset,
          key: event.message.key,
        }
      : { topic: event.topic, key: event.key };
  const error = 'error' in event && event.error !== undefined ? event.error : undefined;
  const line = {
    level: levelOf[kind],
    time: Date.now(),
    name: 'bus',
    msg: messageOf(event),
    groupId,
    ...where,
    ...(event.kind === 'parked'
      ? { reason: event.reason, attempts: event.attempts, deadLetterOffset: event.deadLetterOffset }
      : {}),
    ...('entry' in event ? { deadLetterOffset: event.entry } : {}),
    ...('released' in event ? { released: event.released } : {}),
    ...(event.kind === 'command-skipped' ? { why: event.why } : {}),
    ...(error !== undefined
      ? { err: error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) } }
      : {}),
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
};

function messageOf(event: DeadLetterEvent): string {
  switch (event.kind) {
    case 'parked':
      return event.reason === 'failed'
        ? `message parked on ${deadLetterTopicOf(event.message.topic)} after ${event.attempts} failed attempts; later messages of its stream wait behind it`
        : `message parked on ${deadLetterTopicOf(event.message.topic)} behind an earlier parked message of its stream`;
    case 'replayed':
      return event.released ? 'parked message replayed; its stream is released' : 'parked message replayed';
    case 'discarded':
      return event.released ? 'parked messages discarded; the stream is released' : 'parked messages discarded';
    case 'replay-failed':
      return 'parked message failed again in a replay; its stream stays parked';
    case 'state-full':
      return 'message not parked: the parked-stream state of its partition is full; it is retried until handled (replay or discard parked streams)';
    case 'command-skipped':
      return 'dead-letter command skipped';
  }
}

export interface DeadLetteringOptions {
  readonly redelivery: RedeliveryOptions;
  readonly onHandlerFailure: HandlerFailureListener;
  readonly onDeadLetter: DeadLetterListener;
  /** Dead-letter topics the consumer subscribed to itself: their messages go to its handler, not read as commands. */
  readonly ownDeadLetterTopics: ReadonlySet<string>;
  readonly now?: () => Date;
}

const nextOffset = (offset: string): string => (BigInt(offset) + 1n).toString();

/**
 * A failure that says trying again can help (`retriable: true`: the event store or Kafka unreachable, another service
 * not answering) is retried until it passes and never parks the message: what it needs is down for every message
 * alike, and parking them all would only leave an operator to replay them. Any other failure counts toward
 * `maxAttempts`.
 */
const isTransient = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;

export class DeadLettering {
  /** One handling at a time per data partition: its messages and the commands about it share its state. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly maxAttempts: number;
  private readonly maxStateBytes: number;

  constructor(
    private readonly transport: DeadLetterTransport,
    private readonly options: DeadLetteringOptions,
  ) {
    this.maxAttempts = Math.max(1, options.redelivery.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.maxStateBytes = options.redelivery.maxParkedStateBytes ?? DEFAULT_MAX_PARKED_STATE_BYTES;
  }

  /** The parked streams of a partition, as last committed. */
  parkedOn(topic: string, partition: number): ParkedStreams {
    return ParkedStreams.decode(this.transport.committed(topic, partition)?.metadata);
  }

  handle(message: IncomingMessage, delivery: Delivery): Promise<void> {
    // A dead-letter topic read for its commands (not one the consumer subscribed to): only its group's commands count.
    if (isDeadLetterTopic(message.topic) && !this.options.ownDeadLetterTopics.has(message.topic)) {
      const command = commandOf(message);
      if (!command || command.groupId !== this.transport.groupId) return this.commitOnly(message);
      return this.exclusive(command.topic, command.partition, () => this.handleCommand(message, command, delivery));
    }
    return this.exclusive(message.topic, message.partition, () => this.handleData(message, delivery));
  }

  private async handleData(message: IncomingMessage, delivery: Delivery): Promise<void> {
    if (this.transport.stopping()) return;
    const parked = this.parkedOn(message.topic, message.partition);
    if (parked.has(message.key)) {
      await this.park(message, parked, 'behind-parked', 0);
      return;
    }
    // A dead-letter topic subscribed to as such is not dead-lettered again: its messages are retried until handled.
    const canPark = !isDeadLetterTopic(message.topic);
    let failures = 0;
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.attempt(message, delivery);
      if (outcome.ok) {
        this.transport.acknowledge({
          topic: message.topic,
          partition: message.partition,
          offset: nextOffset(message.offset),
          metadata: parked.encode(),
        });
        return;
      }
      if (!isTransient(outcome.error)) failures += 1;
      if (canPark && failures >= this.maxAttempts) {
        if (this.fits(parked, message.key)) {
          await this.park(message, parked, 'failed', attempt, outcome.error);
          return;
        }
        this.options.onDeadLetter({
          kind: 'state-full',
          groupId: this.transport.groupId,
          message,
          error: outcome.error,
        });
      }
      const redeliveryInMs = redeliveryDelayMs(attempt, this.options.redelivery);
      this.options.onHandlerFailure({
        error: outcome.error,
        groupId: this.transport.groupId,
        message,
        attempt,
        redeliveryInMs,
      });
      if (!(await delivery.pause(redeliveryInMs)) || this.transport.stopping()) return;
    }
  }

  private async handleCommand(record: IncomingMessage, command: DeadLetterCommand, delivery: Delivery): Promise<void> {
    if (this.transport.stopping()) return;
    const skip = async (why: string) => {
      this.options.onDeadLetter({
        kind: 'command-skipped',
        groupId: command.groupId,
        topic: command.topic,
        key: command.key,
        why,
      });
      await this.commitOnly(record);
    };
    if (topicOfDeadLetters(record.topic) !== command.topic)
      return skip(`names topic ${command.topic}, not this dead-letter topic's`);
    if (!this.transport.owns(command.topic, command.partition))
      return skip(`partition ${command.partition} of ${command.topic} is not this consumer's`);
    const position = this.transport.committed(command.topic, command.partition);
    const parked = ParkedStreams.decode(position?.metadata);
    // Already done (a command seen again after a restart, or a replay of entries a discard dropped): nothing to do.
    if (!position || !parked.has(command.key)) return this.commitOnly(record);
    const commitWith = (state: ParkedStreams) =>
      this.transport.commit([
        { topic: record.topic, partition: record.partition, offset: nextOffset(record.offset), metadata: null },
        { topic: command.topic, partition: command.partition, offset: position.offset, metadata: state.encode() },
      ]);

    if (command.kind === 'discard') {
      const next = parked.withDoneThrough(command.key, command.entry);
      await commitWith(next);
      countDeadLetterOutcome(command.groupId, command.topic, 'discarded');
      this.options.onDeadLetter({
        kind: 'discarded',
        groupId: command.groupId,
        topic: command.topic,
        key: command.key,
        entry: command.entry,
        released: !next.has(command.key),
      });
      return;
    }
    if (!parked.isNext(command.key, command.entry, command.previous)) return this.commitOnly(record);
    let failures = 0;
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.attempt(command.original, delivery);
      if (outcome.ok) {
        const next = parked.withDoneThrough(command.key, command.entry);
        await commitWith(next);
        countDeadLetterOutcome(command.groupId, command.topic, 'replayed');
        this.options.onDeadLetter({
          kind: 'replayed',
          groupId: command.groupId,
          topic: command.topic,
          key: command.key,
          entry: command.entry,
          released: !next.has(command.key),
        });
        return;
      }
      if (!isTransient(outcome.error)) failures += 1;
      if (failures >= this.maxAttempts) {
        countDeadLetterOutcome(command.groupId, command.topic, 'replay_failed');
        this.options.onDeadLetter({
          kind: 'replay-failed',
          groupId: command.groupId,
          topic: command.topic,
          key: command.key,
          entry: command.entry,
          error: outcome.error,
        });
        await this.commitOnly(record);
        return;
      }
      const redeliveryInMs = redeliveryDelayMs(attempt, this.options.redelivery);
      this.options.onHandlerFailure({
        error: outcome.error,
        groupId: this.transport.groupId,
        message: command.original,
        attempt,
        redeliveryInMs,
      });
      if (!(await delivery.pause(redeliveryInMs)) || this.transport.stopping()) return;
    }
  }

  private async park(
    message: IncomingMessage,
    parked: ParkedStreams,
    reason: ParkReason,
    attempts: number,
    error?: unknown,
  ): Promise<void> {
    const groupId = this.transport.groupId;
    const record = parkedRecordOf(message, {
      groupId,
      reason,
      attempts,
      ...(error !== undefined ? { error } : {}),
      at: (this.options.now ?? (() => new Date()))(),
    });
    const deadLetterOffset = await this.transport.publishDeadLetter(deadLetterTopicOf(message.topic), record);
    const next = parked.withEntry(message.key, deadLetterOffset);
    await this.transport.commit([
      {
        topic: message.topic,
        partition: message.partition,
        offset: nextOffset(message.offset),
        metadata: next.encode(),
      },
    ]);
    countDeadLetter(groupId, message.topic, reason);
    this.options.onDeadLetter({
      kind: 'parked',
      groupId,
      message,
      reason,
      attempts,
      deadLetterOffset,
      ...(error !== undefined ? { error } : {}),
    });
  }

  /** Whether parking `key` keeps the partition's state within its bound (offsets counted at their widest). */
  private fits(parked: ParkedStreams, key: string): boolean {
    const widest = parked.withEntry(key, Number.MAX_SAFE_INTEGER).encode() ?? '';
    return Buffer.byteLength(widest, 'utf8') <= this.maxStateBytes;
  }

  private async attempt(
    message: IncomingMessage,
    delivery: Delivery,
  ): Promise<{ ok: true } | { ok: false; error: unknown }> {
    try {
      await delivery.run(message);
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private async commitOnly(message: IncomingMessage): Promise<void> {
    if (this.transport.stopping()) return;
    this.transport.acknowledge({
      topic: message.topic,
      partition: message.partition,
      offset: nextOffset(message.offset),
      metadata: null,
    });
  }

  private exclusive(topic: string, partition: number, work: () => Promise<void>): Promise<void> {
    const slot = `${topic}\u0000${partition}`;
    const previous = this.locks.get(slot) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.locks.set(slot, settled);
    void settled.then(() => {
      if (this.locks.get(slot) === settled) this.locks.delete(slot);
    });
    return run;
  }
}
