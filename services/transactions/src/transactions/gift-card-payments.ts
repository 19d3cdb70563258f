/**
 * Paying with gift cards, alone or with a payment method for the rest (split tender), as a process manager over the
 * transaction stream. The payment method is authorized first (never captured yet); the gift cards are redeemed
 * after it, one at a time, each with its redemption id as the provider's reference. If one fails, every redemption
 * that may have happened is reversed by that reference and the payment method's authorization is voided; only then
 * is the payment recorded as failed. All of it succeeded: an `intent: capture` payment method is captured.
 *
 * Every card — stored (`POST /gift-cards`), or given by number and PIN and handed over by the gateway to the gift
 * cards service as a one-off card (`gift-cards.hand-over`) — is redeemed and reversed by the gift cards service,
 * which alone reads its number and PIN; this service never sees them. The request is an event on the transaction
 * stream (`GiftCardRedemptionRequested`, `GiftCardReversalRequested`, relayed on `transactions.events`), its answer
 * an event of the gift cards service (`gift-cards.events`) that `GiftCardOutcomes` records here (`recordOutcome`) and
 * hands to the request waiting for it (up to `outcomeTimeoutMs`: no answer by then is no answer, as a provider's
 * timeout).
 *
 * A crash can stop this anywhere. Every step is an event, and the provider's redeem and reverse calls are idempotent
 * by reference (the gift cards service's, by redemption id), so recovery needs no memory of the crashed process: a process still open after
 * GIFT_CARD_RECOVERY_AFTER_MS that no request in this process is running is rolled back — every redemption not
 * known to be failed is reversed (a reference the provider never redeemed reverses nothing, and the simulator
 * refuses it ever after), the authorization is voided. The buyer's request never got its answer, so nothing is
 * finished forwards. A payment of before the hand-over (its card's number and PIN were held in this process's memory)
 * is rolled back; its reversal, by reference, is made from here.
 */
import { ApiError } from '@switchyard/api';
import { type GiftCardConnector, type ProviderResponse } from '@switchyard/connectors';
import {
  giftCardRedemptionEventTypes,
  type EmbedBuyerPin,
  type GiftCardHandOver,
  type TransactionCreateInput,
} from '@switchyard/contracts';
import { DomainError } from '@switchyard/decider';
import type { PaymentServiceConnection, PaymentServices } from '../payment-services/payment-services.slice';
import type { TransactionsContext } from '../transactions-context';
import { GiftCardOutcomes, redemptionAnswers, reversalAnswers, type GiftCardOutcome } from './gift-card-outcomes';
import { toOutcome } from './provider-answers';
import type { ProviderConnectors } from './provider-connectors';
import {
  byGiftCardsService,
  hasPaymentMethod,
  isGiftCardPaymentOpen,
  type GiftCardError,
  type GiftCardPlan,
  type GiftCardRedemptionPlan,
  type Transaction,
} from './transaction';
import type { TransactionStore } from './transaction-store';

/**
 * The stored gift cards: the gift cards service, in process (embedded runtime) or over its RPC patterns
 * `gift-cards.describe` and `gift-cards.belongs-to` (distributed runtime, `giftCardsOverRpc`). Never a number or PIN.
 */
export interface GiftCardSource {
  /** What may be shown of the stored card; null when unknown, deleted or another merchant account's. */
  describe(
    merchantAccountId: string,
    giftCardId: string,
  ): Promise<{ readonly bin: string; readonly subBin: string; readonly last4: string } | null>;
  /** Whether the stored card is the buyer's (stored for that `buyer_id` or `buyer_external_identifier`). */
  belongsTo(merchantAccountId: string, giftCardId: string, buyer: NonNullable<EmbedBuyerPin>): Promise<boolean>;
  /** Erases the one-off cards a request was handed over with when it created no transaction. */
  forgetHandedOver(merchantAccountId: string, giftCardIds: readonly string[]): Promise<void>;
}

export interface GiftCardPaymentSettings {
  /** How long an unfinished gift card process may stay open before recovery rolls it back. */
  readonly recoveryAfterMs: number;
  /** How long a request waits for the gift cards service's answer (a stored card's redemption or reversal). */
  readonly outcomeTimeoutMs?: number;
}

/** Default of `outcomeTimeoutMs`: longer than the provider's own time limit (MOCK_CARD_TIMEOUT_MS, 10 s). */
export const GIFT_CARD_OUTCOME_TIMEOUT_MS = 15_000;

/** What a create request's gift cards resolve to before the transaction exists. */
export interface PlannedGiftCards {
  readonly plan: GiftCardPlan;
  readonly service: PaymentServiceConnection;
}

/**
 * A roll-back step the provider could not take (unreachable, refused): the process stays open and the recovery
 * timer tries again. The request that met it answers with the transaction as it stands, never a 500.
 */
export class RollBackPending extends Error {
  override readonly name = 'RollBackPending';
}

/** Why recovery undid a payment: the buyer's request ended without an answer (reference: a canceled operation). */
const interruptedErrorCode = 'operation_canceled';

export class GiftCardPayments {
  /** The gift cards service's answers, recorded here and handed to the requests waiting for them. */
  readonly outcomes = new GiftCardOutcomes((outcome) =>
    this.store.actingAs({ type: 'system', id: 'gift-cards' }, () => this.recordOutcome(outcome)),
  );
  /** Transactions whose gift card process a request in this process is driving: recovery leaves them alone. */
  private readonly running = new Set<string>();

  constructor(
    private readonly context: TransactionsContext,
    private readonly store: TransactionStore,
    private readonly dependencies: {
      readonly paymentServices: PaymentServices;
      readonly connectors: ProviderConnectors;
      readonly credentialSource: GiftCardSource | null;
      readonly settings: GiftCardPaymentSettings;
      /** Told of a roll-back left for the next recovery round (the service's background error handler). */
      readonly onRollBackPending?: (error: RollBackPending) => void;
    },
  ) {}

  private onRollBackPending(error: RollBackPending): void {
    this.dependencies.onRollBackPending?.(error);
  }

  /**
   * The request's gift cards checked and resolved (stored ones described by the gift cards service, ones given by
   * number and PIN as the gateway handed them over: `handOver`, aligned with `gift_cards`); null without gift cards.
   * With `embedBuyer` (an embed token's call), a stored card must be that buyer's: 403 otherwise (issue 22, item 2).
   */
  async plan(
    merchantAccountId: string,
    body: TransactionCreateInput,
    embedBuyer?: EmbedBuyerPin,
    handOver: readonly (GiftCardHandOver | null)[] = [],
  ): Promise<PlannedGiftCards | null> {
    const items = body.gift_cards ?? [];
    if (items.length === 0) return null;
    const service = this.dependencies.paymentServices
      .activeConnections(merchantAccountId)
      .find((c) => c.method === 'gift-card');
    if (!service) {
      throw ApiError.badRequest('This merchant account has no active gift card service', [
        {
          location: 'body',
          pointer: '/gift_cards',
          message: 'add a payment service of method gift-card (e.g. mock-gift-card) first',
          type: 'no_gift_card_service',
        },
      ]);
    }
    const redemptions: GiftCardRedemptionPlan[] = [];
    for (const [index, item] of items.entries()) {
      const redemptionId = this.context.newId();
      const oneOff = handOver[index];
      if (oneOff) {
        redemptions.push({
          redemptionId,
          oneOffGiftCardId: oneOff.id,
          bin: oneOff.bin,
          subBin: oneOff.sub_bin,
          last4: oneOff.last4,
          amount: item.amount,
        });
        continue;
      }
      if (!('id' in item)) {
        // Numbers and PINs are the gift cards service's alone: the gateway hands them over before this service.
        throw ApiError.badRequest('The gift card was not handed over to the gift cards service', [
          {
            location: 'body',
            pointer: `/gift_cards/${index}/number`,
            message: 'a gift card given by number and PIN reaches this service only as its hand-over',
            type: 'gift_card_not_handed_over',
          },
        ]);
      }
      const source = this.dependencies.credentialSource;
      if (
        embedBuyer !== undefined &&
        (embedBuyer === null || !(await source?.belongsTo(merchantAccountId, item.id, embedBuyer)))
      ) {
        const message = 'the stored gift card does not belong to the buyer this embed token is limited to';
        throw new ApiError(403, message, [
          { location: 'body', pointer: `/gift_cards/${index}/id`, message, type: 'pinned_by_embed_token' },
        ]);
      }
      const digits = (await source?.describe(merchantAccountId, item.id)) ?? null;
      if (!digits) {
        throw ApiError.badRequest('The gift card does not exist', [
          {
            location: 'body',
            pointer: `/gift_cards/${index}/id`,
            message: 'no stored gift card with this id',
            type: 'gift_card_not_found',
          },
        ]);
      }
      redemptions.push({ redemptionId, giftCardId: item.id, ...digits, amount: item.amount });
    }
    return { plan: { serviceId: service.id, redemptions }, service };
  }

  /**
   * The one-off cards of a request that created no transaction (a refusal, a replay, a conflict), erased by the gift
   * cards service before the answer, as the vault's handed-over card is: a refusal leaves nothing behind.
   */
  async forgetHandedOver(merchantAccountId: string, handOver: readonly (GiftCardHandOver | null)[]): Promise<void> {
    const ids = handOver.flatMap((given) => (given ? [given.id] : []));
    if (ids.length > 0) await this.dependencies.credentialSource?.forgetHandedOver(merchantAccountId, ids);
  }

  /**
   * The gift card part, once the payment method's authorization is decided (at once without one). Waits (returns)
   * while the payment method still waits for the provider or the buyer. A provider that cannot take a reversal or a
   * void leaves the process open for recovery to finish.
   */
  async settle(id: string): Promise<void> {
    this.running.add(id);
    try {
      const t = await this.store.state(id);
      if (t.status === 'absent' || !isGiftCardPaymentOpen(t)) return;
      if (hasPaymentMethod(t) && (t.status === 'processing' || t.status === 'buyer_approval_pending')) return;
      if (hasPaymentMethod(t) && t.status !== 'authorization_succeeded') {
        // The payment method was declined or failed: no gift card is charged.
        await this.store.record(id, { type: 'SkipGiftCardRedemptions', data: {} });
        await this.store.record(id, {
          type: 'CompleteGiftCardPayment',
          data: { outcome: 'failed', ...(t.errorCode ? { errorCode: t.errorCode } : {}) },
        });
        return;
      }
      await this.redeemAll(t);
    } catch (error) {
      if (!(error instanceof RollBackPending)) throw error;
      this.onRollBackPending(error);
    } finally {
      this.running.delete(id);
    }
  }

  private async redeemAll(t: Transaction): Promise<void> {
    const id = t.id;
    for (const redemption of t.giftCards?.redemptions ?? []) {
      if (redemption.status !== 'created') continue;
      if (!byGiftCardsService(redemption))
        // A payment of before the hand-over: its number and PIN were held in the memory of a process since stopped.
        return this.rollBack(id, {
          errorCode: interruptedErrorCode,
          rawErrorMessage: 'the gift card details are no longer held (the service restarted)',
        });
      // Asked of the gift cards service; its answer is recorded here as well as by `outcomes`.
      const answer = await this.ask(id, redemption.redemptionId, 'RequestGiftCardRedemption');
      if (answer?.type === giftCardRedemptionEventTypes.redeemed) {
        await this.recordOutcome(answer);
        continue;
      }
      if (answer?.type === giftCardRedemptionEventTypes.refused) await this.recordOutcome(answer);
      // Unanswered, or no answer in time: the card may have been charged; it stays `created` and is reversed.
      return this.rollBack(
        id,
        answer?.data.error ?? {
          errorCode: 'service_network_error',
          rawErrorMessage: 'the gift cards service did not answer in time',
        },
      );
    }
    await this.store.record(id, { type: 'CompleteGiftCardPayment', data: { outcome: 'succeeded' } });
    const after = await this.store.state(id);
    if (
      after.status !== 'absent' &&
      after.intent === 'capture' &&
      hasPaymentMethod(after) &&
      after.status === 'authorization_succeeded'
    )
      await this.capturePaymentMethod(after);
  }

  /**
   * Undoes the payment: reverses every redemption not known to have failed (by reference: one the provider never
   * made reverses nothing), voids or cancels the payment method, then records the failure. Throws when the provider
   * could not take a step; the process stays open and recovery tries again.
   */
  private async rollBack(id: string, cause: GiftCardError): Promise<void> {
    const t = await this.store.state(id);
    if (t.status === 'absent' || !isGiftCardPaymentOpen(t)) return;
    for (const redemption of t.giftCards?.redemptions ?? []) {
      if (redemption.status !== 'created' && redemption.status !== 'succeeded') continue;
      if (byGiftCardsService(redemption)) {
        const answer = await this.ask(id, redemption.redemptionId, 'RequestGiftCardReversal');
        if (answer?.type !== giftCardRedemptionEventTypes.reversed)
          throw new RollBackPending(
            `gift card redemption ${redemption.redemptionId} could not be reversed: ${answer?.data.error?.errorCode ?? 'the gift cards service did not answer in time'}`,
          );
        await this.recordOutcome(answer);
        continue;
      }
      // A payment of before the hand-over: reversed from here, by reference (no number or PIN needed).
      const connector = this.connectorOf(t);
      const answer = await this.call(() => connector.reverse({ reference: redemption.redemptionId }));
      if (answer.outcome !== 'succeeded')
        throw new RollBackPending(
          `gift card redemption ${redemption.redemptionId} could not be reversed: ${giftCardError(answer).errorCode}`,
        );
      await this.store.record(id, {
        type: 'RecordGiftCardReversal',
        data: { redemptionId: redemption.redemptionId, reversed: answer.reversed },
      });
    }
    await this.undoPaymentMethod(t);
    await this.store.record(id, {
      type: 'CompleteGiftCardPayment',
      data: { outcome: 'failed', errorCode: cause.errorCode },
    });
    await this.context.catchUp();
  }

  /** An authorized payment method is voided; one still waiting is canceled (by the provider first when it knows it). */
  private async undoPaymentMethod(t: Transaction): Promise<void> {
    if (!hasPaymentMethod(t)) return;
    const id = t.id;
    const current = await this.store.state(id);
    if (current.status === 'absent') return;
    if (current.status === 'authorization_succeeded' || current.status === 'authorization_void_pending') {
      const connector = this.dependencies.connectors.connectorFor(this.store.connectionOf(current));
      const voidId = current.pendingVoidId ?? this.context.newId();
      if (current.status === 'authorization_succeeded')
        await this.store.record(id, { type: 'VoidTransaction', data: { voidId } });
      const answer = await this.store.call(() =>
        connector.void({ reference: id, providerTransactionId: current.paymentServiceTransactionId ?? '' }),
      );
      const outcome = toOutcome(answer);
      if (outcome) await this.store.record(id, { type: 'RecordVoidResult', data: { voidId, ...outcome } });
      if (outcome?.outcome !== 'succeeded')
        throw new RollBackPending(`the authorization of transaction ${id} could not be voided`);
      return;
    }
    if (current.status === 'processing' || current.status === 'buyer_approval_pending') {
      const connector = this.dependencies.connectors.connectorFor(this.store.connectionOf(current));
      // An answer lost in the crash: the provider may hold an authorization we never recorded. Found: void it.
      const found = await this.store.call(() =>
        connector.sync({
          reference: id,
          ...(current.paymentServiceTransactionId
            ? { providerTransactionId: current.paymentServiceTransactionId }
            : {}),
        }),
      );
      if (found.outcome === 'found' && found.transaction.status === 'authorized') {
        const snapshot = found.transaction;
        await this.store.record(id, {
          type: 'RecordAuthorizationResult',
          data: {
            source: 'notification',
            result: {
              outcome: 'succeeded',
              authorizedAmount: snapshot.authorizedAmount,
              paymentServiceTransactionId: snapshot.providerTransactionId,
            },
          },
        });
        return this.undoPaymentMethod(t);
      }
      if (current.paymentServiceTransactionId) {
        const answer = await this.store.call(() =>
          connector.cancel({ reference: id, providerTransactionId: current.paymentServiceTransactionId ?? '' }),
        );
        if (answer.outcome !== 'succeeded')
          throw new RollBackPending(`the pending authorization of transaction ${id} could not be canceled`);
      }
      await this.store.record(id, { type: 'CancelTransaction', data: {} });
    }
  }

  /** Everything redeemed: the payment method's authorization is captured in full (`intent: capture`). */
  private async capturePaymentMethod(t: Transaction): Promise<void> {
    const connector = this.dependencies.connectors.connectorFor(this.store.connectionOf(t));
    const captureId = this.context.newId();
    await this.store.record(t.id, {
      type: 'CaptureTransaction',
      data: { captureId, final: true, settings: { multipleCapturesEnabled: false } },
    });
    const answer = await this.store.call(() =>
      connector.capture({
        reference: t.id,
        providerTransactionId: t.paymentServiceTransactionId ?? '',
        amount: t.authorizedAmount,
        currency: t.currency,
        final: true,
      }),
    );
    const outcome = toOutcome(answer, (answer as { providerCaptureId?: string }).providerCaptureId);
    if (outcome) await this.store.record(t.id, { type: 'RecordCaptureResult', data: { captureId, ...outcome } });
  }

  /**
   * Rolls back the gift card processes left open longer than the recovery window (a crashed request, a provider that
   * could not take a reversal): runs on the service's timer. A payment method still with its buyer is left to the hold
   * window; one the provider has not decided is waited for.
   */
  async recover(): Promise<number> {
    const before = new Date(this.context.now().getTime() - this.dependencies.settings.recoveryAfterMs).toISOString();
    let recovered = 0;
    for (const id of this.store.readModel.openGiftCardProcesses(before, 100)) {
      if (this.running.has(id)) continue;
      const t = await this.store.state(id);
      if (t.status === 'absent' || !isGiftCardPaymentOpen(t)) continue;
      if (t.status === 'buyer_approval_pending' && t.createRequestRunning) continue;
      // The payment method failed meanwhile (an abandoned challenge, a decline by notification): nothing was
      // redeemed; the process ends with the payment method's own error code.
      if (hasPaymentMethod(t) && (t.status === 'authorization_declined' || t.status === 'authorization_failed')) {
        await this.settle(id);
        recovered += 1;
        continue;
      }
      this.running.add(id);
      try {
        await this.rollBack(id, {
          errorCode: interruptedErrorCode,
          rawErrorMessage: 'the payment was interrupted before it completed; every gift card charge was reversed',
        });
        recovered += 1;
      } catch (error) {
        // One payment's provider down does not hold back the others: it is tried again on the next round.
        if (!(error instanceof RollBackPending)) throw error;
        this.onRollBackPending(error);
      } finally {
        this.running.delete(id);
      }
    }
    return recovered;
  }

  /**
   * Asks the gift cards service (an event on the transaction stream) and waits for its answer; null when none came in
   * time (or nothing follows its answers).
   */
  private async ask(
    id: string,
    redemptionId: string,
    type: 'RequestGiftCardRedemption' | 'RequestGiftCardReversal',
  ): Promise<GiftCardOutcome | null> {
    if (!this.outcomes.following) return null;
    const waiting = this.outcomes.wait(
      redemptionId,
      type === 'RequestGiftCardRedemption' ? redemptionAnswers : reversalAnswers,
      this.dependencies.settings.outcomeTimeoutMs ?? GIFT_CARD_OUTCOME_TIMEOUT_MS,
    );
    try {
      await this.store.record(id, { type, data: { redemptionId } });
    } catch (error) {
      waiting.cancel();
      throw error;
    }
    return waiting.promise;
  }

  /**
   * One answer of the gift cards service on its transaction's stream (from `outcomes`, and from the request that
   * waited for it: the same answer twice records once). A success for a redemption no longer undecided — the payment
   * was rolled back meanwhile — is reversed, never recorded. No answer (unanswered, a failed reversal) records nothing.
   */
  async recordOutcome(outcome: GiftCardOutcome): Promise<void> {
    const { transactionId: id, redemptionId } = outcome.data;
    const t = await this.store.state(id);
    if (t.status === 'absent' || !t.giftCards) return;
    const redemption = t.giftCards.redemptions.find((r) => r.redemptionId === redemptionId);
    if (!redemption) return;
    const open = isGiftCardPaymentOpen(t);
    try {
      switch (outcome.type) {
        case giftCardRedemptionEventTypes.redeemed: {
          if (redemption.status === 'succeeded' || redemption.status === 'reversed') return;
          if (redemption.status !== 'created' || !open) {
            await this.store.record(id, { type: 'RequestGiftCardReversal', data: { redemptionId } });
            return;
          }
          const merchantInitiated = Boolean(
            (this.store.readModel.find(id)?.details as { merchantInitiated?: boolean } | undefined)?.merchantInitiated,
          );
          await this.store.record(id, {
            type: 'RecordGiftCardRedemption',
            data: {
              redemptionId,
              merchantInitiated,
              result: { outcome: 'succeeded', providerRedemptionId: outcome.data.providerRedemptionId ?? '' },
            },
          });
          return;
        }
        case giftCardRedemptionEventTypes.refused:
          if (redemption.status !== 'created' || !open) return;
          await this.store.record(id, {
            type: 'RecordGiftCardRedemption',
            data: {
              redemptionId,
              merchantInitiated: false,
              result: { outcome: 'failed', error: outcome.data.error ?? { errorCode: 'unknown_error' } },
            },
          });
          return;
        case giftCardRedemptionEventTypes.reversed:
          if (redemption.status !== 'created' && redemption.status !== 'succeeded') return;
          await this.store.record(id, {
            type: 'RecordGiftCardReversal',
            data: { redemptionId, reversed: outcome.data.reversed === true },
          });
          return;
        default:
          return;
      }
    } catch (error) {
      // Decided meanwhile by the other recorder of the same answer: nothing left to record.
      if (error instanceof DomainError) return;
      throw error;
    }
  }

  private connectorOf(t: Transaction): GiftCardConnector {
    const serviceId = t.giftCards?.serviceId ?? '';
    const connection = this.dependencies.paymentServices.connection(t.merchantAccountId, serviceId);
    if (!connection)
      throw ApiError.badGateway(new Error(`the gift card service ${serviceId} of transaction ${t.id} was deleted`));
    return this.dependencies.connectors.giftCardConnectorFor(connection);
  }

  /** A provider call; an unreachable provider (or a refused request) is a failure with a standard code. */
  private call<T extends { readonly outcome: string }>(
    request: () => Promise<T>,
  ): Promise<T | (ProviderResponse & { readonly outcome: 'failed' })> {
    return this.store.call(request) as Promise<T | (ProviderResponse & { readonly outcome: 'failed' })>;
  }
}

/** The provider's refusal as the redemption records it. */
function giftCardError(answer: { readonly outcome: string }): GiftCardError {
  const a = answer as {
    errorCode?: string;
    rawErrorCode?: string;
    rawErrorMessage?: string;
    rawResponseDescription?: string;
  };
  return {
    errorCode: a.errorCode === 'service_unavailable' ? 'service_network_error' : (a.errorCode ?? 'unknown_error'),
    ...(a.rawErrorCode ? { rawErrorCode: a.rawErrorCode } : {}),
    ...((a.rawErrorMessage ?? a.rawResponseDescription)
      ? { rawErrorMessage: a.rawErrorMessage ?? a.rawResponseDescription }
      : {}),
  };
}
