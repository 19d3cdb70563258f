import { Kafka, Partitioners, type Admin, type Consumer, type EachMessagePayload, type IHeaders, type Producer } from 'kafkajs';
import { consumeMessage } from '@switchyard/telemetry';
import {
  BusUnavailableError,
  type BusSubscription,
  type IncomingMessage,
  type MessageBus,
  type OutgoingMessage,
  type SubscribeOptions,
} from '../message-bus';
import { HandlerRuns, logHandlerFailure, redeliveryDelayMs, sleep, type HandlerFailureListener, type RedeliveryOptions } from '../redelivery';
import { toBusError } from './kafka-errors';
import { kafkaLogLevels, stderrLogCreator, type KafkaLogLevel } from './kafka-logging';

export interface KafkaMessageBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Partitions of the topics this bus creates. Default: the broker's `num.partitions`. */
  readonly topicPartitions?: number;
  /** How long a fetch waits for data: the consumer's latency floor. Default 50 ms (kafkajs: 5 s). */
  readonly maxWaitTimeInMs?: number;
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
  /** kafkajs's own logging, as JSON lines on stderr. Default 'warn'. */
  readonly logLevel?: KafkaLogLevel;
}

/** `KAFKA_BROKERS` (comma separated), default `127.0.0.1:9092`: the broker scripts/kafka.sh starts. */
export const kafkaBrokersFromEnv = (env: NodeJS.ProcessEnv = process.env): string[] => {
  const brokers = (env.KAFKA_BROKERS ?? '').split(',').map((broker) => broker.trim()).filter(Boolean);
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
 * Consuming: one consumer per subscription in the caller's group, autoCommit off. A message's offset is
 * committed right after its handler resolved, before the next message is handled; a rejection is redelivered
 * in place after a back-off (heart-beating meanwhile), so nothing after it in the partition overtakes it and
 * no rebalance is needed. A rebalance or a crash during that time hands the uncommitted message to whichever
 * member gets the partition.
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
    this.kafka = new Kafka({
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
        messages: messages.map((message) => ({ key: message.key, value: message.value, headers: { ...message.headers } })),
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
        if (!(error instanceof BusUnavailableError) || !error.retriable || attempt >= retries || this.closed) throw error;
        await sleep(Math.min(250 * 2 ** attempt, 3_000));
      }
    }
  }

  private async subscribeOnce(options: SubscribeOptions): Promise<BusSubscription> {
    const fromBeginning = options.fromBeginning ?? true;
    let consumer: Consumer | undefined;
    try {
      await this.ensureTopics(options.topics);
      const startAt: StartOffsets = fromBeginning ? new Map() : await this.endOffsetsOfUncommitted(options.groupId, options.topics);
      consumer = this.kafka.consumer({
        groupId: options.groupId,
        maxWaitTimeInMs: this.options.maxWaitTimeInMs ?? 50,
        sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
        heartbeatInterval: this.options.heartbeatIntervalMs ?? 1_000,
        allowAutoTopicCreation: false,
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], fromBeginning });
      const subscription = new KafkaSubscription(consumer, options, {
        redelivery: this.options.redelivery ?? {},
        onHandlerFailure: this.options.onHandlerFailure ?? logHandlerFailure,
        heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 1_000,
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
        () => reject(new BusUnavailableError(`Kafka at ${this.options.brokers.join(',')} did not answer within ${timeoutMs} ms`, true)),
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
    const clients = await Promise.allSettled([this.producerReady, this.adminReady].filter((ready) => ready !== undefined));
    await Promise.allSettled(clients.map((client) => (client.status === 'fulfilled' ? client.value?.disconnect() : undefined)));
  }

  private assertOpen(): void {
    if (this.closed) throw new BusUnavailableError('the Kafka message bus is closed', false);
  }

  private producer(): Promise<Producer> {
    this.producerReady ??= connectOnce(
      () => this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, maxInFlightRequests: 1, allowAutoTopicCreation: false }),
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
      const ends = new Map((await admin.fetchTopicOffsets(committed.topic)).map((partition) => [partition.partition, partition.high]));
      for (const { partition } of unset) startAt.set(partitionSlot(committed.topic, partition), ends.get(partition) ?? '0');
    }
    return startAt;
  }
}

/** `${topic}\u0000${partition}` → offset the group starts at, for partitions with nothing committed. */
type StartOffsets = Map<string, string>;

const partitionSlot = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

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

interface SubscriptionSettings {
  readonly redelivery: RedeliveryOptions;
  readonly onHandlerFailure: HandlerFailureListener;
  readonly heartbeatIntervalMs: number;
  readonly onStopped: () => void;
}

class KafkaSubscription implements BusSubscription {
  private readonly runs = new HandlerRuns();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly consumer: Consumer,
    private readonly options: SubscribeOptions,
    private readonly settings: SubscriptionSettings,
  ) {}

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
    const removeCrash = this.consumer.on(this.consumer.events.CRASH, (event) => (crash = event.payload.error));
    try {
      // kafkajs's run() returns after the first join, or after a crash of that join.
      await this.consumer.run({ autoCommit: false, eachMessage: (payload) => this.runs.track(this.handle(payload)) });
    } finally {
      removeJoin();
      removeCrash();
    }
    if (!joined) throw crash ?? new BusUnavailableError(`consumer of group ${this.options.groupId} did not join its group`, true);
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
        await this.consumer.run({ autoCommit: false, eachMessage: (payload) => this.runs.track(this.handle(payload)) });
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
      // The handler under way finishes and its offset is committed before the consumer leaves the group.
      await this.runs.settled();
      await this.consumer.disconnect().catch(() => undefined);
      this.settings.onStopped();
    })();
    return this.stopping;
  }


  private async handle(payload: EachMessagePayload): Promise<void> {
    const message = toIncomingMessage(payload);
    for (let attempt = 1; ; attempt += 1) {
      // Stopping: leave the message uncommitted for the next member of the group. kafkajs moves its in-memory
      // position past it, but with autoCommit off nothing commits that position.
      if (this.stopping) return;
      const outcome = await this.runHandler(message, payload);
      if (outcome.ok) {
        await this.consumer.commitOffsets([
          { topic: payload.topic, partition: payload.partition, offset: (BigInt(payload.message.offset) + 1n).toString() },
        ]);
        return;
      }
      const redeliveryInMs = redeliveryDelayMs(attempt, this.settings.redelivery);
      this.settings.onHandlerFailure({ error: outcome.error, groupId: this.options.groupId, message, attempt, redeliveryInMs });
      await sleep(redeliveryInMs, this.runs.stopRequested);
      // Throws when the group is rebalancing: kafkajs rejoins and the message goes to the partition's new owner.
      await payload.heartbeat();
    }
  }

  /** The handler, with heartbeats while it runs so that a slow one does not cost the member its partitions. */
  private async runHandler(message: IncomingMessage, payload: EachMessagePayload): Promise<{ ok: true } | { ok: false; error: unknown }> {
    const heartbeats = setInterval(() => void payload.heartbeat().catch(() => undefined), this.settings.heartbeatIntervalMs);
    try {
      await consumeMessage(message, this.options.groupId, () => this.options.handler(message));
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    } finally {
      clearInterval(heartbeats);
    }
  }
}
