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
 * its partition. Messages are lost when the process ends.
 */
export class InProcessMessageBus implements MessageBus {
  readonly broker: InProcessBroker;
  private readonly subscriptions = new Set<InProcessSubscription>();
  private closed = false;

  constructor(private readonly options: InProcessMessageBusOptions = {}) {
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
  }

  private assertOpen(): void {
    if (this.closed) throw new BusUnavailableError('the in-process message bus is closed', false);
  }
}

interface SubscriptionSettings {
  readonly redelivery: RedeliveryOptions;
  readonly onHandlerFailure: HandlerFailureListener;
  readonly onStopped: () => void;
}

class InProcessSubscription implements GroupMember, BusSubscription {
  readonly topics: ReadonlySet<string>;
  private readonly runs = new HandlerRuns();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly broker: InProcessBroker,
    private readonly options: SubscribeOptions,
    private readonly settings: SubscriptionSettings,
  ) {
    this.topics = new Set(options.topics);
  }

  deliver(message: IncomingMessage, acknowledge: () => void): Promise<void> {
    const delivery = (async () => {
      // Never inside the publisher's call stack, and a synchronous throw counts as a rejection.
      await Promise.resolve();
      await consumeMessage(message, this.options.groupId, () => this.options.handler(message));
      acknowledge();
    })();
    return this.runs.track(delivery);
  }

  async backOff(error: unknown, message: IncomingMessage, attempt: number): Promise<void> {
    const redeliveryInMs = redeliveryDelayMs(attempt, this.settings.redelivery);
    this.settings.onHandlerFailure({ error, groupId: this.options.groupId, message, attempt, redeliveryInMs });
    // A member that stops hands the message to the rest of its group at once.
    await sleep(redeliveryInMs, this.runs.stopRequested);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.broker.leave(this.options.groupId, this);
      this.runs.requestStop();
      await this.runs.settled();
      this.settings.onStopped();
    })();
    return this.stopping;
  }
}
