/**
 * The transaction aggregate's rules: commands in, events out. Pure: no I/O, no clock (`metadata.now`), no
 * randomness (every new id comes in with its command).
 *
 * DomainError codes (stable; mapped to HTTP errors in one place at the edge):
 *   existence      transaction_not_found, transaction_exists
 *   input          invalid_amount, invalid_currency, too_many_tracking_entries, invalid_tracking_entry
 *   terminal       transaction_declined, transaction_failed, transaction_voided, transaction_refunded
 *   authorization  transaction_not_authorized, authorization_already_decided, cancel_not_allowed,
 *                  increment_not_allowed
 *   captures       tracking_not_allowed, multiple_captures_disabled, authorization_closed, capture_limit_exceeded,
 *                  nothing_to_capture, capture_exists, capture_not_found, capture_not_pending
 *   voids          void_not_allowed, void_pending, void_not_found
 *   refunds        transaction_not_captured, refund_limit_exceeded, nothing_to_refund, refund_exists,
 *                  refund_not_found, refund_not_processing
 *   sync           sync_unavailable
 *   routing        attempt_not_current, no_connection_left
 *   gift cards     invalid_gift_cards, gift_card_redemption_not_found, gift_card_redemption_decided,
 *                  gift_card_payment_open, redemption_not_refundable
 *   late success   late_authorization_not_found
 */
import { DomainError, type Decider } from '@switchyard/decider';
import {
  claimedCaptureAmount,
  claimedCaptures,
  claimedRefundAmount,
  capturedAmount,
  evolveTransaction,
  initialTransactionState,
  isAuthorizationClosed,
  isGiftCardPaymentOpen,
  nextConnection,
  claimedRedemptionRefunds,
  hasPaymentMethod,
  type GiftCardError,
  type RefundTarget,
  type AttemptFailedData,
  type AuthorizationSucceededData,
  type BuyerApprovalData,
  type ThreeDSecureSummary,
  type FailureKind,
  type Minor,
  type OperationDetails,
  type ProviderError,
  type TrackingEntry,
  type Transaction,
  type TransactionCreatedData,
  type TransactionEvent,
  type TransactionState,
  type VerificationCodes,
  byGiftCardsService,
} from './transaction';

export type TransactionErrorCode =
  | 'transaction_not_found'
  | 'transaction_exists'
  | 'invalid_amount'
  | 'invalid_currency'
  | 'too_many_tracking_entries'
  | 'invalid_tracking_entry'
  | 'transaction_declined'
  | 'transaction_failed'
  | 'transaction_voided'
  | 'transaction_refunded'
  | 'transaction_not_authorized'
  | 'authorization_already_decided'
  | 'cancel_not_allowed'
  | 'increment_not_allowed'
  | 'tracking_not_allowed'
  | 'multiple_captures_disabled'
  | 'authorization_closed'
  | 'capture_limit_exceeded'
  | 'nothing_to_capture'
  | 'capture_exists'
  | 'capture_not_found'
  | 'capture_not_pending'
  | 'void_not_allowed'
  | 'void_pending'
  | 'void_not_found'
  | 'transaction_not_captured'
  | 'refund_limit_exceeded'
  | 'nothing_to_refund'
  | 'refund_exists'
  | 'refund_not_found'
  | 'refund_not_processing'
  | 'sync_unavailable'
  | 'attempt_not_current'
  | 'no_connection_left'
  | 'invalid_gift_cards'
  | 'gift_card_redemption_not_found'
  | 'gift_card_redemption_decided'
  | 'gift_card_payment_open'
  | 'redemption_not_refundable'
  | 'late_authorization_not_found';

export class TransactionError extends DomainError<TransactionErrorCode> {}

export const MAX_TRACKING_ENTRIES = 5;

/** Read by the command handler from the merchant account and the connection before it decides a capture. */
export interface CaptureSettings {
  /** Enabled for the merchant account AND supported by the payment service. */
  readonly multipleCapturesEnabled: boolean;
  /** Absent: capturing more than authorized is off. */
  readonly overCapture?: { readonly amount?: Minor; readonly percentage?: number };
}

export type AuthorizationResult =
  /** `captured`: the provider says it captured too (a notification or sync `captured`); default: what was asked. */
  | ({ readonly outcome: 'succeeded'; readonly captured?: boolean } & Omit<AuthorizationSucceededData, 'at'>)
  /** A decline still carries the issuer's AVS and CVV results; a failure (never reached the issuer) has none. */
  | ({ readonly outcome: FailureKind; readonly error: ProviderError } & VerificationCodes)
  | { readonly outcome: 'pending'; readonly paymentServiceTransactionId?: string }
  | ({ readonly outcome: 'buyer_approval_required' } & BuyerApprovalData);

export type ProviderOutcome =
  | { readonly outcome: 'succeeded'; readonly rawResponseCode?: string; readonly providerOperationId?: string }
  | { readonly outcome: FailureKind; readonly error: ProviderError };

interface CommandMetadata {
  readonly now: string;
}
type Command<Type extends string, Data> = {
  readonly type: Type;
  readonly data: Data;
  readonly metadata: CommandMetadata;
};

export type TransactionCommand =
  | Command<'CreateTransaction', Omit<TransactionCreatedData, 'at'>>
  /** `create_request`: the answer to the create call itself; `notification`: a payment service webhook. */
  | Command<
      'RecordAuthorizationResult',
      { readonly source: 'create_request' | 'notification'; readonly result: AuthorizationResult }
    >
  | Command<'CompleteCreateRequest', { readonly reason: 'responded' | 'buyer_returned' | 'hold_expired' }>
  /** The 3-D Secure outcome (directory server, frictionless or after the challenge) or the external data passed in. */
  | Command<'RecordThreeDSecure', ThreeDSecureSummary>
  /** The current connection failed in a way the next one may not: move on (the handler checks the error is retriable). */
  | Command<'FailOver', Omit<AttemptFailedData, 'nextPaymentServiceId'>>
  | Command<'CancelTransaction', Record<string, never>>
  | Command<
      'CaptureTransaction',
      {
        readonly captureId: string;
        readonly amount?: Minor;
        readonly final?: boolean;
        readonly tracking?: readonly TrackingEntry[];
        readonly settings: CaptureSettings;
        readonly details?: OperationDetails;
      }
    >
  | Command<'RecordCaptureResult', { readonly captureId: string } & ProviderOutcome>
  /** The provider answered the capture `pending` under its own reference (Adyen's pspReference of the capture). */
  | Command<'RecordCaptureSubmitted', { readonly captureId: string; readonly providerOperationId: string }>
  | Command<'VoidTransaction', { readonly voidId: string }>
  | Command<'RecordVoidResult', { readonly voidId: string } & ProviderOutcome>
  | Command<
      'RefundTransaction',
      {
        readonly refundId: string;
        readonly amount?: Minor;
        readonly reason?: string;
        readonly details?: OperationDetails;
        readonly target?: RefundTarget;
      }
    >
  /** The gift card provider's answer to one redemption. */
  | Command<
      'RecordGiftCardRedemption',
      {
        readonly redemptionId: string;
        readonly merchantInitiated: boolean;
        readonly result:
          | { readonly outcome: 'succeeded'; readonly providerRedemptionId: string }
          | { readonly outcome: 'failed'; readonly error: GiftCardError };
      }
    >
  /** Ask the gift cards service to redeem a stored card (it calls the provider; the answer comes back as an event). */
  | Command<'RequestGiftCardRedemption', { readonly redemptionId: string }>
  /** Ask the gift cards service to reverse a stored card's redemption by its reference. */
  | Command<'RequestGiftCardReversal', { readonly redemptionId: string }>
  /** Every redemption not yet asked of the provider will not be. */
  | Command<'SkipGiftCardRedemptions', Record<string, never>>
  /** The provider's answer to a reversal by reference: `reversed: false` means it never made that redemption. */
  | Command<'RecordGiftCardReversal', { readonly redemptionId: string; readonly reversed: boolean }>
  | Command<'CompleteGiftCardPayment', { readonly outcome: 'succeeded' | 'failed'; readonly errorCode?: string }>
  | Command<'RecordRefundResult', { readonly refundId: string } & ProviderOutcome>
  /** The provider answered the refund `pending` under its own reference. */
  | Command<'RecordRefundSubmitted', { readonly refundId: string; readonly providerOperationId: string }>
  /** A matching refund record found in settlement data (providers whose refunds settle asynchronously). */
  | Command<'IngestSettledRefund', { readonly refundId: string }>
  /** The payment service has answered the increment; the handler asks `assertIncrementAllowed` before calling it. */
  | Command<
      'RecordAuthorizationIncrement',
      {
        readonly incrementId: string;
        readonly amount: Minor;
        readonly outcome: 'succeeded' | 'failed' | 'pending';
        readonly responseCode?: string;
      }
    >
  | Command<'SyncTransaction', Record<string, never>>
  /** The provider confirmed the reversal (void or refund) of a late authorization. */
  | Command<'RecordLateAuthorizationReversal', { readonly via: 'void' | 'refund'; readonly rawResponseCode?: string }>
  | Command<
      'UpdateTransaction',
      { readonly externalIdentifier?: string | null; readonly metadata?: Readonly<Record<string, string>> | null }
    >;

// ---- guards ------------------------------------------------------------------------------------------------
const fail = (
  code: TransactionErrorCode,
  message: string,
  details: readonly { field: string; message: string }[] = [],
): never => {
  throw new TransactionError(code, message, details);
};

function assertAmount(amount: Minor, field = 'amount'): void {
  if (!Number.isInteger(amount) || amount <= 0)
    fail('invalid_amount', `${field} must be a positive integer in minor units`, [
      { field, message: 'must be a positive integer' },
    ]);
}

function existing(state: TransactionState): Transaction {
  if (state.status === 'absent') return fail('transaction_not_found', 'The transaction could not be found');
  return state;
}

/** Nothing moves a transaction out of these; each has its own code so the edge can say why. */
function assertNotTerminal(t: Transaction): void {
  switch (t.status) {
    case 'authorization_declined':
      return fail('transaction_declined', 'The transaction was declined');
    case 'authorization_failed':
      return fail('transaction_failed', 'The transaction failed');
    case 'authorization_voided':
      return fail('transaction_voided', 'The authorization was voided');
    case 'refunded':
      return fail('transaction_refunded', 'The transaction was fully refunded');
    default:
      return;
  }
}

const isAuthorizationOpen = (t: Transaction): boolean =>
  t.status === 'processing' || t.status === 'buyer_approval_pending';

/** The most that all claimed captures together may reach. With both over-capture settings, the larger limit wins. */
export function captureLimit(authorized: Minor, settings: CaptureSettings): Minor {
  const over = settings.overCapture;
  if (over === undefined) return authorized;
  const byAmount = authorized + (over.amount ?? 0);
  // Rounded down: the configured percentage is a ceiling, never to be passed by a rounding.
  const byPercentage = Math.floor((authorized * (100 + (over.percentage ?? 0))) / 100);
  return Math.max(byAmount, byPercentage);
}

/** For the command handler, before it asks the payment service for more: the same rule the decider applies. */
export function assertIncrementAllowed(state: TransactionState): Transaction {
  const t = existing(state);
  assertNotTerminal(t);
  if (t.status !== 'authorization_succeeded')
    fail('increment_not_allowed', 'Only a transaction in authorization_succeeded can be increased');
  return t;
}

function assertTracking(t: Transaction, tracking: readonly TrackingEntry[]): void {
  if (tracking.length === 0) return;
  if (t.intent !== 'authorize')
    fail('tracking_not_allowed', 'Tracking applies to delayed captures of an authorized transaction only');
  if (tracking.length > MAX_TRACKING_ENTRIES)
    fail('too_many_tracking_entries', `At most ${MAX_TRACKING_ENTRIES} tracking entries`, [
      { field: 'tracking', message: `at most ${MAX_TRACKING_ENTRIES} entries` },
    ]);
  tracking.forEach((entry, i) => {
    if (entry.number.trim() === '' || entry.carrier.trim() === '') {
      fail('invalid_tracking_entry', 'A tracking entry needs a number and a carrier', [
        { field: `tracking[${i}]`, message: 'number and carrier are required' },
      ]);
    }
  });
}

// ---- decide, one function per command family ---------------------------------------------------------------
function decideAuthorizationResult(
  t: Transaction,
  source: 'create_request' | 'notification',
  result: AuthorizationResult,
  at: string,
): TransactionEvent[] {
  // A success after a decided failure: the provider holds money we said it does not. Recorded, to be reversed.
  const decidedFailure = t.status === 'authorization_failed' || t.status === 'authorization_declined';
  if (result.outcome === 'succeeded' && decidedFailure) return decideLateAuthorization(t, t.status, result, at);
  assertNotTerminal(t);
  if (!isAuthorizationOpen(t)) {
    // Already authorized: a repeated success changes nothing; anything else would contradict what was recorded.
    if (result.outcome === 'succeeded') return [];
    return fail(
      'authorization_already_decided',
      `The authorization already succeeded; a late '${result.outcome}' cannot change it`,
    );
  }
  switch (result.outcome) {
    case 'succeeded': {
      // A held failure wins: a failure is never followed by a contradicting success for the same create.
      if (t.notificationHeld.length > 0) return [];
      const { outcome: _outcome, captured: _captured, ...data } = result;
      assertAmount(data.authorizedAmount, 'authorized_amount');
      return [
        {
          type: 'AuthorizationSucceeded',
          data: { ...data, ...(t.intent === 'capture' && !t.giftCards ? { directCaptureId: t.id } : {}), at },
        },
      ];
    }
    case 'declined':
    case 'failed':
      if (source === 'notification' && t.createRequestRunning)
        return [{ type: 'FailureNotificationHeld', data: { kind: result.outcome, error: result.error, at } }];
      return [
        failureEvent(result.outcome, result.error, at, {
          ...(result.avsResponseCode !== undefined ? { avsResponseCode: result.avsResponseCode } : {}),
          ...(result.cvvResponseCode !== undefined ? { cvvResponseCode: result.cvvResponseCode } : {}),
        }),
      ];
    case 'pending':
      return [
        {
          type: 'AuthorizationPending',
          data: {
            ...(result.paymentServiceTransactionId !== undefined
              ? { paymentServiceTransactionId: result.paymentServiceTransactionId }
              : {}),
            at,
          },
        },
      ];
    case 'buyer_approval_required': {
      if (t.status === 'buyer_approval_pending') return [];
      const { outcome: _outcome, ...approval } = result;
      return [{ type: 'BuyerApprovalRequired', data: { ...approval, at } }];
    }
  }
}

function decideLateAuthorization(
  t: Transaction,
  decidedStatus: 'authorization_failed' | 'authorization_declined',
  result: Extract<AuthorizationResult, { outcome: 'succeeded' }>,
  at: string,
): TransactionEvent[] {
  if (t.lateAuthorization) return []; // the same late success again (a repeated notification, a sync)
  assertAmount(result.authorizedAmount, 'authorized_amount');
  const data = {
    authorizedAmount: result.authorizedAmount,
    ...(result.paymentServiceTransactionId !== undefined
      ? { paymentServiceTransactionId: result.paymentServiceTransactionId }
      : {}),
    captured: result.captured ?? (t.intent === 'capture' && !t.giftCards),
    decidedStatus,
    ...(result.rawResponseCode !== undefined ? { rawResponseCode: result.rawResponseCode } : {}),
    at,
  };
  return [{ type: 'LateAuthorizationReceived', data }];
}

function decideLateAuthorizationReversal(
  t: Transaction,
  data: { readonly via: 'void' | 'refund'; readonly rawResponseCode?: string },
  at: string,
): TransactionEvent[] {
  const late =
    t.lateAuthorization ?? fail('late_authorization_not_found', 'No late authorization is waiting to be reversed');
  if (late.reversed) return [];
  const code = data.rawResponseCode !== undefined ? { rawResponseCode: data.rawResponseCode } : {};
  return [{ type: 'LateAuthorizationReversed', data: { via: data.via, ...code, at } }];
}

const failureEvent = (
  kind: FailureKind,
  error: ProviderError,
  at: string,
  checks: VerificationCodes = {},
): TransactionEvent =>
  kind === 'declined'
    ? { type: 'AuthorizationDeclined', data: { ...error, ...checks, at } }
    : { type: 'AuthorizationFailed', data: { ...error, at } };

function decideCompletion(
  t: Transaction,
  reason: 'responded' | 'buyer_returned' | 'hold_expired',
  at: string,
): TransactionEvent[] {
  if (!t.createRequestRunning) return [];
  const completed: TransactionEvent = { type: 'CreateRequestCompleted', data: { reason, at } };
  const held = t.notificationHeld[0];
  if (!isAuthorizationOpen(t)) return [completed]; // the outcome is settled: held failures are moot
  // The first held failure decides; a later one can only repeat it.
  if (held !== undefined) return [completed, failureEvent(held.kind, held.error, at)];
  // The hold window ran out with the buyer still away: the approval is abandoned.
  if (reason === 'hold_expired' && t.status === 'buyer_approval_pending')
    return [completed, { type: 'BuyerApprovalTimedOut', data: { at } }];
  return [completed];
}

function decideThreeDSecure(t: Transaction, summary: ThreeDSecureSummary, at: string): TransactionEvent[] {
  assertNotTerminal(t);
  if (!isAuthorizationOpen(t))
    fail('authorization_already_decided', 'The authorization is already decided; 3-D Secure comes before it');
  // The same outcome twice (a buyer reloading the return page) changes nothing.
  if (
    t.threeDSecure &&
    t.threeDSecure.status === summary.status &&
    t.threeDSecure.authenticationId === summary.authenticationId
  )
    return [];
  return [{ type: 'ThreeDSecureCompleted', data: { ...summary, at } }];
}

function decideFailOver(
  t: Transaction,
  data: Omit<AttemptFailedData, 'nextPaymentServiceId'>,
  at: string,
): TransactionEvent[] {
  assertNotTerminal(t);
  if (!isAuthorizationOpen(t)) fail('authorization_already_decided', 'The authorization is already decided');
  if (t.paymentServiceId !== data.paymentServiceId)
    fail('attempt_not_current', `Payment service ${data.paymentServiceId} is not the one being tried`);
  const next = nextConnection(t) ?? fail('no_connection_left', 'No payment service is left to try');
  return [{ type: 'AuthorizationAttemptFailed', data: { ...data, nextPaymentServiceId: next, at } }];
}

function decideCapture(
  t: Transaction,
  data: Extract<TransactionCommand, { type: 'CaptureTransaction' }>['data'],
  at: string,
): TransactionEvent[] {
  assertNotTerminal(t);
  assertTracking(t, data.tracking ?? []);
  if (isAuthorizationOpen(t)) fail('transaction_not_authorized', 'The transaction is not authorized yet');
  if (isGiftCardPaymentOpen(t))
    fail('gift_card_payment_open', 'The gift cards of this payment are still being redeemed');
  if (t.status === 'authorization_void_pending') fail('void_pending', 'A void of this authorization is in progress');
  if (t.captures.some((c) => c.id === data.captureId))
    fail('capture_exists', `Capture ${data.captureId} already exists`);
  if (isAuthorizationClosed(t)) fail('authorization_closed', 'A final capture closed this authorization');
  const claimed = claimedCaptures(t);
  if (claimed.length > 0 && !data.settings.multipleCapturesEnabled)
    fail('multiple_captures_disabled', 'Multiple captures are not enabled for this account and payment service');
  const alreadyClaimed = claimedCaptureAmount(t);
  const amount = data.amount ?? t.authorizedAmount - alreadyClaimed;
  if (data.amount === undefined && amount <= 0)
    fail('nothing_to_capture', 'Nothing of the authorization is left to capture');
  assertAmount(amount);
  const limit = captureLimit(t.authorizedAmount, data.settings);
  if (alreadyClaimed + amount > limit) {
    fail('capture_limit_exceeded', `Captures would total ${alreadyClaimed + amount}, over the limit of ${limit}`, [
      { field: 'amount', message: `at most ${Math.max(limit - alreadyClaimed, 0)}` },
    ]);
  }
  // Without multiple captures the one capture is the last one.
  const final = data.settings.multipleCapturesEnabled ? (data.final ?? false) : true;
  return [
    {
      type: 'CaptureRequested',
      data: {
        captureId: data.captureId,
        amount,
        final,
        tracking: data.tracking ?? [],
        ...(data.details ? { details: data.details } : {}),
        at,
      },
    },
  ];
}

function decideCaptureResult(
  t: Transaction,
  data: { readonly captureId: string } & ProviderOutcome,
  at: string,
): TransactionEvent[] {
  const capture =
    t.captures.find((c) => c.id === data.captureId) ??
    fail('capture_not_found', `Capture ${data.captureId} could not be found`);
  if (capture.status !== 'pending') {
    if (capture.status === data.outcome) return []; // the same answer twice
    return fail('capture_not_pending', `Capture ${capture.id} already ${capture.status}`);
  }
  if (data.outcome === 'succeeded') {
    const provider = {
      ...(data.rawResponseCode !== undefined ? { rawResponseCode: data.rawResponseCode } : {}),
      ...(data.providerOperationId !== undefined ? { providerOperationId: data.providerOperationId } : {}),
    };
    return [{ type: 'CaptureSucceeded', data: { captureId: capture.id, ...provider, at } }];
  }
  const type = data.outcome === 'declined' ? 'CaptureDeclined' : 'CaptureFailed';
  return [{ type, data: { captureId: capture.id, ...data.error, at } }];
}

/** A capture's final word may have come first (a fast notification): then its reference has nothing to add. */
type Submitted<Id extends string> = { readonly [key in Id]: string } & { readonly providerOperationId: string };

function decideCaptureSubmitted(t: Transaction, data: Submitted<'captureId'>, at: string) {
  const { captureId, providerOperationId } = data;
  const capture = t.captures.find((c) => c.id === captureId) ?? fail('capture_not_found', `No capture ${captureId}`);
  if (capture.status !== 'pending' || capture.providerOperationId === providerOperationId) return [];
  const event: TransactionEvent = { type: 'CaptureSubmitted', data: { captureId, providerOperationId, at } };
  return [event];
}

function decideVoid(t: Transaction, voidId: string, at: string): TransactionEvent[] {
  assertNotTerminal(t);
  if (isAuthorizationOpen(t)) fail('transaction_not_authorized', 'The transaction is not authorized yet');
  if (t.status === 'authorization_void_pending')
    fail('void_pending', 'A void of this authorization is already in progress');
  // authorization_succeeded means no capture is pending or succeeded (the status follows the captures).
  if (t.status !== 'authorization_succeeded')
    fail('void_not_allowed', 'Only an authorization without captures can be voided; refund captured money instead');
  return [{ type: 'VoidRequested', data: { voidId, at } }];
}

function decideVoidResult(
  t: Transaction,
  data: { readonly voidId: string } & ProviderOutcome,
  at: string,
): TransactionEvent[] {
  if (t.status === 'authorization_voided' && data.outcome === 'succeeded') return [];
  assertNotTerminal(t);
  if (t.pendingVoidId !== data.voidId) fail('void_not_found', `No void ${data.voidId} is pending`);
  if (data.outcome === 'succeeded') return [{ type: 'VoidSucceeded', data: { voidId: data.voidId, at } }];
  return [{ type: 'VoidFailed', data: { voidId: data.voidId, outcome: data.outcome, ...data.error, at } }];
}

function decideRefund(
  t: Transaction,
  data: {
    readonly refundId: string;
    readonly amount?: Minor;
    readonly reason?: string;
    readonly details?: OperationDetails;
    readonly target?: RefundTarget;
  },
  at: string,
): TransactionEvent[] {
  if (t.refunds.some((r) => r.id === data.refundId)) fail('refund_exists', `Refund ${data.refundId} already exists`);
  if (data.target) return decideRedemptionRefund(t, { ...data, target: data.target }, at);
  assertNotTerminal(t);
  const captured = capturedAmount(t);
  if (captured === 0) fail('transaction_not_captured', 'Nothing was captured, so nothing can be refunded');
  const remaining = captured - claimedRefundAmount(t);
  const amount = data.amount ?? remaining;
  if (data.amount === undefined && remaining <= 0)
    fail('nothing_to_refund', 'Everything captured is refunded or being refunded');
  assertAmount(amount);
  if (amount > remaining)
    fail('refund_limit_exceeded', `Refunds would exceed what was captured; at most ${Math.max(remaining, 0)} is left`, [
      { field: 'amount', message: `at most ${Math.max(remaining, 0)}` },
    ]);
  return [
    {
      type: 'RefundRequested',
      data: {
        refundId: data.refundId,
        amount,
        ...(data.reason !== undefined ? { reason: data.reason } : {}),
        ...(data.details ? { details: data.details } : {}),
        at,
      },
    },
  ];
}

/** A refund of one gift card redemption: only a succeeded one, never past what it took from the card. */
function decideRedemptionRefund(
  t: Transaction,
  data: {
    readonly refundId: string;
    readonly amount?: Minor;
    readonly reason?: string;
    readonly details?: OperationDetails;
    readonly target: RefundTarget;
  },
  at: string,
): TransactionEvent[] {
  const redemption =
    t.giftCards?.redemptions.find((r) => r.redemptionId === data.target.id) ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${data.target.id} is not part of this transaction`, [
      { field: 'target_id', message: 'no such gift card redemption' },
    ]);
  if (redemption.status !== 'succeeded' || t.giftCards?.outcome !== 'succeeded') {
    fail(
      'redemption_not_refundable',
      `Gift card redemption ${redemption.redemptionId} is ${redemption.status === 'succeeded' ? 'part of a payment still in progress' : redemption.status}; only a redemption of a completed payment can be refunded`,
      [{ field: 'target_id', message: 'the redemption cannot be refunded' }],
    );
  }
  const remaining = redemption.amount - claimedRedemptionRefunds(t, redemption.redemptionId);
  const amount = data.amount ?? remaining;
  if (data.amount === undefined && remaining <= 0)
    fail('nothing_to_refund', 'Everything of this gift card redemption is refunded or being refunded');
  assertAmount(amount);
  if (amount > remaining)
    fail(
      'refund_limit_exceeded',
      `Refunds would exceed what the redemption took; at most ${Math.max(remaining, 0)} is left`,
      [{ field: 'amount', message: `at most ${Math.max(remaining, 0)}` }],
    );
  return [
    {
      type: 'RefundRequested',
      data: {
        refundId: data.refundId,
        amount,
        target: data.target,
        ...(data.reason !== undefined ? { reason: data.reason } : {}),
        ...(data.details ? { details: data.details } : {}),
        at,
      },
    },
  ];
}

// ---- gift cards: the split payment's process manager records each step here --------------------------------
function giftCardPart(t: Transaction) {
  return t.giftCards ?? fail('gift_card_redemption_not_found', 'This transaction has no gift cards');
}

function decideGiftCardRedemption(
  t: Transaction,
  data: Extract<TransactionCommand, { type: 'RecordGiftCardRedemption' }>['data'],
  at: string,
): TransactionEvent[] {
  const part = giftCardPart(t);
  const redemption =
    part.redemptions.find((r) => r.redemptionId === data.redemptionId) ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${data.redemptionId} could not be found`);
  if (redemption.status !== 'created') {
    if (redemption.status === data.result.outcome) return []; // the same answer twice
    return fail(
      'gift_card_redemption_decided',
      `Gift card redemption ${redemption.redemptionId} is already ${redemption.status}`,
    );
  }
  if (part.outcome !== null) fail('gift_card_redemption_decided', 'The gift card payment is already complete');
  if (data.result.outcome === 'succeeded') {
    return [
      {
        type: 'GiftCardRedemptionSucceeded',
        data: {
          redemptionId: redemption.redemptionId,
          ...(redemption.giftCardId ? { giftCardId: redemption.giftCardId } : {}),
          providerRedemptionId: data.result.providerRedemptionId,
          merchantInitiated: data.merchantInitiated,
          at,
        },
      },
    ];
  }
  return [
    { type: 'GiftCardRedemptionFailed', data: { redemptionId: redemption.redemptionId, ...data.result.error, at } },
  ];
}

/**
 * A stored or one-off card's redemption asked of the gift cards service: only while it is undecided and the payment
 * open.
 */
function decideGiftCardRedemptionRequest(t: Transaction, redemptionId: string, at: string): TransactionEvent[] {
  const part = giftCardPart(t);
  const redemption =
    part.redemptions.find((r) => r.redemptionId === redemptionId) ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${redemptionId} could not be found`);
  const giftCardId =
    redemption.giftCardId ??
    redemption.oneOffGiftCardId ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${redemptionId} is not of the gift cards service`);
  if (redemption.status !== 'created' || part.outcome !== null)
    fail('gift_card_redemption_decided', `Gift card redemption ${redemptionId} is already ${redemption.status}`);
  return [
    {
      type: 'GiftCardRedemptionRequested',
      data: {
        redemptionId,
        transactionId: t.id,
        merchantAccountId: t.merchantAccountId,
        giftCardServiceId: part.serviceId,
        giftCardId,
        amount: redemption.amount,
        currency: t.currency,
        at,
      },
    },
  ];
}

/**
 * A stored or one-off card's redemption to reverse, whatever it stands at: a success the gift cards service reports after the
 * payment was rolled back is reversed too (the gift cards service reverses each once).
 */
function decideGiftCardReversalRequest(t: Transaction, redemptionId: string, at: string): TransactionEvent[] {
  const part = giftCardPart(t);
  const redemption =
    part.redemptions.find((r) => r.redemptionId === redemptionId) ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${redemptionId} could not be found`);
  if (!byGiftCardsService(redemption))
    fail('gift_card_redemption_not_found', `Gift card redemption ${redemptionId} is not of the gift cards service`);
  return [
    {
      type: 'GiftCardReversalRequested',
      data: {
        redemptionId,
        transactionId: t.id,
        merchantAccountId: t.merchantAccountId,
        giftCardServiceId: part.serviceId,
        at,
      },
    },
  ];
}

function decideGiftCardReversal(
  t: Transaction,
  data: { readonly redemptionId: string; readonly reversed: boolean },
  at: string,
): TransactionEvent[] {
  const redemption =
    giftCardPart(t).redemptions.find((r) => r.redemptionId === data.redemptionId) ??
    fail('gift_card_redemption_not_found', `Gift card redemption ${data.redemptionId} could not be found`);
  if (redemption.status === 'reversed' || redemption.status === 'failed' || redemption.status === 'skipped') return [];
  // A redemption we never heard back from, which the provider says it never made: it did not happen.
  if (redemption.status === 'created' && !data.reversed)
    return [{ type: 'GiftCardRedemptionsSkipped', data: { redemptionIds: [redemption.redemptionId], at } }];
  return [{ type: 'GiftCardRedemptionReversed', data: { redemptionId: redemption.redemptionId, at } }];
}

function decideGiftCardCompletion(
  t: Transaction,
  data: { readonly outcome: 'succeeded' | 'failed'; readonly errorCode?: string },
  at: string,
): TransactionEvent[] {
  const part = giftCardPart(t);
  if (part.outcome !== null)
    return part.outcome === data.outcome
      ? []
      : fail('gift_card_redemption_decided', `The gift card payment already ${part.outcome}`);
  if (part.redemptions.some((r) => r.status === 'created'))
    fail('gift_card_payment_open', 'Every gift card redemption must be decided first');
  if (data.outcome === 'succeeded' && part.redemptions.some((r) => r.status !== 'succeeded'))
    fail('gift_card_payment_open', 'A gift card payment succeeds only when every redemption did');
  if (data.outcome === 'failed' && part.redemptions.some((r) => r.status === 'succeeded'))
    fail('gift_card_payment_open', 'A failed gift card payment must reverse every redemption first');
  return [
    {
      type: 'GiftCardPaymentCompleted',
      data: {
        outcome: data.outcome,
        ...(data.errorCode !== undefined ? { errorCode: data.errorCode } : {}),
        giftCardsOnly: !hasPaymentMethod(t),
        at,
      },
    },
  ];
}

function decideRefundResult(
  t: Transaction,
  refundId: string,
  result: ProviderOutcome,
  via: 'payment_service' | 'settlement',
  at: string,
): TransactionEvent[] {
  const refund =
    t.refunds.find((r) => r.id === refundId) ?? fail('refund_not_found', `Refund ${refundId} could not be found`);
  if (refund.status !== 'processing') {
    if (refund.status === result.outcome) return []; // a repeated answer, or settlement confirming a success
    return fail('refund_not_processing', `Refund ${refund.id} already ${refund.status}`);
  }
  if (result.outcome === 'succeeded') {
    return [
      {
        type: 'RefundSucceeded',
        data: {
          refundId,
          via,
          ...(result.providerOperationId !== undefined ? { providerOperationId: result.providerOperationId } : {}),
          at,
        },
      },
    ];
  }
  const type = result.outcome === 'declined' ? 'RefundDeclined' : 'RefundFailed';
  return [{ type, data: { refundId, ...result.error, at } }];
}

function decideRefundSubmitted(t: Transaction, data: Submitted<'refundId'>, at: string) {
  const { refundId, providerOperationId } = data;
  const refund = t.refunds.find((r) => r.id === refundId) ?? fail('refund_not_found', `No refund ${refundId}`);
  if (refund.status !== 'processing' || refund.providerOperationId === providerOperationId) return [];
  const event: TransactionEvent = { type: 'RefundSubmitted', data: { refundId, providerOperationId, at } };
  return [event];
}

function decideIncrement(
  state: TransactionState,
  data: Extract<TransactionCommand, { type: 'RecordAuthorizationIncrement' }>['data'],
  at: string,
): TransactionEvent[] {
  const t = assertIncrementAllowed(state);
  assertAmount(data.amount);
  const response = data.responseCode !== undefined ? { responseCode: data.responseCode } : {};
  if (data.outcome === 'succeeded') {
    return [
      {
        type: 'AuthorizationIncremented',
        data: {
          incrementId: data.incrementId,
          amount: data.amount,
          authorizedAmount: t.authorizedAmount + data.amount,
          ...response,
          at,
        },
      },
    ];
  }
  return [
    {
      type: 'AuthorizationIncrementNotApplied',
      data: { incrementId: data.incrementId, amount: data.amount, outcome: data.outcome, ...response, at },
    },
  ];
}

export function decideTransaction(command: TransactionCommand, state: TransactionState): TransactionEvent[] {
  const at = command.metadata.now;
  switch (command.type) {
    case 'CreateTransaction': {
      if (state.status !== 'absent')
        fail('transaction_exists', `Transaction ${command.data.transactionId} already exists`);
      assertAmount(command.data.amount);
      if (!/^[A-Z]{3}$/.test(command.data.currency))
        fail('invalid_currency', 'currency must be an ISO 4217 code', [
          { field: 'currency', message: 'must match ^[A-Z]{3}$' },
        ]);
      const giftCards = command.data.giftCards;
      if (giftCards) {
        if (giftCards.redemptions.length === 0)
          fail('invalid_gift_cards', 'A gift card plan needs at least one gift card', [
            { field: 'gift_cards', message: 'at least one' },
          ]);
        giftCards.redemptions.forEach((r, i) => assertAmount(r.amount, `gift_cards[${i}].amount`));
        if (giftCards.redemptions.reduce((total, r) => total + r.amount, 0) > command.data.amount) {
          fail('invalid_gift_cards', 'The gift cards add up to more than the amount', [
            { field: 'gift_cards', message: 'more than the amount' },
          ]);
        }
      }
      return [{ type: 'TransactionCreated', data: { ...command.data, at } }];
    }
    case 'RecordAuthorizationResult':
      return decideAuthorizationResult(existing(state), command.data.source, command.data.result, at);
    case 'CompleteCreateRequest':
      return decideCompletion(existing(state), command.data.reason, at);
    case 'RecordThreeDSecure':
      return decideThreeDSecure(existing(state), command.data, at);
    case 'FailOver':
      return decideFailOver(existing(state), command.data, at);
    case 'CancelTransaction': {
      const t = existing(state);
      assertNotTerminal(t);
      if (!isAuthorizationOpen(t))
        fail(
          'cancel_not_allowed',
          'Only a transaction still processing or awaiting buyer approval can be canceled; void or refund it instead',
        );
      return [{ type: 'TransactionCanceled', data: { at } }];
    }
    case 'CaptureTransaction':
      return decideCapture(existing(state), command.data, at);
    case 'RecordCaptureResult':
      return decideCaptureResult(existing(state), command.data, at);
    case 'RecordCaptureSubmitted':
      return decideCaptureSubmitted(existing(state), command.data, at);
    case 'VoidTransaction':
      return decideVoid(existing(state), command.data.voidId, at);
    case 'RecordVoidResult':
      return decideVoidResult(existing(state), command.data, at);
    case 'RefundTransaction':
      return decideRefund(existing(state), command.data, at);
    case 'RecordRefundResult':
      return decideRefundResult(existing(state), command.data.refundId, command.data, 'payment_service', at);
    case 'RecordRefundSubmitted':
      return decideRefundSubmitted(existing(state), command.data, at);
    case 'IngestSettledRefund':
      return decideRefundResult(existing(state), command.data.refundId, { outcome: 'succeeded' }, 'settlement', at);
    case 'RecordAuthorizationIncrement':
      return decideIncrement(state, command.data, at);
    case 'RecordGiftCardRedemption':
      return decideGiftCardRedemption(existing(state), command.data, at);
    case 'RequestGiftCardRedemption':
      return decideGiftCardRedemptionRequest(existing(state), command.data.redemptionId, at);
    case 'RequestGiftCardReversal':
      return decideGiftCardReversalRequest(existing(state), command.data.redemptionId, at);
    case 'SkipGiftCardRedemptions': {
      const created = giftCardPart(existing(state)).redemptions.filter((r) => r.status === 'created');
      return created.length === 0
        ? []
        : [{ type: 'GiftCardRedemptionsSkipped', data: { redemptionIds: created.map((r) => r.redemptionId), at } }];
    }
    case 'RecordGiftCardReversal':
      return decideGiftCardReversal(existing(state), command.data, at);
    case 'CompleteGiftCardPayment':
      return decideGiftCardCompletion(existing(state), command.data, at);
    case 'SyncTransaction': {
      const t = existing(state);
      if (t.captures.length > 1)
        fail('sync_unavailable', 'A transaction sync is unavailable once the transaction has more than one capture');
      return [{ type: 'TransactionSyncRequested', data: { at } }];
    }
    case 'RecordLateAuthorizationReversal':
      return decideLateAuthorizationReversal(existing(state), command.data, at);
    case 'UpdateTransaction': {
      existing(state);
      const { externalIdentifier, metadata } = command.data;
      if (externalIdentifier === undefined && metadata === undefined) return [];
      return [
        {
          type: 'TransactionUpdated',
          data: {
            ...(externalIdentifier !== undefined ? { externalIdentifier } : {}),
            ...(metadata !== undefined ? { metadata } : {}),
            at,
          },
        },
      ];
    }
    default: {
      const unreachable: never = command;
      throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
    }
  }
}

export const transaction: Decider<TransactionCommand, TransactionEvent, TransactionState> = {
  initialState: initialTransactionState,
  decide: decideTransaction,
  evolve: evolveTransaction,
};
