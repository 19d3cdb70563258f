import { registerConsumerLag, registerParkedStreams } from '@switchyard/metrics';
import { consumeMessage } from '@switchyard/telemetry';
import { DeadLettering, logDeadLetterEvent, type DeadLetterListener } from '../dead-letter/dead-lettering';
import { deadLetterTopicOf, isDeadLetterTopic } from '../dead-letter/dead-letter-records';
import {
  BusUnavailableError,
  type BusSubscription,
  type IncomingMessage,
  type MessageBus,
  type OutgoingMessage,
  type SubscribeOptions,
} from '../message-bus';
import {
  HandlerRuns,
  logHandlerFailure,
  redeliveryDelayMs,
  sleep,
  type HandlerFailureListener,
  type RedeliveryOptions,
} from '../redelivery';
import { InProcessBroker, type GroupMember, type InProcessBrokerOptions } from './in-process-broker';

export interface InProcessMessageBusOptions extends InProcessBrokerOptions {
  /**
   * The broker to connect to. Buses on one broker see the same topics and groups (services of one embedded
   * runtime, or a client reopened after a restart in a test). Default: a broker of this bus's own.
   */
  readonly broker?: InProcessBroker;
  readonly redelivery?: RedeliveryOptions;
  /** Told about every handler rejection. Default: a warning line on stderr. */
  readonly onHandlerFailure?: HandlerFailureListener;
  /** Told about every message parked, replayed or discarded. Default: a line on stderr. */
  readonly onDeadLetter?: DeadLetterListener;
  /**
   * `publish` resolves only once every consumer group subscribed to the topic has handled and acknowledged the
   * messages. Nothing here survives the process, so a message is safe only once its consumers have stored what
   * they make of it: a relay that moves its checkpoint when `publish` resolves then republishes, after a crash,
   * whatever a consumer had not handled yet (the embedded runtime). Default false: resolves once appended. A
   * handler must not publish to a topic its own group consumes and wait for it.
   */
  readonly publishWaitsForConsumers?: boolean;
}

/**
 * The embedded MessageBus: the same delivery semantics as the Kafka adapter, in memory. Publishing appends to
 * partitioned logs; each consumer group keeps committed offsets and hands each partition to one member at a
 * time, one message at a time; a rejected message is redelivered after a back-off before anything after it in
 * its partition, and parked on `<topic>.dead-letter` after the last attempt (`DeadLettering`, as on Kafka).
 * Messages are lost when the process ends, except the dead-letter topics and parked streams of a broker with
 * `durable` state.
 */
export class InProcessMessageBus implements MessageBus {
  readonly broker: InProcessBroker;
  private readonly subscriptions = new Set<InProcessSubscription>();
  private closed = false;

  private readonly ownBroker: boolean;

  constructor(private readonly options: InProcessMessageBusOptions = {}) {
    this.ownBroker = options.broker === undefined;
    this.broker = options.broker ?? new InProcessBroker(options);
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    this.broker.append(topic, messages);
    if (this.options.publishWaitsForConsumers) await this.broker.consumed(topic);
  }

  async subscribe(options: SubscribeOptions): Promise<BusSubscription> {
    this.assertOpen();
    if (options.topics.length === 0) throw new RangeError('subscribe needs at least one topic');
    const subscription = new InProcessSubscription(this.broker, options, {
      redelivery: this.options.redelivery ?? {},
      onHandlerFailure: this.options.onHandlerFailure ?? logHandlerFailure,
      onDeadLetter: this.options.onDeadLetter ?? logDeadLetterEvent,
      onStopped: () => this.subscriptions.delete(subscription),
    });
    this.subscriptions.add(subscription);
    this.broker.join(options.groupId, subscription, options.fromBeginning ?? true);
    return subscription;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    if (this.ownBroker) this.broker.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new BusUnavailableError('the in-process message bus is closed', false);
  }
}

interface SubscriptionSettings {
  readonly redelivery: RedeliveryOptions;
  readonly onHandlerFailure: HandlerFailureListener;
  readonly onDeadLetter: DeadLetterListener;
  readonly onStopped: () => void;
}

class InProcessSubscription implements GroupMember, BusSubscription {
  /** The topics subscribed to, and the dead-letter topic of each (read for replay and discard commands). */
  readonly topics: ReadonlySet<string>;
  private readonly runs = new HandlerRuns();
  private readonly deadLettering: DeadLettering;
  private readonly unregister: Array<() => void>;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly broker: InProcessBroker,
    private readonly options: SubscribeOptions,
    private readonly settings: SubscriptionSettings,
  ) {
    const dataTopics = options.topics.filter((topic) => !isDeadLetterTopic(topic));
    this.topics = new Set([...options.topics, ...dataTopics.map(deadLetterTopicOf)]);
    const groupId = options.groupId;
    this.deadLettering = new DeadLettering(
      {
        groupId,
        stopping: () => this.stopping !== undefined,
        publishDeadLetter: async (topic, message) => broker.append(topic, [message])[0]!,
        committed: (topic, partition) => broker.position(groupId, topic, partition),
        commit: async (commits) => broker.commit(groupId, commits),
        acknowledge: (commit) => broker.commit(groupId, [commit]),
        owns: (topic, partition) => broker.assignee(groupId, topic, partition) === this,
      },
      {
        redelivery: settings.redelivery,
        onHandlerFailure: settings.onHandlerFailure,
        onDeadLetter: settings.onDeadLetter,
        ownDeadLetterTopics: new Set(options.topics.filter(isDeadLetterTopic)),
      },
    );
    const partitions = Array.from({ length: broker.partitions }, (_, partition) => partition);
    this.unregister = [
      registerParkedStreams(() =>
        dataTopics.map((topic) => ({
          group: groupId,
          topic,
          streams: partitions
            .filter((partition) => broker.assignee(groupId, topic, partition) === this)
            .reduce((sum, partition) => sum + this.deadLettering.parkedOn(topic, partition).size, 0),
        })),
      ),
      registerConsumerLag(async () =>
        dataTopics.flatMap((topic) =>
          broker.lag(groupId, topic).map(({ partition, lag }) => ({ group: groupId, topic, partition, lag })),
        ),
      ),
    ];
  }

  deliver(message: IncomingMessage): Promise<void> {
    const delivery = (async () => {
      // Never inside the publisher's call stack, and a synchronous throw counts as a rejection.
      await Promise.resolve();
      await this.deadLettering.handle(message, {
        run: (handled) => consumeMessage(handled, this.options.groupId, () => this.options.handler(handled)),
        // A member that stops hands the message to the rest of its group at once.
        pause: async (ms) => {
          await sleep(ms, this.runs.stopRequested);
          return this.stopping === undefined;
        },
      });
    })();
    return this.runs.track(delivery);
  }

  /** After `deliver` itself failed (the dead-letter state could not be written): the message is tried again. */
  async backOff(error: unknown, message: IncomingMessage, attempt: number): Promise<void> {
    const redeliveryInMs = redeliveryDelayMs(attempt, this.settings.redelivery);
    this.settings.onHandlerFailure({ error, groupId: this.options.groupId, message, attempt, redeliveryInMs });
    await sleep(redeliveryInMs, this.runs.stopRequested);
  }

  async sync(): Promise<void> {
    await this.options.sync?.();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.broker.leave(this.options.groupId, this);
      this.runs.requestStop();
      await this.runs.settled();
      // Nothing of this bus outlives the process: a failed sync leaves the handler's commits to its file's next synced
      // commit (or SQLite's checkpoint when the file is closed).
      await this.sync().catch(() => undefined);
      for (const unregister of this.unregister) unregister();
      this.settings.onStopped();
    })();
    return this.stopping;
  }
}
