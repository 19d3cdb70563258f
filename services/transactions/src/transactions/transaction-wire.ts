/**
 * The read model's views on the wire: Transaction, TransactionSummary, TransactionCapture, Refund and the history
 * entries, with every field the reference marks required.
 */
import type {
  CartItem,
  Refund as WireRefund,
  Transaction as WireTransaction,
  TransactionCaptureSummary,
  TransactionEventItem,
  TransactionSummary,
} from '@switchyard/contracts';
import {
  capturedAmount,
  hasPaymentMethod,
  redemptionRefundedAmount,
  refundedAmount,
  type Capture,
  type Refund,
  type ThreeDSecureSummary,
  type Transaction,
  type TransactionStatus,
} from './transaction';
import type { HistoryEntry, OperationView, TransactionView } from './transactions.read-model';

export interface PaymentServiceSummary {
  readonly id: string;
  readonly definitionId: string;
  readonly method: string;
  readonly displayName: string;
}

/** What `TransactionCreated.details` holds (written by the slice, read here). */
export interface TransactionDetails {
  readonly country?: string | null;
  readonly paymentMethod?: {
    readonly id: string | null;
    readonly method: string;
    readonly scheme: string | null;
    readonly last4: string | null;
    readonly bin: string | null;
    readonly expirationDate: string | null;
    readonly fingerprint: string | null;
    readonly externalIdentifier?: string | null;
    /** From BIN data. */
    readonly cardType?: string | null;
    readonly issuerName?: string | null;
  };
  readonly instrumentType?: string;
  readonly checkoutSessionId?: string | null;
  /** Absent for a gift-card-only payment. */
  readonly paymentService?: PaymentServiceSummary;
  /** The gift card service connection, when the payment has gift cards. */
  readonly giftCardService?: PaymentServiceSummary;
  /** Every connection of the route (failover), by id: what `payment_service` shows once the transaction moved on. */
  readonly paymentServices?: Readonly<Record<string, PaymentServiceSummary>>;
  /** Where the buyer's browser goes back to after a challenge or a redirect method. */
  readonly redirectUrl?: string | null;
  readonly buyer?: {
    readonly id: string | null;
    readonly display_name: string | null;
    readonly external_identifier: string | null;
    readonly billing_details: unknown;
    readonly account_number: string | null;
  } | null;
  readonly cartItems?: readonly CartItem[] | null;
  readonly metadata?: Readonly<Record<string, string>> | null;
  readonly paymentSource?: string | null;
  readonly merchantInitiated?: boolean;
  readonly isSubsequentPayment?: boolean;
  readonly store?: boolean;
  readonly integrationClient?: string | null;
  readonly accountFundingTransaction?: boolean;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const LIMB = 0x1_0000_0000;

/**
 * The short base62 form of a UUID that connectors receive (`reconciliation_id`); 22 characters, reversible. The
 * 128 bits are divided by 62 as four 32-bit limbs in plain numbers, most significant first (a remainder times 2^32
 * plus a limb stays under 2^53): every listed transaction has one, and this is 0.8–1.0 µs a call where BigInt’s
 * division was 1.7 µs.
 */
export function reconciliationId(uuid: string): string {
  const hex = uuid.replace(/-/g, '');
  let a = Number.parseInt(hex.slice(0, 8), 16);
  let b = Number.parseInt(hex.slice(8, 16), 16);
  let c = Number.parseInt(hex.slice(16, 24), 16);
  let d = Number.parseInt(hex.slice(24, 32), 16);
  let out = '';
  for (let digit = 0; digit < 22; digit++) {
    let rest = a;
    a = Math.floor(rest / 62);
    rest = (rest - a * 62) * LIMB + b;
    b = Math.floor(rest / 62);
    rest = (rest - b * 62) * LIMB + c;
    c = Math.floor(rest / 62);
    rest = (rest - c * 62) * LIMB + d;
    d = Math.floor(rest / 62);
    out = BASE62[rest - d * 62] + out;
  }
  return out;
}

const intentOutcome = (intent: string, status: TransactionStatus): 'pending' | 'succeeded' | 'failed' => {
  switch (status) {
    case 'processing':
    case 'buyer_approval_pending':
      return 'pending';
    case 'authorization_declined':
    case 'authorization_failed':
      return 'failed';
    case 'capture_pending':
      return intent === 'capture' ? 'pending' : 'succeeded';
    case 'authorization_succeeded':
    case 'authorization_void_pending':
    case 'authorization_voided':
      return intent === 'capture' ? 'failed' : 'succeeded';
    default:
      return 'succeeded';
  }
};

export function toTransactionSummary(view: TransactionView): TransactionSummary {
  const t = view.state;
  const d = view.details as TransactionDetails;
  const pm = d.paymentMethod;
  return {
    type: 'transaction',
    id: t.id,
    reconciliation_id: reconciliationId(t.id),
    merchant_account_id: t.merchantAccountId,
    currency: t.currency,
    amount: t.amount,
    status: t.status,
    authorized_amount: t.authorizedAmount,
    captured_amount: capturedAmount(t),
    refunded_amount: refundedAmount(t),
    settled_currency: null,
    settled_amount: 0,
    settled: false,
    country: d.country ?? null,
    external_identifier: view.externalIdentifier,
    intent: t.intent,
    payment_method: pm
      ? {
          type: 'payment-method',
          id: pm.id,
          method: pm.method,
          mode: pm.method === 'card' ? 'card' : 'redirect',
          scheme: pm.scheme,
          label: pm.last4,
          expiration_date: pm.expirationDate,
          fingerprint: pm.fingerprint,
          approval_url: t.status === 'buyer_approval_pending' ? (view.approvalUrl ?? null) : null,
          country: null,
          currency: null,
          details:
            pm.method === 'card'
              ? { bin: pm.bin, card_type: pm.cardType ?? null, card_issuer_name: pm.issuerName ?? null }
              : null,
          external_identifier: pm.externalIdentifier ?? null,
        }
      : null,
    method: pm?.method ?? null,
    instrument_type: d.instrumentType ?? null,
    error_code: t.errorCode,
    payment_service: toPaymentService(d.paymentServices?.[t.paymentServiceId] ?? d.paymentService),
    pending_review: false,
    buyer: d.buyer ? { type: 'buyer', ...d.buyer } : null,
    raw_response_code: view.rawResponseCode,
    raw_response_description: view.rawResponseDescription,
    shipping_details: null,
    checkout_session_id: d.checkoutSessionId ?? null,
    gift_card_redemptions: toGiftCardRedemptions(t),
    gift_card_service: d.giftCardService
      ? {
          type: 'gift-card-service',
          id: d.giftCardService.id,
          gift_card_service_definition_id: d.giftCardService.definitionId,
          display_name: d.giftCardService.displayName,
        }
      : null,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
    disputed: false,
  };
}

export function toTransaction(view: TransactionView): WireTransaction {
  const t = view.state;
  const d = view.details as TransactionDetails;
  return {
    ...toTransactionSummary(view),
    airline: null,
    auth_response_code: view.rawResponseCode,
    avs_response_code: t.avsResponseCode,
    cvv_response_code: t.cvvResponseCode,
    anti_fraud_decision: null,
    payment_source: d.paymentSource ?? 'ecommerce',
    merchant_initiated: d.merchantInitiated ?? false,
    is_subsequent_payment: d.isSubsequentPayment ?? false,
    is_amount_estimated: t.isAmountEstimated,
    integration_client: d.integrationClient ?? null,
    store: d.store ?? false,
    cart_items: d.cartItems ? [...d.cartItems] : null,
    statement_descriptor: null,
    scheme_transaction_id: view.schemeTransactionId,
    three_d_secure: t.threeDSecure ? toThreeDSecureSummary(t.threeDSecure, t.amount) : null,
    redirect_url: d.redirectUrl ?? null,
    payment_service_transaction_id: t.paymentServiceTransactionId,
    metadata: view.metadata ? { ...view.metadata } : null,
    authorized_at: view.authorizedAt,
    captured_at: view.capturedAt,
    voided_at: view.voidedAt,
    canceled_at: view.canceledAt,
    approval_expires_at: t.status === 'buyer_approval_pending' ? (view.approvalExpiresAt ?? null) : null,
    buyer_approval_timedout_at: view.buyerApprovalTimedOutAt ?? null,
    intent_outcome: intentOutcome(t.intent, t.status),
    multi_tender: t.giftCards !== null && hasPaymentMethod(t),
    account_funding_transaction: d.accountFundingTransaction ?? false,
    recipient: null,
    merchant_advice_code: null,
    installment_count: null,
  };
}

const toGiftCardRedemptions = (t: Transaction): WireTransaction['gift_card_redemptions'] =>
  (t.giftCards?.redemptions ?? []).map((r) => ({
    type: 'gift-card-redemption',
    id: r.redemptionId,
    status: r.status,
    amount: r.amount,
    refunded_amount: redemptionRefundedAmount(t, r.redemptionId),
    gift_card_service_redemption_id: r.providerRedemptionId,
    error_code: r.error?.errorCode ?? null,
    raw_error_code: r.error?.rawErrorCode ?? null,
    raw_error_message: r.error?.rawErrorMessage ?? null,
    gift_card: { type: 'gift-card', id: r.giftCardId ?? null, bin: r.bin, sub_bin: r.subBin, last4: r.last4 },
  }));

const toPaymentService = (s: PaymentServiceSummary | undefined) =>
  s
    ? {
        type: 'payment-service' as const,
        id: s.id,
        payment_service_definition_id: s.definitionId,
        method: s.method,
        display_name: s.displayName,
      }
    : null;

/**
 * The reference's TransactionThreeDSecureSummary: `response_data` is the authentication result as a ThreeDSecureDataV2
 * (what the payment service received), `error_data` why it did not complete.
 */
function toThreeDSecureSummary(summary: ThreeDSecureSummary, amount: number) {
  const authenticated = summary.status === 'complete' || summary.status === 'declined';
  return {
    version: summary.version ?? null,
    status: summary.status,
    method: summary.method,
    response_data: authenticated
      ? {
          cavv: summary.cavv ?? null,
          eci: summary.eci ?? null,
          version: summary.version ?? null,
          directory_response: summary.directoryResponse ?? summary.transactionStatus ?? null,
          authentication_response: summary.transactionStatus ?? null,
          directory_transaction_id: summary.directoryServerTransactionId ?? null,
        }
      : null,
    error_data:
      summary.status === 'complete'
        ? null
        : { description: summary.errorDescription ?? null, code: summary.statusReason ?? null },
    amount,
  };
}

const blankOperation = (view: TransactionView): OperationView => ({
  createdAt: view.createdAt,
  updatedAt: view.updatedAt,
  details: {},
  reason: null,
  errorCode: null,
  rawResponseCode: null,
  rawResponseDescription: null,
  providerOperationId: null,
});

export function toCaptureSummary(view: TransactionView, capture: Capture): TransactionCaptureSummary {
  const operation = view.captures[capture.id] ?? blankOperation(view);
  return {
    type: 'transaction-capture',
    id: capture.id,
    transaction_id: view.state.id,
    status: capture.status,
    amount: capture.amount,
    currency: view.state.currency,
    final: capture.final,
    tracking: capture.tracking.map((entry) => ({
      number: entry.number,
      carrier: entry.carrier,
      url: entry.url ?? null,
    })),
    cart_items: (operation.details.cartItems as CartItem[] | undefined) ?? null,
    external_identifier: operation.details.externalIdentifier ?? null,
    code: operation.errorCode,
    raw_response_code: operation.rawResponseCode,
    raw_response_description: operation.rawResponseDescription,
    created_at: operation.createdAt,
    updated_at: operation.updatedAt,
  };
}

export function toRefund(view: TransactionView, refund: Refund): WireRefund {
  const operation = view.refunds[refund.id] ?? blankOperation(view);
  return {
    type: 'refund',
    id: refund.id,
    transaction_id: view.state.id,
    payment_service_refund_id: operation.providerOperationId,
    status: refund.status,
    currency: view.state.currency,
    amount: refund.amount,
    reason: operation.reason,
    target_type: refund.target?.type ?? 'payment-method',
    target_id: refund.target?.id ?? (view.details as TransactionDetails).paymentMethod?.id ?? null,
    reconciliation_id: reconciliationId(refund.id),
    external_identifier: operation.details.externalIdentifier ?? null,
    transaction_reconciliation_id: reconciliationId(view.state.id),
    transaction_external_identifier: view.externalIdentifier,
    created_at: operation.createdAt,
    updated_at: operation.updatedAt,
    creator: null,
    error_code: operation.errorCode,
    raw_response_code: operation.rawResponseCode,
    raw_response_description: operation.rawResponseDescription,
  };
}

export const toHistoryItem = (entry: HistoryEntry): TransactionEventItem => ({
  type: 'transaction-event',
  id: entry.id,
  name: entry.name,
  created_at: entry.createdAt,
  context: { ...entry.context },
});
