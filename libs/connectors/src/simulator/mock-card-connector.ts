/**
 * The `mock-card` connector: the Connector port over real HTTP to the simulator (simulator-server.ts). The same
 * class serves `mock-paypal` (the simulator's redirect wallet): only the definition's id and capabilities differ.
 * Timeouts and connections lost after sending give outcome 'unknown'; refused connections and 5xx throw a
 * retriable ConnectorUnavailableError; a disabled capability answers a CapabilityRefusal without calling out.
 */
import type {
  AuthorizationOutcome,
  AuthorizationResult,
  AuthorizeRequest,
  CapabilityRefusal,
  CaptureRequest,
  CaptureResult,
  Connector,
  ConnectorCapabilities,
  ConnectorCapability,
  IncrementAuthorizationRequest,
  IncrementAuthorizationResult,
  NotificationHeaders,
  PaymentInstrument,
  ProviderNotification,
  ProviderResponse,
  ProviderTransactionRef,
  ProviderTransactionSnapshot,
  RefundRequest,
  RefundResult,
  SyncRequest,
  SyncResult,
} from '../connector';
import { effectiveCapabilities, type ConnectorDefinition } from '../connector-registry';
import type { ProviderFetch } from '../provider-fetch';
import { parseMockCardNotification } from './mock-card-notification';
import { callSimulator, type HttpAnswer, type SimulatorEndpoint } from './simulator-http-client';
import {
  merchantIdHeader,
  type WireAuthorizeRequest,
  type WireCaptureResponse,
  type WireOperationResponse,
  type WirePaymentInstrument,
  type WireRefundResponse,
  type WireResponseCodes,
  type WireTransaction,
} from './simulator-wire';

export interface MockCardConfig {
  /** The simulator's base URL, e.g. http://127.0.0.1:4010 */
  readonly baseUrl: string;
  /** Any value: the simulator accepts every merchant id, as the sandbox does. */
  readonly merchantId: string;
  /** Shared with the simulator; verifies `x-mock-card-signature`. */
  readonly webhookSecret: string;
  /** Our provider-notification endpoint, sent with each authorization. */
  readonly notificationUrl?: string;
  /** Per-request timeout; past it the outcome is 'unknown'. Default 10 s. */
  readonly timeoutMs?: number;
  /** A connection can turn capabilities off (to test refusal paths), never on. */
  readonly capabilities?: Partial<ConnectorCapabilities>;
  /** Accepted clock skew for notification timestamps. Default 300 s. */
  readonly signatureToleranceSeconds?: number;
  readonly now?: () => Date;
  /** How the simulator is called (the vault's forwarder for card-bearing calls); default the global fetch. */
  readonly fetch?: ProviderFetch;
}

const refusal = (capability: ConnectorCapability): CapabilityRefusal => ({
  outcome: 'refused',
  reason: 'capability_disabled',
  capability,
});

const unknown = { outcome: 'unknown' } as const;

export class MockCardConnector implements Connector {
  readonly definitionId: string;
  readonly capabilities: ConnectorCapabilities;
  private readonly endpoint: SimulatorEndpoint;

  /** `definition`: which of the simulator's providers this connection is (`mock-card`, `mock-paypal`). */
  constructor(
    private readonly config: MockCardConfig,
    definition: Pick<ConnectorDefinition, 'id' | 'capabilities'>,
  ) {
    this.definitionId = definition.id;
    this.capabilities = effectiveCapabilities(definition.capabilities, config.capabilities);
    this.endpoint = {
      name: definition.id,
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs ?? 10_000,
      headers: { [merchantIdHeader]: config.merchantId },
      ...(config.fetch ? { fetch: config.fetch } : {}),
    };
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizationResult | CapabilityRefusal> {
    if (!request.capture && !this.capabilities.delayedCapture) return refusal('delayedCapture');
    if (request.paymentInstrument.type === 'network-token' && !this.capabilities.networkTokens)
      return refusal('networkTokens');
    if (request.threeDSecure !== undefined && !this.capabilities.threeDSecure) return refusal('threeDSecure');
    const body: WireAuthorizeRequest = {
      merchant_id: this.config.merchantId,
      reference: request.reference,
      amount: request.amount,
      currency: request.currency,
      payment_instrument: toWireInstrument(request.paymentInstrument),
      billing_postal_code: request.billingPostalCode,
      capture: request.capture,
      three_d_secure: request.threeDSecure && {
        version: request.threeDSecure.version,
        eci: request.threeDSecure.eci,
        cryptogram: request.threeDSecure.cryptogram,
        ds_transaction_id: request.threeDSecure.directoryServerTransactionId,
      },
      store_payment_method: request.storePaymentMethod,
      notification_url: this.config.notificationUrl,
    };
    const answer = await this.call<WireTransaction>('POST', '/v1/authorizations', body);
    if (answer.kind === 'unknown') return unknown;
    const t = answer.body;
    return {
      ...responseFields(transactionOutcome(t.status), t, t.id),
      ...(t.status === 'buyer_approval_required' && t.approval_url !== null && { approvalUrl: t.approval_url }),
      authorizedAmount: t.authorized_amount,
      capturedAmount: t.captured_amount,
      ...(t.avs_response_code !== null && { avsResponseCode: t.avs_response_code }),
      ...(t.cvv_response_code !== null && { cvvResponseCode: t.cvv_response_code }),
    };
  }

  async capture(request: CaptureRequest): Promise<CaptureResult | CapabilityRefusal> {
    const further = request.final === false || (request.previouslyCapturedAmount ?? 0) > 0;
    if (further && !this.capabilities.multipleCaptures) return refusal('multipleCaptures');
    if (request.tracking !== undefined && !this.capabilities.trackingForwarding) return refusal('trackingForwarding');
    const answer = await this.call<WireCaptureResponse>('POST', this.path(request, 'captures'), {
      amount: request.amount,
      final: request.final ?? true,
      ...(request.maxTotalAmount !== undefined ? { max_total_amount: request.maxTotalAmount } : {}),
      tracking: request.tracking && {
        carrier: request.tracking.carrier,
        tracking_number: request.tracking.trackingNumber,
      },
    });
    if (answer.kind === 'unknown') return unknown;
    const { capture, transaction } = answer.body;
    return {
      ...responseFields(capture.status, capture, transaction.id),
      providerCaptureId: capture.id,
      capturedAmount: transaction.captured_amount,
    };
  }

  void(request: ProviderTransactionRef): Promise<ProviderResponse> {
    return this.operation(this.path(request, 'void'), {});
  }

  cancel(request: ProviderTransactionRef): Promise<ProviderResponse> {
    return this.operation(this.path(request, 'cancel'), {});
  }

  async refund(request: RefundRequest): Promise<RefundResult> {
    const answer = await this.call<WireRefundResponse>('POST', this.path(request, 'refunds'), {
      refund_reference: request.refundReference,
      amount: request.amount,
      currency: request.currency,
      allow_async_settlement: this.capabilities.asynchronousRefundSettlement,
    });
    if (answer.kind === 'unknown') return unknown;
    const { refund, transaction } = answer.body;
    return { ...responseFields(refund.status, refund, transaction.id), providerRefundId: refund.id };
  }

  async incrementAuthorization(
    request: IncrementAuthorizationRequest,
  ): Promise<IncrementAuthorizationResult | CapabilityRefusal> {
    if (!this.capabilities.incrementalAuthorization) return refusal('incrementalAuthorization');
    const answer = await this.call<WireOperationResponse>('POST', this.path(request, 'increments'), {
      amount: request.amount,
    });
    if (answer.kind === 'unknown') return unknown;
    const { transaction } = answer.body;
    return {
      ...responseFields(answer.body.status, answer.body, transaction.id),
      authorizedAmount: transaction.authorized_amount,
    };
  }

  async sync(request: SyncRequest): Promise<SyncResult> {
    const path =
      request.providerTransactionId !== undefined
        ? `/v1/authorizations/${encodeURIComponent(request.providerTransactionId)}`
        : `/v1/authorizations?reference=${encodeURIComponent(request.reference)}`;
    const answer = await this.call<WireTransaction>('GET', path, undefined, [404]);
    if (answer.kind === 'unknown') return unknown;
    if (answer.status === 404) return { outcome: 'not_found' };
    return { outcome: 'found', transaction: toSnapshot(answer.body) };
  }

  parseNotification(rawBody: string | Uint8Array, headers: NotificationHeaders): ProviderNotification {
    return parseMockCardNotification(rawBody, headers, {
      secret: this.config.webhookSecret,
      toleranceSeconds: this.config.signatureToleranceSeconds ?? 300,
      nowSeconds: Math.floor((this.config.now?.() ?? new Date()).getTime() / 1000),
    });
  }

  private path(ref: ProviderTransactionRef, action: string): string {
    return `/v1/authorizations/${encodeURIComponent(ref.providerTransactionId)}/${action}`;
  }

  private async operation(path: string, body: object): Promise<ProviderResponse> {
    const answer = await this.call<WireOperationResponse>('POST', path, body);
    if (answer.kind === 'unknown') return unknown;
    return responseFields(answer.body.status, answer.body, answer.body.transaction.id);
  }

  private call<T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    acceptedStatuses: readonly number[] = [],
  ): Promise<HttpAnswer<T>> {
    return callSimulator<T>(this.endpoint, method, path, body, acceptedStatuses);
  }
}

function toWireInstrument(instrument: PaymentInstrument): WirePaymentInstrument {
  switch (instrument.type) {
    case 'card':
      return {
        type: 'card',
        number: instrument.card.number,
        expiration_date: instrument.card.expirationDate,
        security_code: instrument.card.securityCode,
      };
    case 'network-token':
      return {
        type: 'network_token',
        token: instrument.networkToken.token,
        expiration_date: instrument.networkToken.expirationDate,
        cryptogram: instrument.networkToken.cryptogram,
      };
    case 'redirect':
      return {
        type: 'redirect',
        method: instrument.redirect.method,
        return_url: instrument.redirect.returnUrl,
        country: instrument.redirect.country,
      };
  }
}

function transactionOutcome(status: WireTransaction['status']): AuthorizationOutcome {
  switch (status) {
    case 'buyer_approval_required':
      return 'buyer_approval_required';
    case 'authorized':
    case 'captured':
    case 'voided':
    case 'cancelled':
      return 'succeeded';
    case 'pending':
      return 'pending';
    case 'declined':
      return 'declined';
    case 'failed':
      return 'failed';
  }
}

function responseFields<O extends AuthorizationOutcome>(
  outcome: O,
  codes: WireResponseCodes,
  providerTransactionId: string,
): Omit<ProviderResponse, 'outcome'> & { readonly outcome: O } {
  return {
    outcome,
    providerTransactionId,
    ...(codes.error_code !== null && { errorCode: codes.error_code }),
    ...(codes.raw_response_code !== null && { rawResponseCode: codes.raw_response_code }),
    ...(codes.raw_response_description !== null && { rawResponseDescription: codes.raw_response_description }),
  };
}

function toSnapshot(t: WireTransaction): ProviderTransactionSnapshot {
  return {
    providerTransactionId: t.id,
    reference: t.reference,
    status: t.status,
    amount: t.amount,
    currency: t.currency,
    authorizedAmount: t.authorized_amount,
    capturedAmount: t.captured_amount,
    refundedAmount: t.refunded_amount,
    ...(t.error_code !== null && { errorCode: t.error_code }),
    ...(t.raw_response_code !== null && { rawResponseCode: t.raw_response_code }),
    ...(t.raw_response_description !== null && { rawResponseDescription: t.raw_response_description }),
    ...(t.avs_response_code !== null && { avsResponseCode: t.avs_response_code }),
    ...(t.cvv_response_code !== null && { cvvResponseCode: t.cvv_response_code }),
    refunds: t.refunds.map((r) => ({
      providerRefundId: r.id,
      refundReference: r.refund_reference,
      amount: r.amount,
      status: r.status,
    })),
  };
}
