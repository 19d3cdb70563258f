/**
 * The Connector port: what the transactions service asks of a payment provider. Amounts are integers in minor
 * units. Every business answer (approved, declined, failed, pending, outcome unknown, capability refused) is a
 * VALUE; only infrastructure trouble (provider unreachable, protocol broken) and bad notifications throw, with the
 * error classes in `connector-errors.ts`.
 *
 * A provider is one folder exporting one `ConnectorDefinition` (see `connector-registry.ts`).
 */

/** The card as the provider needs it to charge. Sent to the provider over HTTP only: it never goes into events. */
export interface CardDetails {
  readonly number: string;
  /** 'MM/YY' */
  readonly expirationDate: string;
  readonly securityCode?: string;
}

export interface NetworkTokenDetails {
  readonly token: string;
  /** 'MM/YY' */
  readonly expirationDate: string;
  readonly cryptogram?: string;
}

/** A redirect payment method (a wallet like PayPal): the buyer approves it on the provider's page. */
export interface RedirectDetails {
  /** The method name, e.g. `paypal`. */
  readonly method: string;
  /** Where the provider sends the buyer's browser back after approval (our return endpoint). */
  readonly returnUrl: string;
  readonly country?: string;
}

export type PaymentInstrument =
  | { readonly type: 'card'; readonly card: CardDetails }
  | { readonly type: 'network-token'; readonly networkToken: NetworkTokenDetails }
  | { readonly type: 'redirect'; readonly redirect: RedirectDetails };

export interface ThreeDSecureData {
  readonly version: string;
  readonly eci: string;
  readonly cryptogram: string;
  readonly directoryServerTransactionId?: string;
}

/** Shipment tracking that a provider with `trackingForwarding` accepts alongside a capture. */
export interface ShipmentTracking {
  readonly carrier: string;
  readonly trackingNumber: string;
}

/** Gr4vy-style standardized codes (see docs/simulator.md); provider-specific codes go in rawResponseCode. */
export type AvsResponseCode =
  | 'match'
  | 'no_match'
  | 'partial_match_address'
  | 'partial_match_postcode'
  | 'partial_match_name'
  | 'unavailable';
export type CvvResponseCode = 'match' | 'no_match' | 'unavailable' | 'not_provided';

export interface ConnectorCapabilities {
  readonly multipleCaptures: boolean;
  readonly incrementalAuthorization: boolean;
  readonly networkTokens: boolean;
  readonly trackingForwarding: boolean;
  readonly asynchronousRefundSettlement: boolean;
  readonly threeDSecure: boolean;
  readonly delayedCapture: boolean;
}
export type ConnectorCapability = keyof ConnectorCapabilities;

// ---- requests -----------------------------------------------------------------------------------------------

export interface AuthorizeRequest {
  /** Our transaction id (or its reconciliation id): the key the provider echoes back and `sync` looks up by. */
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly paymentInstrument: PaymentInstrument;
  readonly billingPostalCode?: string;
  /** true: authorize and capture in one call; false: authorize only (needs `delayedCapture`). */
  readonly capture: boolean;
  readonly threeDSecure?: ThreeDSecureData;
  /** Ask the provider to vault the card; the token arrives later as a `vault-token` notification. */
  readonly storePaymentMethod?: boolean;
}

export interface ProviderTransactionRef {
  readonly reference: string;
  readonly providerTransactionId: string;
}

export interface CaptureRequest extends ProviderTransactionRef {
  /** Our capture id: a real provider's idempotency key for this capture, echoed back in its notifications. */
  readonly captureReference?: string;
  readonly amount: number;
  readonly currency: string;
  /** Amount already captured on this authorization; > 0 means this is a further capture (`multipleCaptures`). */
  readonly previouslyCapturedAmount?: number;
  /** false: more captures will follow (`multipleCaptures`). Default true. */
  readonly final?: boolean;
  /**
   * Over-capture allowed by the merchant account: the most all captures of the authorization may total. Absent:
   * the authorized amount.
   */
  readonly maxTotalAmount?: number;
  readonly tracking?: ShipmentTracking;
}

export interface VoidRequest extends ProviderTransactionRef {
  /** Our void id: a real provider's idempotency key for this void. */
  readonly voidReference?: string;
}
export type CancelRequest = ProviderTransactionRef;

export interface RefundRequest extends ProviderTransactionRef {
  /** Our refund id: echoed back in notifications and settlement files. */
  readonly refundReference: string;
  readonly amount: number;
  readonly currency: string;
}

export interface IncrementAuthorizationRequest extends ProviderTransactionRef {
  /** Our increment id: a real provider's idempotency key for this increment, echoed back in its notifications. */
  readonly incrementReference?: string;
  /** The additional amount, not the new total. */
  readonly amount: number;
  readonly currency: string;
  /** The amount authorized before this increment (Adyen and Stripe take the new total). */
  readonly authorizedAmount?: number;
}

export interface SyncRequest {
  readonly reference: string;
  /** Absent after an authorization whose outcome is unknown: the provider is asked by `reference`. */
  readonly providerTransactionId?: string;
  /**
   * When the authorization was sent (ISO-8601). A provider whose lookup by reference lags behind its writes (Stripe's
   * search) answers `unknown` rather than `not_found` while the authorization is younger than that lag; absent: the
   * lookup's answer is taken as it is.
   */
  readonly attemptedAt?: string;
}

// ---- results ------------------------------------------------------------------------------------------------

/**
 * 'unknown': the request may or may not have taken effect (timeout, connection lost after sending); reconcile with
 * `sync` before deciding anything, and never simply retry an authorization.
 */
export type OperationOutcome = 'succeeded' | 'declined' | 'failed' | 'pending' | 'unknown';

/**
 * Authorization only: the buyer must approve at the provider first (`approvalUrl`); the final status arrives by
 * notification (and `sync` can ask for it).
 */
export type AuthorizationOutcome = OperationOutcome | 'buyer_approval_required';

export interface ProviderResponse {
  readonly outcome: OperationOutcome;
  readonly providerTransactionId?: string;
  /** Standardized error code (e.g. `insufficient_funds`), set on declined and failed. */
  readonly errorCode?: string;
  readonly rawResponseCode?: string;
  readonly rawResponseDescription?: string;
}

export interface AuthorizationResult extends Omit<ProviderResponse, 'outcome'> {
  readonly outcome: AuthorizationOutcome;
  /** Set with `buyer_approval_required`. */
  readonly approvalUrl?: string;
  readonly authorizedAmount?: number;
  readonly capturedAmount?: number;
  readonly avsResponseCode?: AvsResponseCode;
  readonly cvvResponseCode?: CvvResponseCode;
}

export interface CaptureResult extends ProviderResponse {
  readonly providerCaptureId?: string;
  readonly capturedAmount?: number;
}

export type VoidResult = ProviderResponse;
export type CancelResult = ProviderResponse;

export interface RefundResult extends ProviderResponse {
  readonly providerRefundId?: string;
}

export interface IncrementAuthorizationResult extends ProviderResponse {
  /** The new total authorized amount. */
  readonly authorizedAmount?: number;
}

/** The connection has this capability turned off: the provider was not called. */
export interface CapabilityRefusal {
  readonly outcome: 'refused';
  readonly reason: 'capability_disabled';
  readonly capability: ConnectorCapability;
}

/** `buyer_approval_required`: a redirect payment the buyer has not approved or cancelled yet. */
export type ProviderTransactionStatus =
  | 'pending'
  | 'buyer_approval_required'
  | 'authorized'
  | 'captured'
  | 'declined'
  | 'failed'
  | 'voided'
  | 'cancelled';

export type ProviderRefundStatus = 'pending' | 'succeeded' | 'failed';

export interface ProviderTransactionSnapshot {
  readonly providerTransactionId: string;
  readonly reference: string;
  readonly status: ProviderTransactionStatus;
  readonly amount: number;
  readonly currency: string;
  readonly authorizedAmount: number;
  readonly capturedAmount: number;
  readonly refundedAmount: number;
  readonly errorCode?: string;
  readonly rawResponseCode?: string;
  readonly rawResponseDescription?: string;
  readonly avsResponseCode?: AvsResponseCode;
  readonly cvvResponseCode?: CvvResponseCode;
  readonly refunds: readonly {
    readonly providerRefundId: string;
    readonly refundReference: string;
    readonly amount: number;
    readonly status: ProviderRefundStatus;
  }[];
}

export type SyncResult =
  | { readonly outcome: 'found'; readonly transaction: ProviderTransactionSnapshot }
  | { readonly outcome: 'not_found' }
  | { readonly outcome: 'unknown' };

// ---- notifications ------------------------------------------------------------------------------------------

interface NotificationBase {
  /** The provider's id for this event: the same on every redelivery, so it is the dedupe key. */
  readonly providerEventId: string;
  readonly reference: string;
  readonly providerTransactionId: string;
  /** Increases per provider transaction in the order the provider made the changes; use it to spot reordering. */
  readonly sequence: number;
  /** ISO-8601 */
  readonly occurredAt: string;
}

export type ProviderNotification =
  | (NotificationBase & {
      readonly type: 'authorization';
      readonly status: 'pending' | 'authorized' | 'captured' | 'declined' | 'failed' | 'voided' | 'cancelled';
      readonly amount: number;
      readonly currency: string;
      readonly errorCode?: string;
      readonly rawResponseCode?: string;
      readonly rawResponseDescription?: string;
      readonly avsResponseCode?: AvsResponseCode;
      readonly cvvResponseCode?: CvvResponseCode;
    })
  | (NotificationBase & {
      readonly type: 'capture';
      readonly providerCaptureId: string;
      /** Our capture id, when the provider echoes it (a capture it answered `pending` is found by it). */
      readonly captureReference?: string;
      readonly status: 'succeeded' | 'declined' | 'failed';
      readonly amount: number;
      readonly currency: string;
      readonly errorCode?: string;
    })
  | (NotificationBase & {
      readonly type: 'refund';
      readonly providerRefundId: string;
      /** Our refund id, when the provider echoes it; else the refund is found by `providerRefundId`. */
      readonly refundReference?: string;
      readonly status: 'succeeded' | 'failed';
      readonly amount: number;
      readonly currency: string;
      readonly errorCode?: string;
    })
  | (NotificationBase & {
      /** The final word on a void (reversal of an authorization) the provider answered `pending`. */
      readonly type: 'void';
      readonly status: 'succeeded' | 'failed';
      readonly errorCode?: string;
      readonly rawResponseCode?: string;
      readonly rawResponseDescription?: string;
    })
  | (NotificationBase & {
      /** The final word on an incremental authorization the provider answered `pending`. */
      readonly type: 'authorization-increment';
      readonly incrementReference?: string;
      readonly status: 'succeeded' | 'failed';
      /** The new total authorized amount. */
      readonly authorizedAmount: number;
      readonly currency: string;
      readonly errorCode?: string;
      readonly rawResponseCode?: string;
      readonly rawResponseDescription?: string;
    })
  | (NotificationBase & {
      readonly type: 'vault-token';
      readonly token: string;
      readonly cardLast4: string;
      readonly expirationDate: string;
    });

export type NotificationHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** What the notification endpoint answers the provider once a notification is taken (default: 204, no body). */
export interface NotificationAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

// ---- the port -----------------------------------------------------------------------------------------------

export interface Connector {
  readonly definitionId: string;
  /** The definition's capabilities with this connection's overrides applied. */
  readonly capabilities: ConnectorCapabilities;
  authorize(request: AuthorizeRequest): Promise<AuthorizationResult | CapabilityRefusal>;
  capture(request: CaptureRequest): Promise<CaptureResult | CapabilityRefusal>;
  /** Reverses an authorization that has not been captured. */
  void(request: VoidRequest): Promise<VoidResult>;
  /** Abandons an authorization that is still pending at the provider. */
  cancel(request: CancelRequest): Promise<CancelResult>;
  refund(request: RefundRequest): Promise<RefundResult>;
  incrementAuthorization(
    request: IncrementAuthorizationRequest,
  ): Promise<IncrementAuthorizationResult | CapabilityRefusal>;
  sync(request: SyncRequest): Promise<SyncResult>;
  /**
   * Verifies and decodes a provider notification. Throws `NotificationRejectedError` on bad input or signature;
   * null (or an empty list): verified, but about nothing a transaction tracks (a report, a dispute): acknowledged,
   * nothing applied. A provider that batches events (Adyen's `notificationItems`) answers each, in its order.
   */
  parseNotification(
    rawBody: string | Uint8Array,
    headers: NotificationHeaders,
  ): ProviderNotification | readonly ProviderNotification[] | null;
  /** The answer the provider expects for a notification it may stop resending (Adyen: `[accepted]`). */
  readonly notificationAnswer?: NotificationAnswer;
}
