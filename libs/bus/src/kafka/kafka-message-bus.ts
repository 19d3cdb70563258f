import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';
import type { ConsumerLag } from '@switchyard/metrics';
import { logDeadLetterEvent, type CommittedPosition, type DeadLetterListener } from '../dead-letter/dead-lettering';
import { deadLetterTopicOf, isDeadLetterTopic, topicOfDeadLetters } from '../dead-letter/dead-letter-records';
import {
  BusUnavailableError,
  type BusSubscription,
  type MessageBus,
  type OutgoingMessage,
  type SubscribeOptions,
} from '../message-bus';
import { logHandlerFailure, sleep, type HandlerFailureListener, type RedeliveryOptions } from '../redelivery';
import { coPartitionedAssigner } from './co-partitioned-assigner';
import { toBusError } from './kafka-errors';
import { kafkajs } from './kafkajs';
import { kafkaLogLevels, stderrLogCreator, type KafkaLogLevel } from './kafka-logging';
import { KafkaSubscription, partitionSlot, type KafkaSubscriptionHost, type StartOffsets } from './kafka-subscription';

export interface KafkaMessageBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Partitions of the topics this bus creates. Default: the broker's `num.partitions`. */
  readonly topicPartitions?: number;
  /**
   * How long a fetch of an idle consumer waits at the broker for a message before it is asked again (kafkajs: 5 s).
   * Not a latency floor: the broker answers a waiting fetch as soon as a message lands (`minBytes` 1), and kafkajs
   * fetches from each broker on its own; it is how often an idle consumer costs the broker and itself a round trip.
   * Default 500 ms.
   */
  readonly maxWaitTimeInMs?: number;
  /**
   * A `batched` subscription's window: after it handled what a fetch brought, it fetches again only once this long
   * has passed since that fetch answered, so that what lands meanwhile comes in one fetch. The first message to reach
   * an idle topic is handed over at once. Default 30 ms; 0: batched subscriptions are fetched as the others are.
   */
  readonly batchWindowMs?: number;
  /**
   * How long a handled message's offset may wait before it is committed, with the others handled meanwhile: a commit
   * is a write to the broker's offsets log, and a consumer following a busy topic would otherwise make one per round
   * trip. A crash hands back up to this long of handled messages (consumers drop repeats by id); a stop commits at
   * once. Default `DEFAULT_COMMIT_INTERVAL_MS`; 0: after each message, as soon as the last commit is answered.
   */
  readonly commitIntervalMs?: number;
  /** Default 10 s: a member that died holds its partitions this long. */
  readonly sessionTimeoutMs?: number;
  /** Default 1 s: also how soon a running member notices a rebalance when another one joins. */
  readonly heartbeatIntervalMs?: number;
  /** kafkajs `connectionTimeout`. Default 1 s. */
  readonly connectionTimeoutMs?: number;
  /** kafkajs retries per operation before an error surfaces. Default 5 (about 9 s with back-off). */
  readonly retries?: number;
  /** `ping` gives up after this long. Default 3 s. */
  readonly pingTimeoutMs?: number;
  readonly redelivery?: RedeliveryOptions;
  /** Told about every handler rejection. Default: a warning line on stderr. */
  readonly onHandlerFailure?: HandlerFailureListener;
  /** Told about every message parked, replayed or discarded. Default: a line on stderr. */
  readonly onDeadLetter?: DeadLetterListener;
  /**
   * Partitions a member handles at the same time (kafkajs `partitionsConsumedConcurrently`). Default 1: one message
   * at a time across all its partitions. More lets a slow message (a handler waiting on another service) hold back
   * only its own partition among those of the same fetch; kafkajs fetches again only once every batch of its last
   * fetch is handled, so messages that arrive meanwhile wait for the slow one. Messages of one key stay in order, as
   * they share a partition.
   */
  readonly partitionsConsumedConcurrently?: number;
  /** kafkajs's own logging, as JSON lines on stderr. Default 'warn'. */
  readonly logLevel?: KafkaLogLevel;
}

/** How long a handled message's offset may wait for its commit (`KafkaMessageBusOptions.commitIntervalMs`). */
export const DEFAULT_COMMIT_INTERVAL_MS = 250;
/** A batched subscription's window (`KafkaMessageBusOptions.batchWindowMs`). */
export const DEFAULT_BATCH_WINDOW_MS = 30;
/** How long an idle consumer's fetch waits at the broker (`KafkaMessageBusOptions.maxWaitTimeInMs`). */
export const DEFAULT_MAX_WAIT_TIME_MS = 500;

/** `KAFKA_BROKERS` (comma separated), default `127.0.0.1:9092`: the broker scripts/kafka.sh starts. */
export const kafkaBrokersFromEnv = (env: NodeJS.ProcessEnv = process.env): string[] => {
  const brokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  return brokers.length > 0 ? brokers : ['127.0.0.1:9092'];
};

/**
 * The MessageBus on Kafka (kafkajs).
 *
 * Publishing: one producer per bus, `acks: -1`, messages keyed so the default (Java-compatible murmur2)
 * partitioner keeps a key on one partition. `maxInFlightRequests: 1` keeps a retried request from overtaking
 * the next one. The producer is not idempotent: kafkajs marks that experimental and it retries forever
 * (`retries` = MAX_SAFE_INTEGER), so a dead broker would hang `publish` instead of failing it; the duplicates a
 * non-idempotent retry can cause are what consumers' `event-id` deduplication is for.
 *
 * Consuming: one consumer per subscription in the caller's group, autoCommit off (`KafkaSubscription`). A
 * message's offset is committed right after its handler resolved, before the next message is handled; a rejection
 * is redelivered in place after a back-off (heart-beating meanwhile), so nothing after it in the partition overtakes
 * it and no rebalance is needed; after the last attempt it is parked on `<topic>.dead-letter` (`DeadLettering`). A
 * rebalance or a crash during that time hands the uncommitted message to whichever member gets the partition. Each
 * subscription also reads the dead-letter topics of its topics (replay and discard commands), created with as many
 * partitions as their topic and assigned with it (`coPartitionedAssigner`).
 *
 * Topics are created when missing, on publish and on subscribe, so the first publish does not race the
 * broker's auto-creation and a consumer never subscribes to a topic that does not exist yet.
 */
export class KafkaMessageBus implements MessageBus {
  private readonly kafka: Kafka;
  private readonly subscriptions = new Set<KafkaSubscription>();
  private readonly topicsReady = new Map<string, Promise<void>>();
  private producerReady: Promise<Producer> | undefined;
  private adminReady: Promise<Admin> | undefined;
  private closed = false;

  constructor(private readonly options: KafkaMessageBusOptions) {
    if (options.brokers.length === 0) throw new RangeError('KafkaMessageBus needs at least one broker');
    this.kafka = new (kafkajs().Kafka)({
      clientId: options.clientId,
      brokers: [...options.brokers],
      connectionTimeout: options.connectionTimeoutMs ?? 1_000,
      retry: { retries: options.retries ?? 5 },
      logLevel: kafkaLogLevels[options.logLevel ?? 'warn'],
      logCreator: stderrLogCreator,
    });
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    if (messages.length === 0) return;
    try {
      await this.ensureTopics([topic]);
      const producer = await this.producer();
      await producer.send({
        topic,
        acks: -1,
        messages: messages.map((message) => ({
          key: message.key,
          value: message.value,
          headers: { ...message.headers },
        })),
      });
    } catch (error) {
      throw toBusError(error, `publish to ${topic}`);
    }
  }

  /**
   * Retriable failures (a fresh broker still electing the group coordinator answers COORDINATOR_NOT_AVAILABLE or
   * NOT_COORDINATOR for a few seconds; kafkajs's admin does not retry those) are tried again with back-off,
   * `retries` times, before the error surfaces.
   */
  async subscribe(options: SubscribeOptions): Promise<BusSubscription> {
    this.assertOpen();
    if (options.topics.length === 0) throw new RangeError('subscribe needs at least one topic');
    const retries = this.options.retries ?? 5;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.subscribeOnce(options);
      } catch (error) {
        if (!(error instanceof BusUnavailableError) || !error.retriable || attempt >= retries || this.closed)
          throw error;
        await sleep(Math.min(250 * 2 ** attempt, 3_000));
      }
    }
  }

  private async subscribeOnce(options: SubscribeOptions): Promise<BusSubscription> {
    const fromBeginning = options.fromBeginning ?? true;
    let consumer: Consumer | undefined;
    try {
      await this.ensureTopics(options.topics);
      const deadLetterTopics = options.topics.filter((topic) => !isDeadLetterTopic(topic)).map(deadLetterTopicOf);
      await this.ensureDeadLetterTopics(deadLetterTopics);
      const topics = [...new Set([...options.topics, ...deadLetterTopics])];
      const startAt: StartOffsets = fromBeginning
        ? new Map()
        : await this.endOffsetsOfUncommitted(options.groupId, topics);
      consumer = this.kafka.consumer({
        groupId: options.groupId,
        maxWaitTimeInMs: this.options.maxWaitTimeInMs ?? DEFAULT_MAX_WAIT_TIME_MS,
        sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
        heartbeatInterval: this.options.heartbeatIntervalMs ?? 1_000,
        allowAutoTopicCreation: false,
        // Round robin last: a group whose older members know only it (a rolling upgrade) still forms.
        partitionAssigners: [coPartitionedAssigner, kafkajs().PartitionAssigners.roundRobin],
      });
      await consumer.connect();
      await consumer.subscribe({ topics, fromBeginning });
      const subscription = new KafkaSubscription(consumer, options, this.subscriptionHost, {
        redelivery: this.options.redelivery ?? {},
        onHandlerFailure: this.options.onHandlerFailure ?? logHandlerFailure,
        onDeadLetter: this.options.onDeadLetter ?? logDeadLetterEvent,
        heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 1_000,
        commitIntervalMs: this.options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS,
        partitionsConsumedConcurrently: Math.max(1, Math.trunc(this.options.partitionsConsumedConcurrently ?? 1)),
        batchWindowMs: options.batched ? (this.options.batchWindowMs ?? DEFAULT_BATCH_WINDOW_MS) : 0,
        onStopped: () => this.subscriptions.delete(subscription),
      });
      await subscription.start(startAt);
      this.subscriptions.add(subscription);
      return subscription;
    } catch (error) {
      await consumer?.disconnect().catch(() => undefined);
      throw toBusError(error, `subscribe of group ${options.groupId} to ${options.topics.join(', ')}`);
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const timeoutMs = this.options.pingTimeoutMs ?? 3_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new BusUnavailableError(
              `Kafka at ${this.options.brokers.join(',')} did not answer within ${timeoutMs} ms`,
              true,
            ),
          ),
        timeoutMs,
      );
    });
    const answer = this.admin().then((admin) => admin.describeCluster());
    answer.catch(() => undefined); // may settle after the timeout won
    try {
      await Promise.race([answer, timeout]);
    } catch (error) {
      throw toBusError(error, `ping of ${this.options.brokers.join(',')}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.stop()));
    const clients = await Promise.allSettled(
      [this.producerReady, this.adminReady].filter((ready) => ready !== undefined),
    );
    await Promise.allSettled(
      clients.map((client) => (client.status === 'fulfilled' ? client.value?.disconnect() : undefined)),
    );
  }

  private assertOpen(): void {
    if (this.closed) throw new BusUnavailableError('the Kafka message bus is closed', false);
  }

  private producer(): Promise<Producer> {
    this.producerReady ??= connectOnce(
      () =>
        this.kafka.producer({
          createPartitioner: kafkajs().Partitioners.DefaultPartitioner,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
        }),
      () => (this.producerReady = undefined),
    );
    return this.producerReady;
  }

  private admin(): Promise<Admin> {
    this.adminReady ??= connectOnce(
      () => this.kafka.admin(),
      () => (this.adminReady = undefined),
    );
    return this.adminReady;
  }

  private async ensureTopics(topics: readonly string[]): Promise<void> {
    await Promise.all(
      topics.map((topic) => {
        let ready = this.topicsReady.get(topic);
        if (!ready) {
          ready = this.createTopicIfMissing(topic);
          this.topicsReady.set(topic, ready);
          ready.catch(() => this.topicsReady.delete(topic));
        }
        return ready;
      }),
    );
  }

  /** What subscriptions ask of this bus: its producer for dead letters, its admin for offsets. */
  private readonly subscriptionHost: KafkaSubscriptionHost = {
    publishDeadLetter: async (topic, message) => {
      try {
        const producer = await this.producer();
        const [written] = await producer.send({
          topic,
          acks: -1,
          messages: [{ key: message.key, value: message.value, headers: { ...message.headers } }],
        });
        if (!written) throw new BusUnavailableError(`Kafka gave no offset for the dead letter on ${topic}`, true);
        return Number(written.baseOffset);
      } catch (error) {
        throw toBusError(error, `publish to ${topic}`);
      }
    },
    committed: async (groupId, topics) => {
      const positions = new Map<string, CommittedPosition>();
      if (topics.length === 0) return positions;
      const admin = await this.admin();
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics: [...topics] })) {
        for (const { partition, offset, metadata } of partitions) {
          if (offset !== '-1') positions.set(partitionSlot(topic, partition), { offset, metadata: metadata ?? null });
        }
      }
      return positions;
    },
    lag: async (groupId, topics) => {
      if (topics.length === 0) return [];
      const admin = await this.admin();
      const lags: ConsumerLag[] = [];
      const committed = await admin.fetchOffsets({ groupId, topics: [...topics] });
      for (const { topic, partitions } of committed) {
        const ends = new Map(
          (await admin.fetchTopicOffsets(topic)).map((partition) => [partition.partition, partition]),
        );
        for (const { partition, offset } of partitions) {
          const end = ends.get(partition);
          if (!end) continue;
          const from = offset === '-1' ? BigInt(end.low) : BigInt(offset);
          lags.push({
            group: groupId,
            topic,
            partition,
            lag: Number(BigInt(end.high) > from ? BigInt(end.high) - from : 0n),
          });
        }
      }
      return lags;
    },
  };

  /**
   * A topic's dead-letter topic gets as many partitions as the topic, so a stream's entries and commands share the
   * partition number of the stream (the producer's partitioner puts equal keys on equal partition numbers).
   */
  private async ensureDeadLetterTopics(deadLetterTopics: readonly string[]): Promise<void> {
    const admin = await this.admin();
    const missing = deadLetterTopics.filter((topic) => !this.topicsReady.has(topic));
    if (missing.length === 0) return;
    const existing = new Set(await admin.listTopics());
    const create = missing.filter((topic) => !existing.has(topic));
    if (create.length > 0) {
      const sources = await admin.fetchTopicMetadata({ topics: create.map(topicOfDeadLetters) });
      const partitionsOf = new Map(
        sources.topics.map((source) => [deadLetterTopicOf(source.name), source.partitions.length]),
      );
      // Never deleted by age: a parked stream's entries must still be there when someone replays it.
      const configEntries = [{ name: 'retention.ms', value: '-1' }];
      await admin.createTopics({
        topics: create.map((topic) => ({ topic, numPartitions: partitionsOf.get(topic) ?? -1, configEntries })),
        waitForLeaders: true,
      });
    }
    for (const topic of missing) this.topicsReady.set(topic, Promise.resolve());
  }

  private async createTopicIfMissing(topic: string): Promise<void> {
    const admin = await this.admin();
    if ((await admin.listTopics()).includes(topic)) return;
    // Resolves false when another client created it meanwhile; waits for the partition leaders otherwise.
    await admin.createTopics({
      topics: [{ topic, numPartitions: this.options.topicPartitions ?? -1 }],
      waitForLeaders: true,
    });
  }

  /**
   * `fromBeginning: false` means "messages published from now on". kafkajs resolves a new group's position
   * only at its first fetch, after the group join, so a message published in between would be skipped. So the
   * end offsets of the partitions the group has nothing committed for are read now, and the consumer seeks to
   * them when it first joins. (admin.setOffsets would do it too, but runs a throw-away consumer that takes
   * kafkajs's default 5 s fetch wait to stop.)
   */
  private async endOffsetsOfUncommitted(groupId: string, topics: readonly string[]): Promise<StartOffsets> {
    const admin = await this.admin();
    const startAt: StartOffsets = new Map();
    for (const committed of await admin.fetchOffsets({ groupId, topics: [...topics] })) {
      const unset = committed.partitions.filter((partition) => partition.offset === '-1');
      if (unset.length === 0) continue;
      const ends = new Map(
        (await admin.fetchTopicOffsets(committed.topic)).map((partition) => [partition.partition, partition.high]),
      );
      for (const { partition } of unset)
        startAt.set(partitionSlot(committed.topic, partition), ends.get(partition) ?? '0');
    }
    return startAt;
  }
}

/** One connect per client at a time; a failed connect is forgotten so the next call tries again. */
const connectOnce = <Client extends { connect(): Promise<void>; disconnect(): Promise<void> }>(
  create: () => Client,
  forget: () => void,
): Promise<Client> => {
  const client = create();
  return client.connect().then(
    () => client,
    async (error: unknown) => {
      forget();
      await client.disconnect().catch(() => undefined);
      throw error;
    },
  );
};
