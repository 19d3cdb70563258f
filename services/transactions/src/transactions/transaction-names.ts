/**
 * The names a transaction event is known by outside the service: the spec's public event names (Kafka
 * `transactions.events`, webhooks) and the history names of `GET /transactions/{id}/events` (the reference's
 * TransactionEvent `name` values).
 */
import type { RecordedEvent } from '@switchyard/eventstore';

const publicNames: Readonly<Record<string, readonly string[]>> = {
  AuthorizationSucceeded: ['transaction.authorized'],
  AuthorizationDeclined: ['transaction.declined'],
  AuthorizationFailed: ['transaction.failed'],
  BuyerApprovalTimedOut: ['transaction.failed'],
  AuthorizationIncremented: ['transaction.modified'],
  CaptureRequested: ['capture.pending', 'transaction.capture-pending'],
  CaptureSucceeded: ['capture.succeeded', 'transaction.captured'],
  CaptureDeclined: ['capture.declined', 'transaction.capture-failed'],
  CaptureFailed: ['capture.failed', 'transaction.capture-failed'],
  VoidSucceeded: ['transaction.voided'],
  RefundRequested: ['refund.pending'],
  RefundSucceeded: ['refund.succeeded'],
  RefundDeclined: ['refund.declined'],
  RefundFailed: ['refund.failed'],
  LateAuthorizationReceived: ['transaction.late-authorization-received'],
  LateAuthorizationReversed: ['transaction.late-authorization-reversed'],
};

/** Spec, Events: capture events per capture, in addition to the transaction-level ones. */
export const transactionEventNames = (event: Pick<RecordedEvent, 'type' | 'data'>): readonly string[] | undefined => {
  // An `intent: capture` authorization is also its capture: announced as one.
  if (event.type === 'AuthorizationSucceeded' && (event.data as { directCaptureId?: string }).directCaptureId) {
    return ['transaction.authorized', 'transaction.captured', 'capture.succeeded'];
  }
  // A payment by gift cards alone is settled by its gift card process: captured (redeemed) or failed.
  if (event.type === 'GiftCardPaymentCompleted') {
    const d = event.data as { outcome?: string; giftCardsOnly?: boolean };
    return d.giftCardsOnly ? [d.outcome === 'succeeded' ? 'transaction.captured' : 'transaction.failed'] : undefined;
  }
  if (event.type === 'VoidFailed')
    return [
      (event.data as { outcome?: string }).outcome === 'declined'
        ? 'transaction.void-declined'
        : 'transaction.void-failed',
    ];
  if (event.type === 'BuyerApprovalRequired')
    return (event.data as { reason?: string }).reason === 'three_d_secure'
      ? ['transaction.authentication-pending']
      : undefined;
  if (event.type === 'ThreeDSecureCompleted')
    return (event.data as { status?: string }).status === 'complete' ? ['transaction.authenticated'] : undefined;
  return publicNames[event.type];
};

const historyNames: Readonly<Record<string, string>> = {
  TransactionCreated: 'transaction-api-request',
  AuthorizationSucceeded: 'payment-connector-response-transaction-authorization-succeeded',
  AuthorizationDeclined: 'payment-connector-response-transaction-declined',
  AuthorizationFailed: 'payment-connector-response-transaction-authorization-failed',
  CaptureSucceeded: 'payment-connector-response-transaction-capture-succeeded',
  CaptureDeclined: 'payment-connector-response-transaction-capture-declined',
  CaptureFailed: 'payment-connector-response-transaction-capture-failed',
  TransactionCanceled: 'payment-connector-response-transaction-cancel-succeeded',
  VoidSucceeded: 'payment-connector-response-transaction-void-succeeded',
  AuthorizationIncremented: 'transaction-modified-event',
  TransactionSyncRequested: 'transaction-sync-event',
  GiftCardRedemptionSucceeded: 'gift-card-redemption-succeeded',
  GiftCardRedemptionFailed: 'gift-card-redemption-failed',
  GiftCardRedemptionReversed: 'gift-card-reversal-succeeded',
  LateAuthorizationReceived: 'late-authorization-received',
  LateAuthorizationReversed: 'late-authorization-reversed',
};

/** The history name of an event; status changes without a more precise name are `transaction-updated-status`. */
export const historyName = (event: Pick<RecordedEvent, 'type' | 'data'>): string => {
  if (event.type === 'ThreeDSecureCompleted') {
    const status = (event.data as { status?: string }).status;
    return status === 'complete'
      ? 'three-d-secure-success'
      : status === 'declined'
        ? 'three-d-secure-result-request'
        : 'three-d-secure-request-error';
  }
  if (event.type === 'AuthorizationAttemptFailed') {
    return (event.data as { kind?: string }).kind === 'declined'
      ? 'payment-connector-response-transaction-declined'
      : 'payment-connector-response-transaction-authorization-failed';
  }
  if (event.type === 'VoidFailed') {
    const outcome = (event.data as { outcome?: string }).outcome;
    return outcome === 'declined'
      ? 'payment-connector-response-transaction-void-declined'
      : 'payment-connector-response-transaction-void-failed';
  }
  return historyNames[event.type] ?? 'transaction-updated-status';
};
