/**
 * The MessageBus port: services publish their public events to one topic each and consume other topics as a
 * consumer group. At-least-once delivery, ordered per key (a key is usually a stream id). Adapters: in-process
 * (embedded) and Kafka. Every adapter passes `contract/message-bus.contract.ts`.
 */

export interface OutgoingMessage {
  /** Messages with the same key are delivered in publish order. */
  readonly key: string;
  /** JSON text. */
  readonly value: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface IncomingMessage {
  readonly topic: string;
  readonly key: string;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Partition and offset as the bus knows them (the in-process bus uses partition 0). */
  readonly partition: number;
  readonly offset: string;
}

export interface SubscribeOptions {
  /** One group per consuming service (Kafka consumer group semantics: each message goes to one member). */
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a group with no committed offset starts. Default true (a new consumer sees the whole topic). */
  readonly fromBeginning?: boolean;
  /**
   * Called per message; messages of one key are handled one at a time in order. The message is acknowledged
   * (offset committed) only after the promise resolves; a rejection redelivers it.
   */
  readonly handler: (message: IncomingMessage) => Promise<void>;
  /**
   * The bus may gather this subscription's messages for up to its batch window before handing them over (Kafka:
   * `KafkaMessageBusOptions.batchWindowMs`, one fetch per window instead of one per message, for the broker and the
   * consumer alike): for one no request waits on (a projection, the webhooks' ingest), or one that wants a few
   * messages of a busy topic (split tender's requests among every payment's events on `transactions.events`).
   * Default false: each message as soon as it lands, for a subscriber a request waits on (a gift card redemption's
   * outcome).
   */
  readonly batched?: boolean;
  /**
   * For a handler that commits what it makes of each message without an fsync of its own (`withDeferredSync`): the
   * bus calls it before messages handled since its last call count as acknowledged — before their offsets go to
   * Kafka, before a publisher that waits for its consumers (the in-process bus's `publishWaitsForConsumers`: the
   * embedded runtime's relays, whose checkpoints move next) is answered, and when the subscription stops — so one
   * fsync covers a batch of messages instead of one each. It must make those commits durable (one synced commit on the
   * same file does); until it resolves nothing it covers is acknowledged, and a rejection leaves them unacknowledged.
   */
  readonly sync?: () => void | Promise<void>;
}

export interface BusSubscription {
  /**
   * Leaves the group. Resolves once the handler under way, if any, has finished and its message is
   * acknowledged; messages not handled yet stay with the group for its other or later members.
   */
  stop(): Promise<void>;
}

export interface MessageBus {
  /** Resolves once every message is durably accepted by the bus (Kafka: acks from all in-sync replicas). */
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void>;
  /**
   * Resolves once the subscription is live (Kafka: the consumer joined its group). A new group with
   * `fromBeginning: false` receives every message published after `subscribe` was called.
   */
  subscribe(options: SubscribeOptions): Promise<BusSubscription>;
  /** Resolves when the bus is reachable; used by readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class BusUnavailableError extends Error {
  readonly type = 'bus_unavailable' as const;
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BusUnavailableError';
  }
}
