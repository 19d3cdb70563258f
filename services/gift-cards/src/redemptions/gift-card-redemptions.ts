/**
 * Split tender's gift card side over events (issue 19, item 3): the transactions service's process manager asks for a
 * redemption or a reversal with an event on the transaction stream (`GiftCardRedemptionRequested`,
 * `GiftCardReversalRequested`, relayed on `transactions.events`); this service calls the provider itself — a stored
 * card's number and PIN are read from its vault for the call and go nowhere else — and answers on the redemption's own
 * stream `gift-card-redemption-<redemption id>` (relayed on `gift-cards.events`).
 *
 * Once per redemption id, whatever the bus redelivers:
 * - a request is claimed (`GiftCardRedemptionStarted`, appended only to a stream that does not exist) before the
 *   provider is called, so a second consumer of the same request does not call it; a claim left without an answer (a
 *   crash during the call) is called again on redelivery: the provider's redeem is idempotent by reference;
 * - an answered or reversed redemption is never asked of the provider again;
 * - a reversal reverses by reference (one the provider never made reverses nothing, and the provider refuses it ever
 *   after), once: a reversed redemption is not reversed again; a reversal the provider could not take is recorded
 *   (`GiftCardRedemptionUndoFailed`) and tried again when asked again;
 * - a redemption request arriving after its reversal (a late request after a roll-back) is never redeemed.
 * Requests of one transaction share its stream id as the bus key, so they are handled in order by one consumer.
 * Installations sharing a broker share its topics: a request for a card never stored here, or a reversal for a gift
 * card service unknown here and a redemption never asked here, is another installation's and is left alone.
 */
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  type GiftCardConnector,
  type GiftCardCredentials,
} from '@switchyard/connectors';
import {
  giftCardRedemptionEventTypes as outcomes,
  giftCardRedemptionRequestTypes,
  giftCardRedemptionStream,
  type GiftCardRedemptionRequestedData,
  type GiftCardReversalRequestedData,
} from '@switchyard/contracts';
import { appendEvents } from '@switchyard/decider';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '@switchyard/eventstore';
import { giftCardStream } from '../gift-cards/gift-card';
import type { GiftCardServiceDirectory } from '../gift-cards/gift-cards.slice';

/** Why a redemption was refused or is unknown, as the transaction records it (`GiftCardError` of the transactions service). */
export interface RedemptionError {
  readonly errorCode: string;
  readonly rawErrorCode?: string;
  readonly rawErrorMessage?: string;
}

/** Where a redemption stands, from its stream. */
export type RedemptionState =
  | { readonly status: 'absent' }
  /** Claimed; the provider's answer is not recorded (the call is under way, or its process crashed). */
  | { readonly status: 'started'; readonly revision: number }
  | { readonly status: 'redeemed' | 'refused' | 'unanswered'; readonly revision: number }
  | { readonly status: 'reversed'; readonly revision: number };

export interface GiftCardRedemptionsDependencies {
  /** The gift cards service's store: the redemption streams. */
  readonly store: EventStore;
  readonly services: GiftCardServiceDirectory;
  /**
   * A stored or handed-over card's number and PIN (the vault): null when unknown, deleted, erased or another merchant
   * account's.
   */
  readonly credentialsFor: (merchantAccountId: string, giftCardId: string) => GiftCardCredentials | null;
  /**
   * The one-off cards of requests' numbers and PINs (`gift-cards.hand-over`): whether one is kept here, and its
   * erasure once its redemption is answered (no-op for a stored card).
   */
  readonly handedOver: {
    holds(merchantAccountId: string, giftCardId: string): boolean;
    erase(merchantAccountId: string, giftCardId: string): void;
  };
  readonly now: () => Date;
}

export class GiftCardRedemptions {
  constructor(private readonly deps: GiftCardRedemptionsDependencies) {}

  /** A transaction event: a request is acted on, anything else ignored. */
  async handle(event: Pick<RecordedEvent, 'type' | 'data'>): Promise<void> {
    if (event.type === giftCardRedemptionRequestTypes.redeem)
      return this.redeem(event.data as GiftCardRedemptionRequestedData);
    if (event.type === giftCardRedemptionRequestTypes.reverse)
      return this.reverse(event.data as GiftCardReversalRequestedData);
  }

  async state(redemptionId: string): Promise<RedemptionState> {
    const events = await this.deps.store.readStream(giftCardRedemptionStream(redemptionId));
    let state: RedemptionState = { status: 'absent' };
    for (const event of events) {
      const revision = event.revision;
      switch (event.type) {
        case outcomes.started:
          state = { status: 'started', revision };
          break;
        case outcomes.redeemed:
          state = { status: 'redeemed', revision };
          break;
        case outcomes.refused:
          state = { status: 'refused', revision };
          break;
        case outcomes.unanswered:
          state = { status: 'unanswered', revision };
          break;
        case outcomes.reversed:
          state = { status: 'reversed', revision };
          break;
        default:
          // A failed reversal changes nothing of the redemption: only its revision.
          state = { ...state, revision } as RedemptionState;
      }
    }
    return state;
  }

  /** Redeems once: see the module's comment. */
  async redeem(request: GiftCardRedemptionRequestedData): Promise<void> {
    let state = await this.state(request.redemptionId);
    if (state.status === 'absent') {
      if (
        !this.deps.handedOver.holds(request.merchantAccountId, request.giftCardId) &&
        !(await this.storedHere(request.merchantAccountId, request.giftCardId))
      )
        return;
      const claimed = await this.append(request, 'no_stream', outcomes.started, {
        giftCardId: request.giftCardId,
        giftCardServiceId: request.giftCardServiceId,
        amount: request.amount,
        currency: request.currency,
      });
      if (!claimed) return;
      state = { status: 'started', revision: 0 };
    }
    if (state.status === 'started') await this.answer(request, state.revision);
    // Answered (now or before a crash): a one-off card is not needed again (a reversal goes by reference).
    this.deps.handedOver.erase(request.merchantAccountId, request.giftCardId);
  }

  /** Calls the provider for a claimed redemption (at `revision`) and records its answer. */
  private async answer(request: GiftCardRedemptionRequestedData, revision: number): Promise<void> {
    const refuse = (error: RedemptionError) => this.append(request, revision, outcomes.refused, { error });
    const card = this.deps.credentialsFor(request.merchantAccountId, request.giftCardId);
    if (!card)
      return void (await refuse({
        errorCode: 'invalid_gift_card',
        rawErrorMessage: 'the gift card does not exist (deleted or erased, or another merchant account’s)',
      }));
    const connector = await this.connector(request);
    if (!connector)
      return void (await refuse({
        errorCode: 'service_network_error',
        rawErrorMessage: `the gift card service ${request.giftCardServiceId} was deleted`,
      }));

    const answer = await unanswered(() =>
      connector.redeem({
        reference: request.redemptionId,
        card,
        amount: request.amount,
        currency: request.currency,
      }),
    );
    if ('unanswered' in answer) {
      await this.append(request, revision, outcomes.unanswered, { error: answer.unanswered });
      return;
    }
    if (answer.outcome === 'succeeded') {
      await this.append(request, revision, outcomes.redeemed, {
        amount: request.amount,
        currency: request.currency,
        providerRedemptionId: answer.providerRedemptionId,
      });
      return;
    }
    await refuse(errorOf(answer));
  }

  /** Reverses once: see the module's comment. */
  async reverse(request: GiftCardReversalRequestedData): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const state = await this.state(request.redemptionId);
      if (state.status === 'reversed') return;
      const expected = state.status === 'absent' ? 'no_stream' : state.revision;
      const connector = await this.connector(request);
      if (!connector && state.status === 'absent') return;
      const answer = connector
        ? await unanswered(() => connector.reverse({ reference: request.redemptionId }))
        : ({
            unanswered: {
              errorCode: 'service_network_error',
              rawErrorMessage: `the gift card service ${request.giftCardServiceId} was deleted`,
            },
          } as const);
      const appended =
        'unanswered' in answer || answer.outcome !== 'succeeded'
          ? await this.append(request, expected, outcomes.reversalFailed, {
              error: 'unanswered' in answer ? answer.unanswered : errorOf(answer),
            })
          : await this.append(request, expected, outcomes.reversed, { reversed: answer.reversed });
      // The stream moved on under us (a redemption's answer recorded meanwhile): read it again and reverse again
      // (the provider's reversal is idempotent by reference).
      if (appended || attempt >= 5) return;
    }
  }

  /** Whether the card was ever stored here for the merchant account (deleted since or not). */
  private async storedHere(merchantAccountId: string, giftCardId: string): Promise<boolean> {
    const [stored] = await this.deps.store.readStream(giftCardStream(giftCardId), { maxCount: 1 });
    return (stored?.data as { merchantAccountId?: string } | undefined)?.merchantAccountId === merchantAccountId;
  }

  /**
   * The planned gift card service's connector; null once deleted. The transactions process not answering is a 502 or
   * 504 (`ApiError.retriable`): the bus tries the request again until it answers, never parking it.
   */
  private async connector(request: {
    readonly merchantAccountId: string;
    readonly giftCardServiceId: string;
  }): Promise<GiftCardConnector | null> {
    return (
      (await this.deps.services.giftCardService(request.merchantAccountId, request.giftCardServiceId))?.connector ??
      null
    );
  }

  /** Appends one outcome at `expected`; false when the stream moved on (another consumer acted first). */
  private async append(
    request: { readonly redemptionId: string; readonly transactionId: string; readonly merchantAccountId: string },
    expected: number | 'no_stream',
    type: string,
    data: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await appendEvents(
        this.deps.store,
        giftCardRedemptionStream(request.redemptionId),
        [
          {
            type,
            data: {
              redemptionId: request.redemptionId,
              transactionId: request.transactionId,
              merchantAccountId: request.merchantAccountId,
              ...data,
              at: this.deps.now().toISOString(),
            },
          },
        ],
        { expectedRevision: expected },
      );
      return true;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) return false;
      throw error;
    }
  }
}

/**
 * A provider call. No answer — unreachable, timed out, or a request it rejected as malformed — is `unanswered`: the
 * card may have been charged, so only a reversal settles it (today's semantics of the split payment).
 */
async function unanswered<T>(request: () => Promise<T>): Promise<T | { readonly unanswered: RedemptionError }> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof ConnectorUnavailableError)
      return { unanswered: { errorCode: 'service_network_error', rawErrorMessage: error.message } };
    if (error instanceof ConnectorRequestRejectedError)
      return { unanswered: { errorCode: 'invalid_service_request', rawErrorMessage: error.message } };
    throw error;
  }
}

/** The provider's refusal as the transaction records it. */
function errorOf(answer: {
  readonly errorCode?: string;
  readonly rawErrorCode?: string;
  readonly rawErrorMessage?: string;
}): RedemptionError {
  return {
    errorCode: answer.errorCode ?? 'unknown_error',
    ...(answer.rawErrorCode ? { rawErrorCode: answer.rawErrorCode } : {}),
    ...(answer.rawErrorMessage ? { rawErrorMessage: answer.rawErrorMessage } : {}),
  };
}
