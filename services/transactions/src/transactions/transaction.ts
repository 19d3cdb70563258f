/**
 * The transaction aggregate (stream `transaction-<uuid>`): its events, its state and how each event changes it.
 * The rules that choose the events live beside it in `transaction.decide.ts`.
 */
import type { DomainEvent } from '@switchyard/decider';
import type { GiftCardRedemptionRequestedData, GiftCardReversalRequestedData } from '@switchyard/contracts';

/** Amounts are integers in minor units. */
export type Minor = number;

export type TransactionIntent = 'authorize' | 'capture';

/** The nine wire statuses, plus `refunded` once everything captured has been refunded (spec, "States"). */
export type TransactionStatus =
  | 'processing'
  | 'buyer_approval_pending'
  | 'authorization_succeeded'
  | 'authorization_declined'
  | 'authorization_failed'
  | 'capture_pending'
  | 'capture_succeeded'
  | 'authorization_void_pending'
  | 'authorization_voided'
  | 'refunded';

export interface TrackingEntry {
  readonly number: string;
  readonly carrier: string;
  readonly url?: string;
}

/** What a payment service said when it refused something. */
export interface ProviderError {
  readonly errorCode: string;
  readonly rawResponseCode?: string;
  readonly rawResponseDescription?: string;
}

/** A flow rule that matched at creation, and what it did (`GET /transactions/{id}/actions`). */
export interface FlowActionRecord {
  readonly ruleId: string;
  readonly action: 'route-transaction' | 'decline-early' | 'skip-3ds' | 'force-3ds';
  readonly outcome: Readonly<Record<string, unknown>>;
}

/** One gift card of a payment, as planned at creation: what may be shown of it, never its number or PIN. */
export interface GiftCardRedemptionPlan {
  /** Our id of the redemption, and the reference the provider knows it by (redeem, reverse and refund are idempotent by it). */
  readonly redemptionId: string;
  /** Set when a stored gift card (`POST /gift-cards`) is used. */
  readonly giftCardId?: string;
  /**
   * Set for a gift card given by number and PIN: the one-off card the gateway handed them over as to the gift cards
   * service (`gift-cards.hand-over`), which alone reads them. Neither this nor `giftCardId`: a payment of before the
   * hand-over, whose number and PIN were held in this service's memory while its request ran.
   */
  readonly oneOffGiftCardId?: string;
  readonly bin: string;
  readonly subBin: string;
  readonly last4: string;
  readonly amount: Minor;
}

export interface GiftCardPlan {
  /** The gift card service connection (a payment service of method `gift-card`). */
  readonly serviceId: string;
  readonly redemptions: readonly GiftCardRedemptionPlan[];
}

export interface GiftCardError {
  readonly errorCode: string;
  readonly rawErrorCode?: string;
  readonly rawErrorMessage?: string;
}

/** The vault card a transaction was created with, and what it is kept for. */
export interface VaultCardUse {
  readonly id: string;
  /**
   * `one_off`: given for this payment only, shredded once its create request completed; `stored`: a stored payment
   * method (or one this payment stores); `checkout_session`: its checkout session's.
   */
  readonly use: 'one_off' | 'stored' | 'checkout_session';
}

/** Schema version 2 (`vaultCard`); version 1 is upcast by `transaction-upcasters.ts`. */
export interface TransactionCreatedData {
  readonly transactionId: string;
  readonly merchantAccountId: string;
  /** The connection tried first. */
  readonly paymentServiceId: string;
  /** Every connection to try, in order (failover); absent on older events: just `paymentServiceId`. */
  readonly route?: readonly string[];
  readonly flowActions?: readonly FlowActionRecord[];
  readonly intent: TransactionIntent;
  readonly amount: Minor;
  readonly currency: string;
  readonly isAmountEstimated: boolean;
  readonly externalIdentifier?: string;
  /** Gift cards redeemed after the payment method is authorized (or alone); the payment method pays `amount` minus theirs. */
  readonly giftCards?: GiftCardPlan;
  /**
   * What the transaction record shows beyond the money (payment method summary — never the card number —, buyer,
   * cart items, metadata, flags). Opaque to the rules; the read model renders it.
   */
  readonly details?: Readonly<Record<string, unknown>>;
  /** The vault card paying (null: a redirect method, Paze, gift cards alone). Version 2; from `details` for 1. */
  readonly vaultCard: VaultCardUse | null;
  readonly at: string;
}

/** What a capture or refund request carries besides its amount, for the record. */
export interface OperationDetails {
  readonly externalIdentifier?: string;
  readonly cartItems?: readonly unknown[];
}

export interface AuthorizationSucceededData {
  readonly authorizedAmount: Minor;
  /** Set for an `intent: capture` transaction: the authorization is also its one direct capture (id = the transaction id). */
  readonly directCaptureId?: string;
  readonly paymentServiceTransactionId?: string;
  readonly schemeTransactionId?: string;
  readonly avsResponseCode?: string;
  readonly cvvResponseCode?: string;
  readonly rawResponseCode?: string;
  readonly at: string;
}

export type FailureKind = 'declined' | 'failed';

/** The issuer's address and security code checks: reported with an approval, and with a decline too. */
export interface VerificationCodes {
  readonly avsResponseCode?: string;
  readonly cvvResponseCode?: string;
}

type At = { readonly at: string };

/** Why a transaction waits for its buyer. */
export type ApprovalReason = 'three_d_secure' | 'redirect';

export interface BuyerApprovalData {
  readonly approvalUrl?: string;
  readonly reason?: ApprovalReason;
  /** The directory server's authentication waiting for the challenge (reason `three_d_secure`). */
  readonly authenticationId?: string;
  readonly paymentServiceTransactionId?: string;
  /** When the hold window ends and the approval is abandoned if the buyer has not come back. */
  readonly expiresAt?: string;
}

/** The 3-D Secure summary the transaction carries (the reference's TransactionThreeDSecureSummary). */
export interface ThreeDSecureSummary {
  readonly status: 'complete' | 'declined' | 'error' | 'setup_error';
  readonly method: 'frictionless' | 'challenge' | null;
  /** `directory`: run by Switchyard through the scheme's directory server; `external`: `three_d_secure_data` passed in. */
  readonly source: 'directory' | 'external';
  readonly version?: string;
  readonly transactionStatus?: string;
  readonly eci?: string;
  readonly cavv?: string;
  readonly directoryServerTransactionId?: string;
  readonly directoryResponse?: string;
  readonly authenticationId?: string;
  readonly statusReason?: string;
  readonly errorDescription?: string;
}

/** One connection's attempt that failed in a way the next connection may not: the transaction moves on. */
export interface AttemptFailedData {
  readonly paymentServiceId: string;
  readonly nextPaymentServiceId: string;
  readonly kind: FailureKind;
  readonly error: ProviderError;
}

/**
 * The provider's success that came after we had recorded the authorization as failed or declined (a late
 * notification, a sync): the money it holds is reversed at once — voided, or refunded when it was captured too.
 */
export interface LateAuthorizationReceivedData {
  readonly authorizedAmount: Minor;
  readonly paymentServiceTransactionId?: string;
  /** The provider captured it as well (an `intent: capture` payment): it is refunded rather than voided. */
  readonly captured: boolean;
  /** What we had recorded, and what the transaction stays. */
  readonly decidedStatus: 'authorization_failed' | 'authorization_declined';
  readonly rawResponseCode?: string;
}

export interface LateAuthorizationReversedData {
  readonly via: 'void' | 'refund';
  readonly rawResponseCode?: string;
}

export interface LateAuthorization {
  readonly paymentServiceTransactionId: string | null;
  readonly amount: Minor;
  readonly captured: boolean;
  readonly reversed: boolean;
}

export type TransactionEvent =
  | DomainEvent<'TransactionCreated', TransactionCreatedData>
  | DomainEvent<'BuyerApprovalRequired', BuyerApprovalData & At>
  | DomainEvent<'ThreeDSecureCompleted', ThreeDSecureSummary & At>
  | DomainEvent<'AuthorizationAttemptFailed', AttemptFailedData & At>
  /** The buyer never came back within the hold window: the approval is abandoned (`incomplete_buyer_approval`). */
  | DomainEvent<'BuyerApprovalTimedOut', At>
  | DomainEvent<'AuthorizationPending', { readonly paymentServiceTransactionId?: string } & At>
  | DomainEvent<'AuthorizationSucceeded', AuthorizationSucceededData>
  | DomainEvent<'AuthorizationDeclined', ProviderError & VerificationCodes & At>
  | DomainEvent<'AuthorizationFailed', ProviderError & At>
  /** A failure or decline notification that arrived while the create request was still running (spec, Events rule 2). */
  | DomainEvent<'FailureNotificationHeld', { readonly kind: FailureKind; readonly error: ProviderError } & At>
  /** The create request answered, the buyer came back, or the hold window ran out: held failures apply now. */
  | DomainEvent<'CreateRequestCompleted', { readonly reason: 'responded' | 'buyer_returned' | 'hold_expired' } & At>
  | DomainEvent<'TransactionCanceled', At>
  | DomainEvent<
      'CaptureRequested',
      {
        readonly captureId: string;
        readonly amount: Minor;
        readonly final: boolean;
        readonly tracking: readonly TrackingEntry[];
        readonly details?: OperationDetails;
      } & At
    >
  /** The provider took the capture under its own reference and will give its final word later (a notification). */
  | DomainEvent<'CaptureSubmitted', { readonly captureId: string; readonly providerOperationId: string } & At>
  | DomainEvent<
      'CaptureSucceeded',
      { readonly captureId: string; readonly rawResponseCode?: string; readonly providerOperationId?: string } & At
    >
  | DomainEvent<'CaptureDeclined', { readonly captureId: string } & ProviderError & At>
  | DomainEvent<'CaptureFailed', { readonly captureId: string } & ProviderError & At>
  | DomainEvent<'VoidRequested', { readonly voidId: string } & At>
  | DomainEvent<'VoidSucceeded', { readonly voidId: string } & At>
  | DomainEvent<'VoidFailed', { readonly voidId: string; readonly outcome: FailureKind } & ProviderError & At>
  | DomainEvent<
      'RefundRequested',
      {
        readonly refundId: string;
        readonly amount: Minor;
        readonly reason?: string;
        readonly details?: OperationDetails;
        readonly target?: RefundTarget;
      } & At
    >
  /** The provider took the refund under its own reference and will give its final word later (a notification). */
  | DomainEvent<'RefundSubmitted', { readonly refundId: string; readonly providerOperationId: string } & At>
  | DomainEvent<
      'RefundSucceeded',
      {
        readonly refundId: string;
        readonly via: 'payment_service' | 'settlement';
        readonly providerOperationId?: string;
      } & At
    >
  | DomainEvent<'RefundDeclined', { readonly refundId: string } & ProviderError & At>
  | DomainEvent<'RefundFailed', { readonly refundId: string } & ProviderError & At>
  | DomainEvent<
      'AuthorizationIncremented',
      {
        readonly incrementId: string;
        readonly amount: Minor;
        readonly authorizedAmount: Minor;
        readonly responseCode?: string;
      } & At
    >
  /** An increment the payment service did not approve (`failed`) or has not yet (`pending`): recorded, nothing changes. */
  | DomainEvent<
      'AuthorizationIncrementNotApplied',
      {
        readonly incrementId: string;
        readonly amount: Minor;
        readonly outcome: 'failed' | 'pending';
        readonly responseCode?: string;
      } & At
    >
  | DomainEvent<'TransactionSyncRequested', At>
  | DomainEvent<
      'GiftCardRedemptionSucceeded',
      {
        readonly redemptionId: string;
        readonly giftCardId?: string;
        readonly providerRedemptionId: string;
        readonly merchantInitiated: boolean;
      } & At
    >
  | DomainEvent<'GiftCardRedemptionFailed', { readonly redemptionId: string } & GiftCardError & At>
  /**
   * A stored or one-off card's redemption asked of the gift cards service (`GiftCardRedemptionRequestedData` of the contracts:
   * it calls the provider and answers on `gift-cards.events`); changes nothing until the answer is recorded.
   */
  | DomainEvent<'GiftCardRedemptionRequested', GiftCardRedemptionRequestedData & At>
  /** A stored card's redemption to reverse, asked of the gift cards service the same way. */
  | DomainEvent<'GiftCardReversalRequested', GiftCardReversalRequestedData & At>
  /** Redemptions never asked of the provider: an earlier instrument failed. */
  | DomainEvent<'GiftCardRedemptionsSkipped', { readonly redemptionIds: readonly string[] } & At>
  /** A redemption put back on its card because another instrument of the payment failed (or the process was recovered). */
  | DomainEvent<'GiftCardRedemptionReversed', { readonly redemptionId: string } & At>
  /** The split payment's process is over: every gift card charged (`succeeded`), or everything undone (`failed`). */
  | DomainEvent<
      'GiftCardPaymentCompleted',
      {
        readonly outcome: 'succeeded' | 'failed';
        readonly errorCode?: string /** No payment method: this event settles the transaction. */;
        readonly giftCardsOnly?: boolean;
      } & At
    >
  | DomainEvent<'LateAuthorizationReceived', LateAuthorizationReceivedData & At>
  /** The late authorization was reversed at the provider: the provider holds nothing for this payment any more. */
  | DomainEvent<'LateAuthorizationReversed', LateAuthorizationReversedData & At>
  /** `PUT /transactions/{id}`: only the fields present change; null clears. */
  | DomainEvent<
      'TransactionUpdated',
      { readonly externalIdentifier?: string | null; readonly metadata?: Readonly<Record<string, string>> | null } & At
    >;

export type CaptureStatus = 'pending' | 'succeeded' | 'declined' | 'failed';
export type RefundStatus = 'processing' | 'succeeded' | 'declined' | 'failed';

export interface Capture {
  readonly id: string;
  readonly amount: Minor;
  readonly final: boolean;
  /** A direct capture is the one an `intent: capture` transaction makes when it is authorized. */
  readonly direct: boolean;
  readonly tracking: readonly TrackingEntry[];
  readonly status: CaptureStatus;
  /** The provider's reference of a capture it answered `pending`: its notification names the capture by it. */
  readonly providerOperationId?: string;
}

/** What a refund gives back: the payment method (absent) or one gift card redemption. */
export interface RefundTarget {
  readonly type: 'gift-card-redemption';
  readonly id: string;
}

export interface Refund {
  readonly id: string;
  readonly amount: Minor;
  readonly status: RefundStatus;
  readonly target?: RefundTarget;
  /** The provider's reference of a refund it answered `pending`: its notification names the refund by it. */
  readonly providerOperationId?: string;
}

export type GiftCardRedemptionStatus = 'created' | 'succeeded' | 'failed' | 'skipped' | 'reversed';

export interface GiftCardRedemption extends GiftCardRedemptionPlan {
  readonly status: GiftCardRedemptionStatus;
  readonly providerRedemptionId: string | null;
  readonly error: GiftCardError | null;
}

export interface GiftCardPart {
  readonly serviceId: string;
  readonly redemptions: readonly GiftCardRedemption[];
  /** null while the process runs. */
  readonly outcome: 'succeeded' | 'failed' | null;
}

export interface HeldFailure {
  readonly kind: FailureKind;
  readonly error: ProviderError;
}

export interface Transaction {
  readonly status: TransactionStatus;
  readonly id: string;
  readonly merchantAccountId: string;
  readonly paymentServiceId: string;
  readonly intent: TransactionIntent;
  readonly amount: Minor;
  readonly currency: string;
  readonly isAmountEstimated: boolean;
  readonly authorizedAmount: Minor;
  readonly createRequestRunning: boolean;
  readonly notificationHeld: readonly HeldFailure[];
  readonly captures: readonly Capture[];
  readonly refunds: readonly Refund[];
  readonly pendingVoidId: string | null;
  readonly errorCode: string | null;
  readonly avsResponseCode: string | null;
  readonly cvvResponseCode: string | null;
  readonly paymentServiceTransactionId: string | null;
  /** Every connection to try, in order; `paymentServiceId` is the current one (failover moves it along). */
  readonly route: readonly string[];
  readonly approvalReason: ApprovalReason | null;
  readonly pendingAuthenticationId: string | null;
  readonly threeDSecure: ThreeDSecureSummary | null;
  readonly giftCards: GiftCardPart | null;
  /** A success that came after the authorization was decided failed; absent when none did. */
  readonly lateAuthorization?: LateAuthorization;
}

export type TransactionState = { readonly status: 'absent' } | Transaction;

export const transactionStream = (id: string): string => `transaction-${id}`;

/** The connection failover moves to after the current one; null when none is left. */
export const nextConnection = (t: Transaction): string | null =>
  t.route[t.route.indexOf(t.paymentServiceId) + 1] ?? null;

export const initialTransactionState = (): TransactionState => ({ status: 'absent' });

// ---- derived amounts: the decider's limits and evolve's status read the same sums ------------------------
const sum = <T extends { amount: Minor }>(items: readonly T[]): Minor =>
  items.reduce((total, item) => total + item.amount, 0);

/** Captures that hold part of the authorization: pending ones count (spec, Limits, "Capture total"). */
export const claimedCaptures = (t: Transaction): readonly Capture[] =>
  t.captures.filter((c) => c.status === 'pending' || c.status === 'succeeded');
export const capturedAmount = (t: Transaction): Minor => sum(t.captures.filter((c) => c.status === 'succeeded'));
export const claimedCaptureAmount = (t: Transaction): Minor => sum(claimedCaptures(t));
/** Refunds of the payment method that hold part of what was captured: processing ones count. */
export const claimedRefundAmount = (t: Transaction): Minor =>
  sum(t.refunds.filter((r) => !r.target && (r.status === 'processing' || r.status === 'succeeded')));
/** What was refunded to the payment method (`refunded_amount`; gift card refunds show on their redemption). */
export const refundedAmount = (t: Transaction): Minor =>
  sum(t.refunds.filter((r) => !r.target && r.status === 'succeeded'));

// ---- gift cards: the payment method pays what they do not --------------------------------------------------
export const giftCardTotal = (t: { readonly giftCards: GiftCardPart | null }): Minor =>
  sum(t.giftCards?.redemptions ?? []);
/** What the payment method is asked for; 0 for a gift-card-only payment. */
export const paymentMethodAmount = (t: Transaction): Minor => t.amount - giftCardTotal(t);
export const hasPaymentMethod = (t: Transaction): boolean => paymentMethodAmount(t) > 0;
/** Refunds of one redemption that hold part of it: processing ones count. */
export const claimedRedemptionRefunds = (t: Transaction, redemptionId: string): Minor =>
  sum(
    t.refunds.filter((r) => r.target?.id === redemptionId && (r.status === 'processing' || r.status === 'succeeded')),
  );
export const redemptionRefundedAmount = (t: Transaction, redemptionId: string): Minor =>
  sum(t.refunds.filter((r) => r.target?.id === redemptionId && r.status === 'succeeded'));
/** The gift card process has work left: planned redemptions not yet decided, or the outcome not yet recorded. */
/** Whether the gift cards service redeems and reverses this card (a stored or a one-off card), not this service. */
export const byGiftCardsService = (redemption: GiftCardRedemptionPlan): boolean =>
  redemption.giftCardId !== undefined || redemption.oneOffGiftCardId !== undefined;

export const isGiftCardPaymentOpen = (t: Transaction): boolean => t.giftCards !== null && t.giftCards.outcome === null;
/** A final capture closes the authorization while it is pending or once it succeeded; a refused one reopens it. */
export const isAuthorizationClosed = (t: Transaction): boolean => claimedCaptures(t).some((c) => c.final);

/** After authorization, the status follows the money: pending captures, then what was captured and refunded. */
function statusFromMoney(t: Transaction): TransactionStatus {
  if (!hasPaymentMethod(t)) {
    // Gift cards only: redeemed is captured; `refunded` once every redemption is refunded in full.
    const redeemed = (t.giftCards?.redemptions ?? []).filter((r) => r.status === 'succeeded');
    return redeemed.length > 0 && redeemed.every((r) => redemptionRefundedAmount(t, r.redemptionId) === r.amount)
      ? 'refunded'
      : t.status;
  }
  if (t.captures.some((c) => c.status === 'pending')) return 'capture_pending';
  const captured = capturedAmount(t);
  if (captured === 0) return 'authorization_succeeded';
  return refundedAmount(t) === captured ? 'refunded' : 'capture_succeeded';
}

const withCapture = (t: Transaction, captureId: string, status: CaptureStatus): Transaction => {
  const next = { ...t, captures: t.captures.map((c) => (c.id === captureId ? { ...c, status } : c)) };
  return { ...next, status: statusFromMoney(next) };
};

const withRefund = (t: Transaction, refundId: string, status: RefundStatus): Transaction => {
  const next = { ...t, refunds: t.refunds.map((r) => (r.id === refundId ? { ...r, status } : r)) };
  return { ...next, status: statusFromMoney(next) };
};

const withRedemption = (t: Transaction, ids: readonly string[], change: Partial<GiftCardRedemption>): Transaction =>
  t.giftCards
    ? {
        ...t,
        giftCards: {
          ...t.giftCards,
          redemptions: t.giftCards.redemptions.map((r) => (ids.includes(r.redemptionId) ? { ...r, ...change } : r)),
        },
      }
    : t;

export function evolveTransaction(state: TransactionState, event: TransactionEvent): TransactionState {
  if (event.type === 'TransactionCreated') {
    const d = event.data;
    return {
      status: 'processing',
      id: d.transactionId,
      merchantAccountId: d.merchantAccountId,
      paymentServiceId: d.paymentServiceId,
      intent: d.intent,
      amount: d.amount,
      currency: d.currency,
      isAmountEstimated: d.isAmountEstimated,
      authorizedAmount: 0,
      createRequestRunning: true,
      notificationHeld: [],
      captures: [],
      refunds: [],
      pendingVoidId: null,
      errorCode: null,
      avsResponseCode: null,
      cvvResponseCode: null,
      paymentServiceTransactionId: null,
      route: d.route ?? [d.paymentServiceId],
      approvalReason: null,
      pendingAuthenticationId: null,
      threeDSecure: null,
      giftCards: d.giftCards
        ? {
            serviceId: d.giftCards.serviceId,
            redemptions: d.giftCards.redemptions.map((r) => ({
              ...r,
              status: 'created',
              providerRedemptionId: null,
              error: null,
            })),
            outcome: null,
          }
        : null,
    };
  }
  if (state.status === 'absent') return state;
  const t = state;
  switch (event.type) {
    case 'BuyerApprovalRequired': {
      const d = event.data;
      return {
        ...t,
        status: 'buyer_approval_pending',
        approvalReason: d.reason ?? 'redirect',
        pendingAuthenticationId: d.authenticationId ?? null,
        paymentServiceTransactionId: d.paymentServiceTransactionId ?? t.paymentServiceTransactionId,
      };
    }
    case 'ThreeDSecureCompleted': {
      const { at: _at, ...summary } = event.data;
      // A finished challenge hands the transaction back to processing: the authorization comes next.
      const resumed = t.approvalReason === 'three_d_secure' && t.status === 'buyer_approval_pending';
      return {
        ...t,
        threeDSecure: summary,
        pendingAuthenticationId: null,
        ...(resumed ? { status: 'processing' as const, approvalReason: null } : {}),
      };
    }
    case 'AuthorizationAttemptFailed': {
      // What the failed attempt's provider said (held or not) is settled by the failover itself.
      return {
        ...t,
        paymentServiceId: event.data.nextPaymentServiceId,
        paymentServiceTransactionId: null,
        notificationHeld: [],
      };
    }
    case 'BuyerApprovalTimedOut':
      return { ...t, status: 'authorization_failed', errorCode: 'incomplete_buyer_approval' };
    case 'AuthorizationPending':
      return {
        ...t,
        paymentServiceTransactionId: event.data.paymentServiceTransactionId ?? t.paymentServiceTransactionId,
      };
    case 'TransactionSyncRequested':
    case 'TransactionUpdated':
    case 'AuthorizationIncrementNotApplied':
      return t;
    case 'AuthorizationSucceeded': {
      const d = event.data;
      const authorized: Transaction = {
        ...t,
        status: 'authorization_succeeded',
        authorizedAmount: d.authorizedAmount,
        avsResponseCode: d.avsResponseCode ?? null,
        cvvResponseCode: d.cvvResponseCode ?? null,
        paymentServiceTransactionId: d.paymentServiceTransactionId ?? null,
      };
      // With gift cards the payment method is captured only once they are all redeemed.
      if (t.intent === 'authorize' || t.giftCards) return authorized;
      // An `intent: capture` transaction is captured in the same call: one final, direct capture of it all.
      const direct: Capture = {
        id: t.id,
        amount: d.authorizedAmount,
        final: true,
        direct: true,
        tracking: [],
        status: 'succeeded',
      };
      return { ...authorized, status: 'capture_succeeded', captures: [direct] };
    }
    case 'AuthorizationDeclined':
      return {
        ...t,
        status: 'authorization_declined',
        errorCode: event.data.errorCode,
        avsResponseCode: event.data.avsResponseCode ?? t.avsResponseCode,
        cvvResponseCode: event.data.cvvResponseCode ?? t.cvvResponseCode,
      };
    case 'AuthorizationFailed':
      return { ...t, status: 'authorization_failed', errorCode: event.data.errorCode };
    case 'FailureNotificationHeld':
      return { ...t, notificationHeld: [...t.notificationHeld, { kind: event.data.kind, error: event.data.error }] };
    case 'CreateRequestCompleted':
      return { ...t, createRequestRunning: false, notificationHeld: [] };
    case 'TransactionCanceled':
      return { ...t, status: 'authorization_failed', errorCode: 'canceled' };
    case 'CaptureRequested': {
      const d = event.data;
      const next = {
        ...t,
        captures: [
          ...t.captures,
          {
            id: d.captureId,
            amount: d.amount,
            final: d.final,
            direct: false,
            tracking: d.tracking,
            status: 'pending' as const,
          },
        ],
      };
      return { ...next, status: statusFromMoney(next) };
    }
    case 'CaptureSubmitted': {
      const { captureId, providerOperationId } = event.data;
      return { ...t, captures: t.captures.map((c) => (c.id === captureId ? { ...c, providerOperationId } : c)) };
    }
    case 'CaptureSucceeded':
      return withCapture(t, event.data.captureId, 'succeeded');
    case 'CaptureDeclined':
      return withCapture(t, event.data.captureId, 'declined');
    case 'CaptureFailed':
      return withCapture(t, event.data.captureId, 'failed');
    case 'VoidRequested':
      return { ...t, status: 'authorization_void_pending', pendingVoidId: event.data.voidId };
    case 'VoidSucceeded':
      return { ...t, status: 'authorization_voided', pendingVoidId: null };
    case 'VoidFailed':
      return { ...t, status: 'authorization_succeeded', pendingVoidId: null };
    case 'RefundRequested': {
      const d = event.data;
      return {
        ...t,
        refunds: [
          ...t.refunds,
          { id: d.refundId, amount: d.amount, status: 'processing', ...(d.target ? { target: d.target } : {}) },
        ],
      };
    }
    case 'GiftCardRedemptionSucceeded':
      return withRedemption(t, [event.data.redemptionId], {
        status: 'succeeded',
        providerRedemptionId: event.data.providerRedemptionId,
      });
    case 'GiftCardRedemptionFailed': {
      const { redemptionId, at: _at, ...error } = event.data;
      return withRedemption(t, [redemptionId], { status: 'failed', error });
    }
    case 'GiftCardRedemptionRequested':
    case 'GiftCardReversalRequested':
      return t;
    case 'GiftCardRedemptionsSkipped':
      return withRedemption(t, event.data.redemptionIds, { status: 'skipped' });
    case 'GiftCardRedemptionReversed':
      return withRedemption(t, [event.data.redemptionId], { status: 'reversed' });
    case 'GiftCardPaymentCompleted': {
      if (!t.giftCards) return t;
      const completed: Transaction = { ...t, giftCards: { ...t.giftCards, outcome: event.data.outcome } };
      if (event.data.outcome === 'failed') {
        // A gift-card-only payment failed; with a payment method its own events (void, cancel) set the status.
        return {
          ...completed,
          errorCode: event.data.errorCode ?? completed.errorCode,
          ...(hasPaymentMethod(t) ? {} : { status: 'authorization_failed' as const }),
        };
      }
      return hasPaymentMethod(t) ? completed : { ...completed, status: 'capture_succeeded' };
    }
    case 'RefundSubmitted': {
      const { refundId, providerOperationId } = event.data;
      return { ...t, refunds: t.refunds.map((r) => (r.id === refundId ? { ...r, providerOperationId } : r)) };
    }
    case 'RefundSucceeded':
      return withRefund(t, event.data.refundId, 'succeeded');
    case 'RefundDeclined':
      return withRefund(t, event.data.refundId, 'declined');
    case 'RefundFailed':
      return withRefund(t, event.data.refundId, 'failed');
    case 'AuthorizationIncremented':
      return { ...t, authorizedAmount: event.data.authorizedAmount };
    case 'LateAuthorizationReceived': {
      const d = event.data;
      const late = { paymentServiceTransactionId: d.paymentServiceTransactionId ?? null, amount: d.authorizedAmount };
      return { ...t, lateAuthorization: { ...late, captured: d.captured, reversed: false } };
    }
    case 'LateAuthorizationReversed':
      return t.lateAuthorization ? { ...t, lateAuthorization: { ...t.lateAuthorization, reversed: true } } : t;
  }
}
