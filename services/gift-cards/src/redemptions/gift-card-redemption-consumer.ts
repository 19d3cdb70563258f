/**
 * The redemption and reversal requests (`GiftCardRedemptionRequested`, `GiftCardReversalRequested`) brought to
 * `GiftCardRedemptions` from `transactions.events` as a consumer group of their own (Kafka in the distributed runtime,
 * the in-process bus the transactions relay publishes to in the embedded one): the group's committed offsets are the
 * checkpoint, and a request is acknowledged only once its outcome is appended. At least once: `GiftCardRedemptions`
 * acts once per redemption id.
 *
 * Batched (`SubscribeOptions.batched`): the requests are a few messages among every card payment's events on that
 * topic, and fetched one by one each of those events cost this process a fetch round and the broker a fetch answer —
 * 0.7–1.2 ms of CPU per card payment between the two at 1 client (docs/performance.md, Stop 37). A split payment's
 * redemption or reversal waits for the batch window instead (KAFKA_BATCH_WINDOW_MS, 30 ms at most) before it is
 * fetched. The outcomes, on `gift-cards.events`, which only gift card events reach, are still fetched at once.
 */
import type { BusSubscription, MessageBus } from '@switchyard/bus';
import {
  EVENT_TYPE_HEADER,
  giftCardRedemptionRequestTypes,
  transactionsTopic,
  type EventMessage,
} from '@switchyard/contracts';
import type { GiftCardRedemptions } from './gift-card-redemptions';

const requestTypes: ReadonlySet<string> = new Set(Object.values(giftCardRedemptionRequestTypes));

/** From `transactions.events` (distributed runtime). */
export class GiftCardRedemptionConsumer {
  private subscription: BusSubscription | null = null;

  constructor(
    private readonly redemptions: GiftCardRedemptions,
    private readonly options: {
      readonly bus: MessageBus;
      /** `<GIFT_CARDS_CONSUMER_GROUP>.redemptions`: its offsets are its own, apart from the usage's. */
      readonly groupId: string;
    },
  ) {}

  /** Joins the group (resolves once live); a new group reads the topic from its beginning (nothing is acted on twice). */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.subscription = await this.options.bus.subscribe({
      groupId: this.options.groupId,
      topics: [transactionsTopic],
      fromBeginning: true,
      batched: true,
      handler: async (message) => {
        // Every payment's events are on the topic; the relay names each one's type in a header, read without parsing.
        const type = message.headers[EVENT_TYPE_HEADER];
        if (type !== undefined && !requestTypes.has(type)) return;
        const event = JSON.parse(message.value) as EventMessage;
        if (requestTypes.has(event.type)) await this.redemptions.handle(event);
      },
    });
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }
}
