/**
 * The gift cards service's answers to split tender's requests (`gift-card-redemption-<id>` on `gift-cards.events`):
 * followed as a consumer group (its committed offsets its checkpoint; a new group reads the topic from its beginning),
 * each answer recorded on its transaction's stream by `record` (`GiftCardPayments.recordOutcome`, idempotent) before
 * it is acknowledged, then handed to the request of this process waiting for it, if any. So an answer that arrives
 * after its request stopped waiting, or while this process was down, is recorded all the same — and a late success
 * for a payment already rolled back is reversed, never completes it.
 */
import type { BusSubscription, MessageBus } from '@switchyard/bus';
import { giftCardRedemptionEventTypes, giftCardsTopic, type EventMessage } from '@switchyard/contracts';

/** One answer of the gift cards service (its event type and data: redemption id, transaction id, …). */
export interface GiftCardOutcome {
  readonly type: string;
  readonly data: {
    readonly redemptionId: string;
    readonly transactionId: string;
    readonly providerRedemptionId?: string;
    readonly reversed?: boolean;
    readonly error?: { readonly errorCode: string; readonly rawErrorCode?: string; readonly rawErrorMessage?: string };
  };
}

/** The answers to a redemption request, and to a reversal request. */
export const redemptionAnswers: ReadonlySet<string> = new Set([
  giftCardRedemptionEventTypes.redeemed,
  giftCardRedemptionEventTypes.refused,
  giftCardRedemptionEventTypes.unanswered,
]);
export const reversalAnswers: ReadonlySet<string> = new Set([
  giftCardRedemptionEventTypes.reversed,
  giftCardRedemptionEventTypes.reversalFailed,
]);

const answerTypes: ReadonlySet<string> = new Set([
  giftCardRedemptionEventTypes.redeemed,
  giftCardRedemptionEventTypes.refused,
  giftCardRedemptionEventTypes.unanswered,
  giftCardRedemptionEventTypes.reversed,
  giftCardRedemptionEventTypes.reversalFailed,
]);

export class GiftCardOutcomes {
  private readonly waiters = new Map<string, Set<(outcome: GiftCardOutcome) => void>>();
  private subscription: BusSubscription | null = null;

  constructor(private readonly record: (outcome: GiftCardOutcome) => Promise<void>) {}

  /** Joins the group; resolves once live. */
  async start(options: { readonly bus: MessageBus; readonly groupId: string }): Promise<void> {
    if (this.subscription) return;
    this.subscription = await options.bus.subscribe({
      groupId: options.groupId,
      topics: [giftCardsTopic],
      fromBeginning: true,
      handler: async (message) => {
        const event = JSON.parse(message.value) as EventMessage;
        if (!answerTypes.has(event.type)) return;
        const outcome = { type: event.type, data: event.data as unknown as GiftCardOutcome['data'] };
        await this.record(outcome);
        this.notify(outcome);
      },
    });
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  get following(): boolean {
    return this.subscription !== null;
  }

  /**
   * The next answer of one of `types` about `redemptionId` (register before asking, so none is missed); null after
   * `timeoutMs`. `cancel` stops waiting (the request could not be asked).
   */
  wait(
    redemptionId: string,
    types: ReadonlySet<string>,
    timeoutMs: number,
  ): { promise: Promise<GiftCardOutcome | null>; cancel(): void } {
    let cancel = () => {};
    const promise = new Promise<GiftCardOutcome | null>((resolve) => {
      const waiters = this.waiters.get(redemptionId) ?? new Set();
      this.waiters.set(redemptionId, waiters);
      const done = (outcome: GiftCardOutcome | null) => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (waiters.size === 0) this.waiters.delete(redemptionId);
        resolve(outcome);
      };
      const waiter = (outcome: GiftCardOutcome) => {
        // A late answer to the redemption while its reversal is awaited (or the other way round) is not the one.
        if (types.has(outcome.type)) done(outcome);
      };
      const timer = setTimeout(() => done(null), timeoutMs);
      timer.unref?.();
      waiters.add(waiter);
      cancel = () => done(null);
    });
    return { promise, cancel };
  }

  private notify(outcome: GiftCardOutcome): void {
    for (const waiter of [...(this.waiters.get(outcome.data.redemptionId) ?? [])]) waiter(outcome);
  }
}
