/**
 * The `adyen-card` connector: cards (raw, stored in our vault, network tokens with their cryptogram) through Adyen's
 * Checkout API v71, on Adyen's official Node library with our own HTTP client (adyen-http-client.ts). Every POST
 * carries an `Idempotency-Key` made of our own reference, so a retry never charges twice. Adyen answers every
 * modification (capture, cancel, refund, amount update) `received`: those are `pending` here and are settled by the
 * notification that follows (adyen-notification.ts). Checkout has no API to read a payment back, so `sync` answers
 * `unknown` and the AUTHORISATION notification is what reconciles an authorization whose answer was lost.
 */
// The library's own modules, not its index: the index loads every API it has (2,362 modules, 21 MB of heap and about
// 1 s of start-up on this machine); these three load 302 (docs/performance.md, Start-up and memory).
import type { Types } from '@adyen/api-library';
import type Client from '@adyen/api-library/lib/src/client';
import type { EnvironmentEnum } from '@adyen/api-library/lib/src/config';
import type CheckoutAPI from '@adyen/api-library/lib/src/services/checkout';
import type {
  AuthorizationResult,
  AuthorizeRequest,
  CancelRequest,
  CapabilityRefusal,
  CaptureRequest,
  CaptureResult,
  Connector,
  ConnectorCapabilities,
  ConnectorCapability,
  IncrementAuthorizationRequest,
  IncrementAuthorizationResult,
  NotificationAnswer,
  NotificationHeaders,
  ProviderNotification,
  ProviderResponse,
  RefundRequest,
  RefundResult,
  SyncResult,
  VoidRequest,
} from '../connector';
import { effectiveCapabilities, type ConnectorDefinition } from '../connector-registry';
import type { ProviderFetch } from '../provider-fetch';
import { adyenAvs, adyenCvc, adyenErrorCode, operationReference } from './adyen-codes';
import { AdyenFetchClient, AdyenNoAnswer, AdyenRejection } from './adyen-http-client';
import { parseAdyenNotification } from './adyen-notification';

export interface AdyenConfig {
  readonly apiKey: string;
  readonly merchantAccount: string;
  /** The live endpoints' prefix (Customer Area → Developers → API URLs); empty: Adyen's test environment. */
  readonly liveEndpointUrlPrefix?: string;
  /** The HMAC key of the connection's standard webhook, hex as Adyen shows it. */
  readonly hmacKey: string;
  /** For testing: where the Checkout API is instead of Adyen's (e.g. a local fake); `/v71/...` is appended. */
  readonly apiBaseUrl?: string;
  /** Where a shopper would come back after a redirect (Adyen requires one on every payment). */
  readonly returnUrl: string;
  /** Per-request timeout; past it the outcome is 'unknown'. Default 30 s. */
  readonly timeoutMs?: number;
  readonly capabilities?: Partial<ConnectorCapabilities>;
  /** How Adyen is called (the vault's forwarder for card-bearing calls); default the global fetch. */
  readonly fetch?: ProviderFetch;
}

/** The Checkout API's base URL of a connection: the override, the live prefix's, or the test environment's. */
export function adyenCheckoutBaseUrl(config: Pick<AdyenConfig, 'apiBaseUrl' | 'liveEndpointUrlPrefix'>): string {
  if (config.apiBaseUrl) return config.apiBaseUrl.replace(/\/$/, '');
  if (config.liveEndpointUrlPrefix)
    return `https://${config.liveEndpointUrlPrefix}-checkout-live.adyenpayments.com/checkout`;
  return 'https://checkout-test.adyen.com';
}

/**
 * Adyen's library, loaded by the first Adyen connection, as Stripe's is: its Checkout service alone is 283 modules
 * and about 3 MB of heap, which a process or thread none of whose connections is Adyen's (the vault's thread, the
 * gift cards process) never needs (docs/performance.md, Start-up and memory). Node caches it after the first call.
 */
function adyenLibrary(): {
  Client: typeof Client;
  CheckoutAPI: typeof CheckoutAPI;
  EnvironmentEnum: typeof EnvironmentEnum;
} {
  return {
    Client: (require('@adyen/api-library/lib/src/client') as { default: typeof Client }).default,
    CheckoutAPI: (require('@adyen/api-library/lib/src/services/checkout') as { default: typeof CheckoutAPI }).default,
    EnvironmentEnum: (require('@adyen/api-library/lib/src/config') as { EnvironmentEnum: typeof EnvironmentEnum })
      .EnvironmentEnum,
  };
}

const refusal = (capability: ConnectorCapability): CapabilityRefusal => ({
  outcome: 'refused',
  reason: 'capability_disabled',
  capability,
});
const unknown = { outcome: 'unknown' } as const;

export class AdyenConnector implements Connector {
  readonly definitionId: string;
  readonly capabilities: ConnectorCapabilities;
  /** Adyen stops resending a notification once it reads `[accepted]`. */
  readonly notificationAnswer: NotificationAnswer = {
    status: 200,
    contentType: 'text/plain; charset=utf-8',
    body: '[accepted]',
  };
  private readonly checkout: CheckoutAPI;

  constructor(
    private readonly config: AdyenConfig,
    definition: Pick<ConnectorDefinition, 'id' | 'capabilities'>,
  ) {
    this.definitionId = definition.id;
    this.capabilities = effectiveCapabilities(definition.capabilities, config.capabilities);
    const httpClient = new AdyenFetchClient({
      checkoutBaseUrl: adyenCheckoutBaseUrl(config),
      fetch: config.fetch ?? fetch,
      timeoutMs: config.timeoutMs ?? 30_000,
    });
    const live = Boolean(config.liveEndpointUrlPrefix);
    const { Client, CheckoutAPI, EnvironmentEnum } = adyenLibrary();
    const client = new Client(
      {
        apiKey: config.apiKey,
        environment: live ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
        ...(live ? { liveEndpointUrlPrefix: config.liveEndpointUrlPrefix } : {}),
      },
      httpClient,
    );
    this.checkout = new CheckoutAPI(client);
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizationResult | CapabilityRefusal> {
    if (!request.capture && !this.capabilities.delayedCapture) return refusal('delayedCapture');
    if (request.paymentInstrument.type === 'network-token' && !this.capabilities.networkTokens)
      return refusal('networkTokens');
    if (request.threeDSecure !== undefined && !this.capabilities.threeDSecure) return refusal('threeDSecure');
    if (request.paymentInstrument.type === 'redirect') {
      return {
        outcome: 'failed',
        errorCode: 'unsupported_payment_method',
        rawResponseDescription: `adyen-card takes cards, not ${request.paymentInstrument.redirect.method}`,
      };
    }
    const additionalData: Record<string, string> = {
      ...(request.capture ? {} : { manualCapture: 'true' }),
      // Only a pre-authorisation can be adjusted later (incremental authorization).
      ...(!request.capture && this.capabilities.incrementalAuthorization ? { authorisationType: 'PreAuth' } : {}),
    };
    const body: Types.checkout.PaymentRequest = {
      amount: { currency: request.currency, value: request.amount },
      merchantAccount: this.config.merchantAccount,
      reference: request.reference,
      returnUrl: this.config.returnUrl,
      paymentMethod: paymentMethodOf(request.paymentInstrument),
      shopperInteraction: 'Ecommerce' as Types.checkout.PaymentRequest.ShopperInteractionEnum,
      // 3-D Secure is ours (run before the authorization, its result passed through as mpiData): Adyen never starts
      // its own.
      authenticationData: {
        attemptAuthentication: 'never' as Types.checkout.AuthenticationData.AttemptAuthenticationEnum,
      },
      ...(request.capture ? { captureDelayHours: 0 } : {}),
      ...(Object.keys(additionalData).length > 0 ? { additionalData } : {}),
      ...(mpiDataOf(request) ? { mpiData: mpiDataOf(request) } : {}),
    };
    const answer = await this.call(() =>
      this.checkout.PaymentsApi.payments(body, { idempotencyKey: `authorize-${request.reference}` }),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : rejectionResult(answer.rejection);
    return authorizationResult(answer.value, request);
  }

  async capture(request: CaptureRequest): Promise<CaptureResult | CapabilityRefusal> {
    const further = request.final === false || (request.previouslyCapturedAmount ?? 0) > 0;
    if (further && !this.capabilities.multipleCaptures) return refusal('multipleCaptures');
    if (request.tracking !== undefined && !this.capabilities.trackingForwarding) return refusal('trackingForwarding');
    const captureId = request.captureReference ?? request.reference;
    const body: Types.checkout.PaymentCaptureRequest = {
      amount: { currency: request.currency, value: request.amount },
      merchantAccount: this.config.merchantAccount,
      reference: operationReference(request.reference, 'c', captureId),
    };
    const answer = await this.call(() =>
      this.checkout.ModificationsApi.captureAuthorisedPayment(request.providerTransactionId, body, {
        idempotencyKey: `capture-${captureId}`,
      }),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : rejectionResult(answer.rejection);
    return {
      outcome: 'pending',
      providerTransactionId: request.providerTransactionId,
      providerCaptureId: answer.value.pspReference,
    };
  }

  void(request: VoidRequest): Promise<ProviderResponse> {
    return this.cancelAtAdyen(
      request.reference,
      request.providerTransactionId,
      `void-${request.voidReference ?? request.reference}`,
      request.voidReference ?? request.reference,
    );
  }

  cancel(request: CancelRequest): Promise<ProviderResponse> {
    return this.cancelAtAdyen(
      request.reference,
      request.providerTransactionId,
      `cancel-${request.reference}`,
      request.reference,
    );
  }

  async refund(request: RefundRequest): Promise<RefundResult> {
    const body: Types.checkout.PaymentRefundRequest = {
      amount: { currency: request.currency, value: request.amount },
      merchantAccount: this.config.merchantAccount,
      reference: operationReference(request.reference, 'r', request.refundReference),
    };
    const answer = await this.call(() =>
      this.checkout.ModificationsApi.refundCapturedPayment(request.providerTransactionId, body, {
        idempotencyKey: `refund-${request.refundReference}`,
      }),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : rejectionResult(answer.rejection);
    return {
      outcome: 'pending',
      providerTransactionId: request.providerTransactionId,
      providerRefundId: answer.value.pspReference,
    };
  }

  async incrementAuthorization(
    request: IncrementAuthorizationRequest,
  ): Promise<IncrementAuthorizationResult | CapabilityRefusal> {
    if (!this.capabilities.incrementalAuthorization) return refusal('incrementalAuthorization');
    if (request.authorizedAmount === undefined) {
      return {
        outcome: 'failed',
        errorCode: 'invalid_amount',
        rawResponseDescription: 'Adyen takes the new total: the amount authorized so far is needed',
      };
    }
    const incrementId = request.incrementReference ?? request.reference;
    const body: Types.checkout.PaymentAmountUpdateRequest = {
      amount: { currency: request.currency, value: request.authorizedAmount + request.amount },
      merchantAccount: this.config.merchantAccount,
      reference: operationReference(request.reference, 'i', incrementId),
    };
    const answer = await this.call(() =>
      this.checkout.ModificationsApi.updateAuthorisedAmount(request.providerTransactionId, body, {
        idempotencyKey: `increment-${incrementId}`,
      }),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : rejectionResult(answer.rejection);
    return {
      outcome: 'pending',
      providerTransactionId: request.providerTransactionId,
      rawResponseCode: answer.value.status,
    };
  }

  /** Checkout has no read of a payment: the notifications are Adyen's word (docs/connectors/adyen.md). */
  async sync(): Promise<SyncResult> {
    return unknown;
  }

  parseNotification(rawBody: string | Uint8Array, headers: NotificationHeaders): ProviderNotification[] {
    return parseAdyenNotification(rawBody, headers, {
      hmacKey: this.config.hmacKey,
      merchantAccount: this.config.merchantAccount,
    });
  }

  private async cancelAtAdyen(
    reference: string,
    pspReference: string,
    idempotencyKey: string,
    operationId: string,
  ): Promise<ProviderResponse> {
    const body: Types.checkout.PaymentCancelRequest = {
      merchantAccount: this.config.merchantAccount,
      reference: operationReference(reference, 'v', operationId),
    };
    const answer = await this.call(() =>
      this.checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(pspReference, body, { idempotencyKey }),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : rejectionResult(answer.rejection);
    return { outcome: 'pending', providerTransactionId: pspReference };
  }

  /** The library's call as a value: an answer, a 4xx rejection, or no answer; 5xx and unreachable still throw. */
  private async call<T>(
    send: () => Promise<T>,
  ): Promise<{ kind: 'answer'; value: T } | { kind: 'rejected'; rejection: AdyenRejection } | { kind: 'unknown' }> {
    try {
      return { kind: 'answer', value: await send() };
    } catch (error) {
      if (error instanceof AdyenRejection) return { kind: 'rejected', rejection: error };
      if (error instanceof AdyenNoAnswer) return { kind: 'unknown' };
      throw error;
    }
  }
}

/** 'MM/YY' → Adyen's two-digit month and four-digit year. */
function expiryOf(expirationDate: string): { expiryMonth: string; expiryYear: string } {
  const [month = '', year = ''] = expirationDate.split('/');
  return { expiryMonth: month.padStart(2, '0'), expiryYear: year.length === 2 ? `20${year}` : year };
}

/** The card goes as given (a number or the vault's alias of it): never checked or transformed here. */
function paymentMethodOf(instrument: AuthorizeRequest['paymentInstrument']): Types.checkout.CardDetails {
  if (instrument.type === 'card') {
    const { number, expirationDate, securityCode } = instrument.card;
    return {
      type: 'scheme' as Types.checkout.CardDetails.TypeEnum,
      number,
      ...expiryOf(expirationDate),
      ...(securityCode ? { cvc: securityCode } : {}),
    };
  }
  if (instrument.type === 'network-token') {
    return {
      type: 'networkToken' as Types.checkout.CardDetails.TypeEnum,
      number: instrument.networkToken.token,
      ...expiryOf(instrument.networkToken.expirationDate),
    };
  }
  throw new Error(`not a card: ${instrument.type}`);
}

/** External 3-D Secure data (and a network token's cryptogram) as Adyen's `mpiData`. */
function mpiDataOf(request: AuthorizeRequest): Types.checkout.ThreeDSecureData | undefined {
  const cryptogram =
    request.paymentInstrument.type === 'network-token' ? request.paymentInstrument.networkToken.cryptogram : undefined;
  const threeDS = request.threeDSecure;
  if (!threeDS && !cryptogram) return undefined;
  // ECI 01/06: attempted (transStatus A); otherwise authenticated (Y).
  const status = threeDS && ['01', '06'].includes(threeDS.eci) ? 'A' : 'Y';
  return {
    ...(threeDS
      ? {
          eci: threeDS.eci,
          cavv: threeDS.cryptogram,
          threeDSVersion: threeDS.version,
          authenticationResponse: status as Types.checkout.ThreeDSecureData.AuthenticationResponseEnum,
          directoryResponse: status as Types.checkout.ThreeDSecureData.DirectoryResponseEnum,
          ...(threeDS.directoryServerTransactionId ? { dsTransID: threeDS.directoryServerTransactionId } : {}),
        }
      : {}),
    ...(cryptogram ? { tokenAuthenticationVerificationValue: cryptogram } : {}),
  };
}

function authorizationResult(response: Types.checkout.PaymentResponse, request: AuthorizeRequest): AuthorizationResult {
  const additional = (response.additionalData ?? {}) as Record<string, string | undefined>;
  const verification = {
    ...(adyenAvs(additional.avsResult) ? { avsResponseCode: adyenAvs(additional.avsResult) } : {}),
    ...(adyenCvc(additional.cvcResult) ? { cvvResponseCode: adyenCvc(additional.cvcResult) } : {}),
  };
  const base = { ...(response.pspReference ? { providerTransactionId: response.pspReference } : {}), ...verification };
  const raw = {
    ...(response.refusalReasonCode
      ? { rawResponseCode: response.refusalReasonCode }
      : response.resultCode
        ? { rawResponseCode: String(response.resultCode) }
        : {}),
    ...(response.refusalReason ? { rawResponseDescription: response.refusalReason } : {}),
  };
  switch (String(response.resultCode)) {
    case 'Authorised':
    case 'PartiallyAuthorised': {
      const authorized = response.amount?.value ?? request.amount;
      return {
        outcome: 'succeeded',
        ...base,
        ...raw,
        authorizedAmount: authorized,
        capturedAmount: request.capture ? authorized : 0,
      };
    }
    case 'Refused':
      return {
        outcome: 'declined',
        ...base,
        ...raw,
        errorCode: adyenErrorCode(response.refusalReasonCode, response.refusalReason),
      };
    case 'Cancelled':
      return { outcome: 'declined', ...base, ...raw, errorCode: 'other_decline' };
    case 'Error':
      return { outcome: 'failed', ...base, ...raw, errorCode: 'service_error' };
    case 'Pending':
    case 'Received':
      return { outcome: 'pending', ...base, ...raw };
    case 'RedirectShopper': {
      const url = (response.action as { url?: string } | undefined)?.url;
      if (url) return { outcome: 'buyer_approval_required', ...base, ...raw, approvalUrl: url };
      return { outcome: 'failed', ...base, ...raw, errorCode: 'invalid_service_response' };
    }
    default:
      // IdentifyShopper, ChallengeShopper, …: Adyen wants to authenticate, which this connector never asks for.
      return { outcome: 'failed', ...base, ...raw, errorCode: 'requires_buyer_authentication' };
  }
}

/** Adyen refused the request itself (4xx): credentials, permissions, validation — the raw code and text kept. */
function rejectionResult(rejection: AdyenRejection): ProviderResponse & { outcome: 'failed' } {
  const errorCode =
    rejection.status === 401
      ? 'invalid_service_credentials'
      : rejection.status === 403
        ? 'insufficient_service_permissions'
        : rejection.status === 429
          ? 'service_rate_limit'
          : 'invalid_service_request';
  return {
    outcome: 'failed',
    errorCode,
    ...(rejection.errorCode ? { rawResponseCode: rejection.errorCode } : { rawResponseCode: String(rejection.status) }),
    rawResponseDescription: rejection.errorMessage,
  };
}
