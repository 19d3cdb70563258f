/**
 * The simulator's HTTP wire format (snake_case JSON), shared by the server and the adapters that call it (mock-card,
 * 3-D Secure, mock-gift-card) so the two sides cannot drift. docs/simulator.md describes it for humans.
 */
import type { AvsResponseCode, CvvResponseCode, ProviderRefundStatus, ProviderTransactionStatus } from '../connector';
import type { GiftCardErrorCode } from '../gift-card';
import type { ThreeDSecureTransactionStatus } from '../three-d-secure';

/**
 * Sent by the card and gift card connectors on every call; an outage (`PUT /v1/outages/{merchant_id}`) is matched
 * against it.
 */
export const merchantIdHeader = 'x-mock-card-merchant-id';

export type WirePaymentInstrument =
  | {
      readonly type: 'card';
      readonly number: string;
      readonly expiration_date: string;
      readonly security_code?: string;
    }
  | {
      readonly type: 'network_token';
      readonly token: string;
      readonly expiration_date: string;
      readonly cryptogram?: string;
    }
  | { readonly type: 'redirect'; readonly method: string; readonly return_url: string; readonly country?: string };

export interface WireAuthorizeRequest {
  readonly merchant_id: string;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly payment_instrument: WirePaymentInstrument;
  readonly billing_postal_code?: string;
  readonly capture: boolean;
  readonly three_d_secure?: {
    readonly version: string;
    readonly eci: string;
    readonly cryptogram: string;
    readonly ds_transaction_id?: string;
  };
  readonly store_payment_method?: boolean;
  /** Where this transaction's notifications go; falls back to the simulator's `callbackUrl`. */
  readonly notification_url?: string;
}

export interface WireCaptureRequest {
  readonly amount: number;
  readonly final?: boolean;
  /** Over-capture: the most all captures together may reach; default the authorized amount. */
  readonly max_total_amount?: number;
  readonly tracking?: { readonly carrier: string; readonly tracking_number: string };
}

export interface WireRefundRequest {
  readonly refund_reference: string;
  readonly amount: number;
  readonly currency: string;
  /** false: the connection does not handle asynchronous settlement, so settle at once even for 500008. */
  readonly allow_async_settlement: boolean;
}

export interface WireIncrementRequest {
  readonly amount: number;
}

export interface WireResponseCodes {
  readonly error_code: string | null;
  readonly raw_response_code: string | null;
  readonly raw_response_description: string | null;
}

export interface WireCapture extends WireResponseCodes {
  readonly id: string;
  readonly amount: number;
  readonly status: 'succeeded' | 'declined' | 'failed';
}

export interface WireRefund extends WireResponseCodes {
  readonly id: string;
  readonly refund_reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: ProviderRefundStatus;
}

export interface WireTransaction extends WireResponseCodes {
  readonly id: string;
  readonly reference: string;
  readonly status: ProviderTransactionStatus;
  readonly amount: number;
  readonly currency: string;
  readonly authorized_amount: number;
  readonly captured_amount: number;
  readonly refunded_amount: number;
  readonly avs_response_code: AvsResponseCode | null;
  readonly cvv_response_code: CvvResponseCode | null;
  /** Redirect payments only: the page where the buyer approves or cancels (`GET /v1/approvals/{id}`). */
  readonly approval_url: string | null;
  readonly captures: readonly WireCapture[];
  readonly refunds: readonly WireRefund[];
}

/** Answer to void, cancel and increment: the operation's own status and codes, plus the transaction after it. */
export interface WireOperationResponse extends WireResponseCodes {
  /** `pending`: increments only (the issuer has not decided). */
  readonly status: 'succeeded' | 'declined' | 'failed' | 'pending';
  readonly transaction: WireTransaction;
}

export interface WireCaptureResponse {
  readonly capture: WireCapture;
  readonly transaction: WireTransaction;
}

export interface WireRefundResponse {
  readonly refund: WireRefund;
  readonly transaction: WireTransaction;
}

/** The notification body POSTed to the callback URL. Fields beyond the first six depend on `type`. */
export interface WireNotification {
  readonly event_id: string;
  readonly type: 'authorization' | 'capture' | 'refund' | 'vault_token';
  readonly sequence: number;
  readonly occurred_at: string;
  readonly reference: string;
  readonly transaction_id: string;
  readonly status?: string;
  readonly amount?: number;
  readonly currency?: string;
  readonly error_code?: string | null;
  readonly raw_response_code?: string | null;
  readonly raw_response_description?: string | null;
  readonly avs_response_code?: AvsResponseCode | null;
  readonly cvv_response_code?: CvvResponseCode | null;
  readonly capture_id?: string;
  readonly refund_id?: string;
  readonly refund_reference?: string;
  readonly token?: string;
  readonly card_last4?: string;
  readonly expiration_date?: string;
}

/** The form the approval page posts (`POST /v1/approvals/{id}`, form-encoded or JSON). */
export interface WireApprovalDecision {
  readonly decision: 'approve' | 'cancel';
}

// ---- 3-D Secure directory server / ACS (`/v1/3ds/...`) -------------------------------------------------------

export interface WireThreeDSecureAuthenticationRequest {
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly card: { readonly number: string; readonly expiration_date: string };
  readonly merchant: {
    readonly acquirer_bin: string;
    readonly acquirer_merchant_id: string;
    readonly name: string;
    readonly country_code: string;
    readonly category_code: string;
    readonly url: string;
  };
  readonly return_url: string;
}

export interface WireThreeDSecureAuthentication {
  readonly authentication_id: string;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly version: string;
  readonly trans_status: ThreeDSecureTransactionStatus;
  readonly method: 'frictionless' | 'challenge';
  /** Set while `trans_status` is C. */
  readonly challenge_url: string | null;
  /** Set on Y and A. */
  readonly eci: string | null;
  /** Base64, set on Y and A. */
  readonly cavv: string | null;
  readonly ds_transaction_id: string;
  /** Set on N, R and U. */
  readonly status_reason: string | null;
}

/** The form the challenge page posts (`POST /v1/3ds/challenges/{id}`, form-encoded or JSON). */
export interface WireChallengeResult {
  readonly result: 'Y' | 'N';
}

// ---- Gift cards (`/v1/gift-cards/...`, `mock-gift-card`) ------------------------------------------------------

/** Every business answer is HTTP 200 with `status`; a failure carries the standard code and the provider's own. */
export interface WireGiftCardFailure {
  readonly status: 'failed';
  readonly error_code: GiftCardErrorCode;
  readonly raw_error_code: string;
  readonly raw_error_message: string;
}

export interface WireGiftCardBalanceRequest {
  readonly number: string;
  readonly pin?: string;
}

export interface WireGiftCardBalance {
  readonly status: 'succeeded';
  readonly balance: number;
  readonly currency: string;
  readonly expires_at: string | null;
}

export interface WireGiftCardIssueRequest {
  readonly reference: string;
  readonly theme: string;
  readonly amount: number;
  readonly currency: string;
}

export interface WireGiftCardIssued extends WireGiftCardBalance {
  readonly number: string;
  readonly pin: string;
}

export interface WireGiftCardActivateRequest {
  readonly reference: string;
  readonly number: string;
  readonly pin?: string;
  readonly amount?: number;
  readonly currency: string;
}

export interface WireGiftCardRedeemRequest {
  readonly reference: string;
  readonly number: string;
  readonly pin?: string;
  readonly amount: number;
  readonly currency: string;
}

export interface WireGiftCardRedeemed {
  readonly status: 'succeeded';
  readonly redemption_id: string;
  /** What is left on the card. */
  readonly balance: number;
}

export interface WireGiftCardReversal {
  readonly status: 'succeeded';
  readonly reversed: boolean;
}

/** `POST /v1/gift-cards/redemptions/{redemption reference}/refunds`; `reference` is the refund's own. */
export interface WireGiftCardRefundRequest {
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
}

export interface WireGiftCardRefunded {
  readonly status: 'succeeded';
  readonly refund_id: string;
}

/** `GET /v1/gift-cards/cards/{number}`: the provider's ledger for one card. */
export interface WireGiftCardLedgerCard {
  readonly number: string;
  readonly balance: number;
  readonly currency: string;
  readonly expires_at: string | null;
  /** Every redemption asked for on this number, in order, failed ones included. */
  readonly redemptions: readonly WireGiftCardLedgerRedemption[];
}

export interface WireGiftCardLedgerRedemption {
  readonly reference: string;
  /** null when the redemption failed. */
  readonly redemption_id: string | null;
  readonly amount: number;
  readonly currency: string;
  readonly status: 'succeeded' | 'failed' | 'reversed';
  readonly refunded_amount: number;
  readonly refunds: readonly { readonly reference: string; readonly refund_id: string; readonly amount: number }[];
}
