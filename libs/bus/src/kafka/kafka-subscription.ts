import { performance } from 'node:perf_hooks';
import type { Consumer, ConsumerRunConfig, EachBatchPayload, EachMessagePayload, IHeaders } from 'kafkajs';
import { registerConsumerLag, registerParkedStreams, type ConsumerLag } from '@switchyard/metrics';
import { consumeMessage } from '@switchyard/telemetry';
import {
  DeadLettering,
  type CommittedPosition,
  type DeadLetterListener,
  type OffsetCommit,
} from '../dead-letter/dead-lettering';
import { isDeadLetterTopic } from '../dead-letter/dead-letter-records';
import {
  BusUnavailableError,
  type BusSubscription,
  type IncomingMessage,
  type OutgoingMessage,
  type SubscribeOptions,
} from '../message-bus';
import { HandlerRuns, sleep, type HandlerFailureListener, type RedeliveryOptions } from '../redelivery';
import { OffsetCommitter } from './offset-committer';

/** `${topic}\u0000${partition}` → offset the group starts at, for partitions with nothing committed. */
export type StartOffsets = Map<string, string>;

export const partitionSlot = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** What a subscription asks of its bus: the producer and admin it shares with the other subscriptions. */
export interface KafkaSubscriptionHost {
  publishDeadLetter(topic: string, message: OutgoingMessage): Promise<number>;
  /** The group's committed offsets and metadata of the topics' partitions. */
  committed(groupId: string, topics: readonly string[]): Promise<Map<string, CommittedPosition>>;
  lag(groupId: string, topics: readonly string[]): Promise<ConsumerLag[]>;
}

export interface KafkaSubscriptionSettings {
  readonly redelivery: RedeliveryOptions;
  readonly onHandlerFailure: HandlerFailureListener;
  readonly onDeadLetter: DeadLetterListener;
  readonly heartbeatIntervalMs: number;
  /** How long a handled message's offset may wait for its commit (`OffsetCommitter`'s `acknowledgeAfterMs`). */
  readonly commitIntervalMs: number;
  /** Partitions handled at the same time (kafkajs `partitionsConsumedConcurrently`); `DeadLettering` locks per partition. */
  readonly partitionsConsumedConcurrently: number;
  /** A batched subscription's window (`KafkaMessageBusOptions.batchWindowMs`); 0: fetched again at once. */
  readonly batchWindowMs: number;
  readonly onStopped: () => void;
}

const headerText = (value: IHeaders[string]): string | undefined => {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return last === undefined ? undefined : last.toString();
};

const toIncomingMessage = ({ topic, partition, message }: EachMessagePayload): IncomingMessage => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? '',
    value: message.value?.toString() ?? '',
    headers,
  };
};

/**
 * One consumer in the caller's group, autoCommit off, subscribed to the caller's topics and their dead-letter topics.
 * Every message goes through `DeadLettering` (retries with back-off, heart-beating meanwhile, then parking), its
 * partition's messages one at a time (`partitionsConsumedConcurrently` partitions at a time, 1 by default); its offset
 * is committed, with the partition's parked streams as metadata, once it was handled (`OffsetCommitter`: a handled
 * message's commit goes out with the next request, not waited for; a change of parked streams is waited for). After
 * each join the group's committed offsets and metadata of the assigned partitions are read, so a member that takes
 * over a partition knows which streams are parked there before it handles anything. The subscription's `sync` runs
 * before each commit request, so that one fsync covers every message the request acknowledges. A batched one waits,
 * after it handled what a fetch brought, for the rest of its window since that fetch answered before kafkajs fetches
 * again: an idle topic's first message is handed over at once, and what lands meanwhile comes in one fetch.
 */
export class KafkaSubscription implements BusSubscription {
  private readonly runs = new HandlerRuns();
  private readonly committer: OffsetCommitter;
  private readonly deadLettering: DeadLettering;
  private readonly positions = new Map<string, CommittedPosition>();
  private assignment = new Set<string>();
  private positionsLoaded: Promise<void> = Promise.resolve();
  private readonly unregister: Array<() => void>;
  private stopping: Promise<void> | undefined;
  /** When the consumer's last fetch answered (performance.now()): a batched subscription's window starts there. */
  private fetchedAt = 0;

  constructor(
    private readonly consumer: Consumer,
    private readonly options: SubscribeOptions,
    private readonly host: KafkaSubscriptionHost,
    private readonly settings: KafkaSubscriptionSettings,
  ) {
    const groupId = options.groupId;
    this.committer = new OffsetCommitter(
      // What the handler committed without an fsync is synced before the offsets that acknowledge it go out.
      async (commits) => {
        await options.sync?.();
        await consumer.commitOffsets(
          commits.map(({ topic, partition, offset, metadata }) => ({ topic, partition, offset, metadata })),
        );
      },
      // The group hands the messages on again (a rebalance, a broker away): the next commit or member goes on from there.
      () => undefined,
      settings.commitIntervalMs,
    );
    const dataTopics = options.topics.filter((topic) => !isDeadLetterTopic(topic));
    this.deadLettering = new DeadLettering(
      {
        groupId,
        stopping: () => this.stopping !== undefined,
        publishDeadLetter: (topic, message) => host.publishDeadLetter(topic, message),
        committed: (topic, partition) => this.positions.get(partitionSlot(topic, partition)),
        commit: (commits) => this.commit(commits),
        acknowledge: (commit) => this.acknowledge(commit),
        owns: (topic, partition) => this.assignment.has(partitionSlot(topic, partition)),
      },
      {
        redelivery: settings.redelivery,
        onHandlerFailure: settings.onHandlerFailure,
        onDeadLetter: settings.onDeadLetter,
        ownDeadLetterTopics: new Set(options.topics.filter(isDeadLetterTopic)),
      },
    );
    this.unregister = [
      registerParkedStreams(() =>
        dataTopics.map((topic) => ({
          group: groupId,
          topic,
          streams: [...this.assignment]
            .map((slot) => slot.split('\u0000'))
            .filter(([assigned]) => assigned === topic)
            .reduce((sum, [, partition]) => sum + this.deadLettering.parkedOn(topic, Number(partition)).size, 0),
        })),
      ),
      registerConsumerLag(() => host.lag(groupId, dataTopics)),
      consumer.on(consumer.events.FETCH, () => {
        this.fetchedAt = performance.now();
      }),
    ];
  }

  /**
   * Resolves once the consumer joined its group (it has its partitions and will fetch from them). On that first
   * join, before the first fetch, it seeks its partitions that appear in `startAt`.
   */
  async start(startAt: StartOffsets): Promise<void> {
    let joined = false;
    let crash: unknown;
    const removeJoin = this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
      if (joined) return;
      joined = true;
      // kafkajs emits GROUP_JOIN synchronously inside the join, before the fetch loop starts.
      for (const [topic, partitions] of Object.entries(payload.memberAssignment)) {
        for (const partition of partitions) {
          const offset = startAt.get(partitionSlot(topic, partition));
          if (offset !== undefined) this.consumer.seek({ topic, partition, offset });
        }
      }
    });
    // Every join (the first and each rebalance): what this member owns now, and the state committed for it.
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
      this.assignment = new Set(
        Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => partitionSlot(topic, partition)),
        ),
      );
      this.positionsLoaded = this.loadPositions(Object.keys(payload.memberAssignment));
      this.positionsLoaded.catch(() => undefined);
    });
    const removeCrash = this.consumer.on(this.consumer.events.CRASH, (event) => (crash = event.payload.error));
    try {
      // kafkajs's run() returns after the first join, or after a crash of that join.
      await this.consumer.run(this.runConfig());
    } finally {
      removeJoin();
      removeCrash();
    }
    if (!joined)
      throw crash ?? new BusUnavailableError(`consumer of group ${this.options.groupId} did not join its group`, true);
    this.restartAfterFatalCrashes();
  }

  /**
   * kafkajs restarts a consumer after a retriable crash, but not after one it deems fatal — e.g. "Failed to find
   * group coordinator" while a restarted broker is still loading its groups — and the consumer would stay stopped
   * until the process restarts. After the first join, such a crash is retried here: connect and run again (the
   * subscriptions are kept; the group's committed offsets say where to go on), with back-off, until stopped.
   */
  private restartAfterFatalCrashes(): void {
    let delayMs = 500;
    const rerun = async (): Promise<void> => {
      if (this.stopping) return;
      try {
        await this.consumer.connect();
        await this.consumer.run(this.runConfig());
        delayMs = 500;
      } catch {
        delayMs = Math.min(delayMs * 2, 10_000);
        setTimeout(() => void rerun(), delayMs).unref();
      }
    };
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      if (event.payload.restart || this.stopping) return;
      setTimeout(() => void rerun(), delayMs).unref();
    });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.runs.requestStop();
      // The handler under way finishes and its offset, with every one acknowledged before, is committed before the
      // consumer leaves the group.
      await this.runs.settled();
      await this.committer.settled();
      await this.consumer.disconnect().catch(() => undefined);
      for (const unregister of this.unregister) unregister();
      this.settings.onStopped();
    })();
    return this.stopping;
  }

  private runConfig(): ConsumerRunConfig {
    const common = { autoCommit: false, partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently };
    if (this.settings.batchWindowMs <= 0)
      return { ...common, eachMessage: (payload) => this.runs.track(this.handle(payload)) };
    // Offsets resolved one message at a time, as by eachMessage: a batch left half-way (a stop, a seek) is not skipped.
    return {
      ...common,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.runs.track(this.handleBatch(payload)),
    };
  }

  /**
   * What one fetch brought for a partition of a batched subscription: its messages one at a time as kafkajs's own
   * eachMessage loop hands them over (runner.js `processEachMessage`: it stops at a stop or a seek, and resolves and
   * heartbeats after each), then the rest of the window since the fetch answered — kafkajs fetches again only once
   * the batches of a fetch are handled. A stop cuts the wait short.
   */
  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, pause } = payload;
    for (const message of batch.messages) {
      if (!payload.isRunning() || payload.isStale()) return;
      await this.handle({ topic: batch.topic, partition: batch.partition, message, heartbeat, pause });
      payload.resolveOffset(message.offset);
      await heartbeat();
    }
    const rest = this.fetchedAt + this.settings.batchWindowMs - performance.now();
    if (rest > 0) await sleep(rest, this.runs.stopRequested);
  }

  private async loadPositions(topics: readonly string[]): Promise<void> {
    const committed = await this.host.committed(this.options.groupId, topics);
    this.positions.clear();
    for (const [slot, position] of committed) this.positions.set(slot, position);
  }

  private async commit(commits: readonly OffsetCommit[]): Promise<void> {
    await this.committer.commit(commits);
    for (const { topic, partition, offset, metadata } of commits)
      this.positions.set(partitionSlot(topic, partition), { offset, metadata });
  }

  private acknowledge(commit: OffsetCommit): void {
    this.positions.set(partitionSlot(commit.topic, commit.partition), {
      offset: commit.offset,
      metadata: commit.metadata,
    });
    this.committer.acknowledge(commit);
  }

  private async handle(payload: EachMessagePayload): Promise<void> {
    // Stopping: leave the message uncommitted for the next member of the group. kafkajs moves its in-memory
    // position past it, but with autoCommit off nothing commits that position.
    if (this.stopping) return;
    // The parked streams of the partitions this member was just given (a failed read fails the batch: kafkajs
    // retries it, and the next join reads them again).
    await this.positionsLoaded;
    await this.deadLettering.handle(toIncomingMessage(payload), {
      run: (message) => this.runHandler(message, payload),
      pause: async (ms) => {
        await sleep(ms, this.runs.stopRequested);
        if (this.stopping) return false;
        // Throws when the group is rebalancing: kafkajs rejoins and the message goes to the partition's new owner.
        await payload.heartbeat();
        return true;
      },
    });
  }

  /** The handler, with heartbeats while it runs so that a slow one does not cost the member its partitions. */
  private async runHandler(message: IncomingMessage, payload: EachMessagePayload): Promise<void> {
    const heartbeats = setInterval(
      () => void payload.heartbeat().catch(() => undefined),
      this.settings.heartbeatIntervalMs,
    );
    try {
      await consumeMessage(message, this.options.groupId, () => this.options.handler(message));
    } finally {
      clearInterval(heartbeats);
    }
  }
}
