/**
 * The `stripe-card` connector: cards through Stripe's PaymentIntents API on Stripe's official Node library, whose
 * HTTP goes through the connection's `ProviderFetch` (`Stripe.createFetchHttpClient`). The card travels once, in
 * `POST /v1/payment_methods` (the only card-bearing call, so the vault's forwarder swaps aliases there); the
 * PaymentIntent is then created and confirmed with that PaymentMethod. Every POST carries an `Idempotency-Key` made
 * of our own reference, so a retry never charges twice; the library never retries on its own. Captures, voids,
 * increments and sync answer synchronously; a refund may be `pending` until its `refund.updated` event.
 */
import type Stripe from 'stripe';
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
  NotificationHeaders,
  ProviderNotification,
  ProviderResponse,
  ProviderTransactionSnapshot,
  RefundRequest,
  RefundResult,
  SyncRequest,
  SyncResult,
  VoidRequest,
} from '../connector';
import { ConnectorUnavailableError } from '../connector-errors';
import { effectiveCapabilities, type ConnectorDefinition } from '../connector-registry';
import { notSentCode, type ProviderFetch } from '../provider-fetch';
import { referenceKey, refundKey, stripeAvs, stripeCvc, stripeErrorCode } from './stripe-codes';
import { parseStripeNotification } from './stripe-notification';

/**
 * Stripe's library, loaded by the first Stripe connection (a process none of whose connections is Stripe's never loads
 * it: 219 modules and about 25 MB; docs/performance.md, Start-up and memory). Node caches it after the first call.
 */
function stripeLibrary(): typeof Stripe {
  return require('stripe') as typeof Stripe;
}

export interface StripeConfig {
  readonly secretKey: string;
  /** The signing secret (`whsec_…`) of the webhook endpoint configured at Stripe for this connection. */
  readonly webhookSecret: string;
  /** For testing: where the API is instead of https://api.stripe.com (e.g. a local fake). */
  readonly apiBaseUrl?: string;
  /** Per-request timeout; past it the outcome is 'unknown'. Default 30 s. */
  readonly timeoutMs?: number;
  readonly capabilities?: Partial<ConnectorCapabilities>;
  /** Accepted clock skew of `Stripe-Signature` timestamps. Default 300 s (the library's). */
  readonly signatureToleranceSeconds?: number;
  /** How Stripe is called (the vault's forwarder for card-bearing calls); default the global fetch. */
  readonly fetch?: ProviderFetch;
  /**
   * How far Stripe's search may lag behind a write: an intent searched for by our reference and not found is taken as
   * never made only once the authorization is older than this. Default one hour (Stripe: "under normal operating
   * conditions, data is searchable in less than a minute … can be up to an hour behind during outages").
   */
  readonly searchLagMs?: number;
}

const defaultSearchLagMs = 60 * 60 * 1000;

/**
 * The library sets `Content-Length` itself; fetch computes it from the body anyway. Node 20's built-in fetch (undici
 * 6) refuses that header ("invalid content-length header") once the process has loaded the npm `undici` 7, whose
 * global dispatcher it then shares — the webhooks service's delivery client does, in the embedded runtime — and every
 * Stripe call would end with no answer. Left out, the request is the same on the wire.
 */
function withoutContentLength(send: ProviderFetch): typeof fetch {
  return ((input: string | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.delete('content-length');
    return send(input, { ...init, headers });
  }) as typeof fetch;
}

export const stripeApiBaseUrl = (config: Pick<StripeConfig, 'apiBaseUrl'>): string =>
  (config.apiBaseUrl || 'https://api.stripe.com').replace(/\/$/, '');

const refusal = (capability: ConnectorCapability): CapabilityRefusal => ({
  outcome: 'refused',
  reason: 'capability_disabled',
  capability,
});
const unknown = { outcome: 'unknown' } as const;

type Answer<T> =
  | { readonly kind: 'answer'; readonly value: T }
  | { readonly kind: 'error'; readonly error: Stripe.errors.StripeError }
  | { readonly kind: 'unknown' };

export class StripeConnector implements Connector {
  readonly definitionId: string;
  readonly capabilities: ConnectorCapabilities;
  private readonly stripe: Stripe;

  constructor(
    private readonly config: StripeConfig,
    definition: Pick<ConnectorDefinition, 'id' | 'capabilities'>,
  ) {
    this.definitionId = definition.id;
    this.capabilities = effectiveCapabilities(definition.capabilities, config.capabilities);
    const base = new URL(stripeApiBaseUrl(config));
    const StripeClient = stripeLibrary();
    this.stripe = new StripeClient(config.secretKey, {
      httpClient: StripeClient.createFetchHttpClient(withoutContentLength(config.fetch ?? fetch)),
      host: base.hostname,
      ...(base.port ? { port: base.port } : {}),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      // Retries are ours to decide (reconciliation): the library must never send a request twice on its own.
      maxNetworkRetries: 0,
      timeout: config.timeoutMs ?? 30_000,
      telemetry: false,
    });
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizationResult | CapabilityRefusal> {
    if (!request.capture && !this.capabilities.delayedCapture) return refusal('delayedCapture');
    if (request.paymentInstrument.type === 'network-token' && !this.capabilities.networkTokens)
      return refusal('networkTokens');
    if (request.threeDSecure !== undefined && !this.capabilities.threeDSecure) return refusal('threeDSecure');
    const instrument = request.paymentInstrument;
    if (instrument.type !== 'card')
      return {
        outcome: 'failed',
        errorCode: 'unsupported_payment_method',
        rawResponseDescription: `stripe-card takes cards, not ${instrument.type}`,
      };
    const [month = '', year = ''] = instrument.card.expirationDate.split('/');
    // The card as given (a number or the vault's alias of it): never checked or transformed here.
    const method = await this.call(() =>
      this.stripe.paymentMethods.create(
        {
          type: 'card',
          card: {
            number: instrument.card.number,
            exp_month: Number(month),
            exp_year: Number(year.length === 2 ? `20${year}` : year),
            ...(instrument.card.securityCode ? { cvc: instrument.card.securityCode } : {}),
          },
          ...(request.billingPostalCode
            ? { billing_details: { address: { postal_code: request.billingPostalCode } } }
            : {}),
        },
        { idempotencyKey: `payment-method-${request.reference}` },
      ),
    );
    if (method.kind !== 'answer') return method.kind === 'unknown' ? unknown : this.failure(method.error);
    const manual = !request.capture;
    const threeDS = request.threeDSecure;
    const answer = await this.call(() =>
      this.stripe.paymentIntents.create(
        {
          amount: request.amount,
          currency: request.currency.toLowerCase(),
          payment_method: method.value.id,
          confirm: true,
          capture_method: manual ? 'manual' : 'automatic',
          metadata: { [referenceKey]: request.reference },
          expand: ['latest_charge'],
          payment_method_options: {
            card: {
              ...(manual && this.capabilities.incrementalAuthorization
                ? { request_incremental_authorization: 'if_available' as const }
                : {}),
              ...(manual && this.capabilities.multipleCaptures
                ? { request_multicapture: 'if_available' as const }
                : {}),
              ...(threeDS?.directoryServerTransactionId
                ? {
                    three_d_secure: {
                      cryptogram: threeDS.cryptogram,
                      transaction_id: threeDS.directoryServerTransactionId,
                      version: threeDS.version as '2.2.0',
                      electronic_commerce_indicator: threeDS.eci as '05',
                    },
                  }
                : {}),
            },
          },
        },
        { idempotencyKey: `authorize-${request.reference}` },
      ),
    );
    if (answer.kind === 'unknown') return unknown;
    if (answer.kind === 'error') {
      const declined = answer.error.payment_intent;
      return {
        ...this.failure(answer.error),
        ...(declined ? { providerTransactionId: declined.id } : {}),
        ...verification(declined),
      };
    }
    return intentResult(answer.value);
  }

  async capture(request: CaptureRequest): Promise<CaptureResult | CapabilityRefusal> {
    const further = request.final === false || (request.previouslyCapturedAmount ?? 0) > 0;
    if (further && !this.capabilities.multipleCaptures) return refusal('multipleCaptures');
    if (request.tracking !== undefined && !this.capabilities.trackingForwarding) return refusal('trackingForwarding');
    const answer = await this.call(() =>
      this.stripe.paymentIntents.capture(
        request.providerTransactionId,
        {
          amount_to_capture: request.amount,
          ...(this.capabilities.multipleCaptures ? { final_capture: request.final ?? true } : {}),
          expand: ['latest_charge'],
        },
        { idempotencyKey: `capture-${request.captureReference ?? request.reference}` },
      ),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : this.failure(answer.error);
    const intent = answer.value;
    const charge = typeof intent.latest_charge === 'object' && intent.latest_charge ? intent.latest_charge : null;
    return {
      outcome: 'succeeded',
      providerTransactionId: intent.id,
      providerCaptureId: charge?.id ?? intent.id,
      capturedAmount: intent.amount_received,
    };
  }

  void(request: VoidRequest): Promise<ProviderResponse> {
    return this.cancelIntent(request.providerTransactionId, `void-${request.voidReference ?? request.reference}`);
  }

  cancel(request: CancelRequest): Promise<ProviderResponse> {
    return this.cancelIntent(request.providerTransactionId, `cancel-${request.reference}`);
  }

  async refund(request: RefundRequest): Promise<RefundResult> {
    const answer = await this.call(() =>
      this.stripe.refunds.create(
        {
          payment_intent: request.providerTransactionId,
          amount: request.amount,
          metadata: { [referenceKey]: request.reference, [refundKey]: request.refundReference },
        },
        { idempotencyKey: `refund-${request.refundReference}` },
      ),
    );
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : this.failure(answer.error);
    const refund = answer.value;
    const base = { providerTransactionId: request.providerTransactionId, providerRefundId: refund.id };
    if (refund.status === 'succeeded') return { outcome: 'succeeded', ...base };
    if (refund.status === 'failed' || refund.status === 'canceled')
      return {
        outcome: 'failed',
        ...base,
        errorCode: 'refund_failed',
        ...(refund.failure_reason ? { rawResponseCode: refund.failure_reason } : {}),
      };
    return { outcome: 'pending', ...base };
  }

  async incrementAuthorization(
    request: IncrementAuthorizationRequest,
  ): Promise<IncrementAuthorizationResult | CapabilityRefusal> {
    if (!this.capabilities.incrementalAuthorization) return refusal('incrementalAuthorization');
    if (request.authorizedAmount === undefined)
      return {
        outcome: 'failed',
        errorCode: 'invalid_amount',
        rawResponseDescription: 'Stripe takes the new total: the amount authorized so far is needed',
      };
    const answer = await this.call(() =>
      this.stripe.paymentIntents.incrementAuthorization(
        request.providerTransactionId,
        { amount: request.authorizedAmount! + request.amount },
        { idempotencyKey: `increment-${request.incrementReference ?? request.reference}` },
      ),
    );
    if (answer.kind === 'unknown') return unknown;
    if (answer.kind === 'error') return this.failure(answer.error);
    return { outcome: 'succeeded', providerTransactionId: answer.value.id, authorizedAmount: answer.value.amount };
  }

  async sync(request: SyncRequest): Promise<SyncResult> {
    // Without Stripe's id (the create call's answer was lost) the intent is found by our reference in its metadata;
    // Stripe's search is not read-after-write, so a young intent it does not find yet may still exist.
    const found = await this.call(async () => {
      if (request.providerTransactionId)
        return this.stripe.paymentIntents.retrieve(request.providerTransactionId, { expand: ['latest_charge'] });
      const page = await this.stripe.paymentIntents.search({
        query: `metadata['${referenceKey}']:'${request.reference.replace(/'/g, '')}'`,
        expand: ['data.latest_charge'],
      });
      return page.data[0] ?? null;
    });
    if (found.kind === 'unknown') return unknown;
    if (found.kind === 'error') {
      if (found.error.statusCode === 404) return { outcome: 'not_found' };
      throw new ConnectorUnavailableError(
        `Stripe refused to read ${request.reference}: ${found.error.message}`,
        false,
        found.error.statusCode,
      );
    }
    if (found.value === null) return this.searchMayLag(request.attemptedAt) ? unknown : { outcome: 'not_found' };
    const intent = found.value;
    const refunds = await this.call(() => this.stripe.refunds.list({ payment_intent: intent.id, limit: 100 }));
    if (refunds.kind === 'unknown') return unknown;
    if (refunds.kind === 'error')
      throw new ConnectorUnavailableError(
        `Stripe refused to list refunds: ${refunds.error.message}`,
        false,
        refunds.error.statusCode,
      );
    return { outcome: 'found', transaction: snapshotOf(intent, refunds.value.data, request.reference) };
  }

  parseNotification(rawBody: string | Uint8Array, headers: NotificationHeaders): ProviderNotification | null {
    return parseStripeNotification(this.stripe, rawBody, headers, {
      secret: this.config.webhookSecret,
      toleranceSeconds: this.config.signatureToleranceSeconds ?? 300,
    });
  }

  /** Whether an intent made at `attemptedAt` may not be searchable yet (an unknown age: it is taken as searchable). */
  private searchMayLag(attemptedAt: string | undefined): boolean {
    const at = attemptedAt === undefined ? Number.NaN : Date.parse(attemptedAt);
    return !Number.isNaN(at) && Date.now() - at < (this.config.searchLagMs ?? defaultSearchLagMs);
  }

  private async cancelIntent(id: string, idempotencyKey: string): Promise<ProviderResponse> {
    const answer = await this.call(() => this.stripe.paymentIntents.cancel(id, {}, { idempotencyKey }));
    if (answer.kind !== 'answer') return answer.kind === 'unknown' ? unknown : this.failure(answer.error);
    return answer.value.status === 'canceled'
      ? { outcome: 'succeeded', providerTransactionId: id }
      : {
          outcome: 'failed',
          providerTransactionId: id,
          errorCode: 'service_decline',
          rawResponseCode: answer.value.status,
        };
  }

  /**
   * A card error is a decline; credentials, permissions and limits are failures that another connection may not share.
   */
  private failure(error: Stripe.errors.StripeError): ProviderResponse & { outcome: 'declined' | 'failed' } {
    const raw = {
      rawResponseCode: error.decline_code ?? error.code ?? error.type,
      rawResponseDescription: error.message,
    };
    if (error.type === 'StripeCardError')
      return { outcome: 'declined', errorCode: stripeErrorCode(error.decline_code, error.code), ...raw };
    const errorCode =
      error.type === 'StripeAuthenticationError'
        ? 'invalid_service_credentials'
        : error.type === 'StripePermissionError'
          ? 'insufficient_service_permissions'
          : error.type === 'StripeRateLimitError'
            ? 'service_rate_limit'
            : 'invalid_service_request';
    return { outcome: 'failed', errorCode, ...raw };
  }

  /** The library's call as a value: an answer, Stripe's error, or no answer; 5xx and unreachable throw. */
  private async call<T>(send: () => Promise<T>): Promise<Answer<T>> {
    try {
      return { kind: 'answer', value: await send() };
    } catch (error) {
      const { errors } = stripeLibrary();
      if (!(error instanceof errors.StripeError)) throw error;
      if (error instanceof errors.StripeConnectionError) {
        const code = notSentCode((error as { detail?: unknown }).detail);
        if (code)
          throw new ConnectorUnavailableError(`Stripe unreachable (${code})`, true, undefined, { cause: error });
        return { kind: 'unknown' };
      }
      if ((error.statusCode ?? 0) >= 500)
        throw new ConnectorUnavailableError(
          `Stripe answered ${error.statusCode}: ${error.message}`,
          true,
          error.statusCode,
        );
      return { kind: 'error', error };
    }
  }
}

function verification(intent: Stripe.PaymentIntent | undefined | null) {
  const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  const checks = charge?.payment_method_details?.card?.checks;
  const avs = stripeAvs(checks);
  const cvv = stripeCvc(checks);
  return { ...(avs ? { avsResponseCode: avs } : {}), ...(cvv ? { cvvResponseCode: cvv } : {}) };
}

function intentResult(intent: Stripe.PaymentIntent): AuthorizationResult {
  const base = { providerTransactionId: intent.id, rawResponseCode: intent.status, ...verification(intent) };
  switch (intent.status) {
    case 'requires_capture':
      return { outcome: 'succeeded', ...base, authorizedAmount: intent.amount_capturable, capturedAmount: 0 };
    case 'succeeded':
      return { outcome: 'succeeded', ...base, authorizedAmount: intent.amount, capturedAmount: intent.amount_received };
    case 'processing':
      return { outcome: 'pending', ...base };
    case 'requires_action': {
      const url = intent.next_action?.redirect_to_url?.url;
      if (url) return { outcome: 'buyer_approval_required', ...base, approvalUrl: url };
      return { outcome: 'failed', ...base, errorCode: 'requires_buyer_authentication' };
    }
    default: {
      const error = intent.last_payment_error;
      return {
        outcome: 'declined',
        ...base,
        errorCode: stripeErrorCode(error?.decline_code, error?.code),
        ...(error?.message ? { rawResponseDescription: error.message } : {}),
      };
    }
  }
}

function snapshotOf(
  intent: Stripe.PaymentIntent,
  refunds: readonly Stripe.Refund[],
  reference: string,
): ProviderTransactionSnapshot {
  const error = intent.last_payment_error;
  const status: ProviderTransactionSnapshot['status'] =
    intent.status === 'requires_capture'
      ? 'authorized'
      : intent.status === 'succeeded'
        ? 'captured'
        : intent.status === 'canceled'
          ? 'voided'
          : intent.status === 'processing'
            ? 'pending'
            : intent.status === 'requires_action'
              ? 'buyer_approval_required'
              : error
                ? 'declined'
                : 'pending';
  return {
    providerTransactionId: intent.id,
    reference: intent.metadata?.[referenceKey] ?? reference,
    status,
    amount: intent.amount,
    currency: intent.currency.toUpperCase(),
    authorizedAmount: status === 'authorized' || status === 'captured' ? intent.amount : 0,
    capturedAmount: intent.amount_received,
    refundedAmount: refunds.filter((r) => r.status === 'succeeded').reduce((total, r) => total + r.amount, 0),
    ...(status === 'declined'
      ? {
          errorCode: stripeErrorCode(error?.decline_code, error?.code),
          ...(error?.decline_code || error?.code ? { rawResponseCode: error.decline_code ?? error.code } : {}),
          ...(error?.message ? { rawResponseDescription: error.message } : {}),
        }
      : {}),
    ...verification(intent),
    refunds: refunds
      .filter((r) => r.metadata?.[refundKey])
      .map((r) => ({
        providerRefundId: r.id,
        refundReference: r.metadata?.[refundKey] ?? '',
        amount: r.amount,
        status:
          r.status === 'succeeded'
            ? 'succeeded'
            : r.status === 'failed' || r.status === 'canceled'
              ? 'failed'
              : 'pending',
      })),
  };
}
