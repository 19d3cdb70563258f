/**
 * `SwitchyardClient`: typed calls to the API (types generated from `GET /openapi.json` into `generated/`), with
 * ES512 tokens signed and renewed here, the merchant account per client or per call, retries, one error class and
 * cursor pagination. `client.api` is the typed openapi-fetch client for every operation; the resources below are the
 * common ones, throwing `SwitchyardApiError` instead of answering an error.
 */
import { randomUUID } from 'node:crypto';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { TokenCache, TokenSigner, type Credentials } from './credentials';
import { SwitchyardApiError } from './errors';
import { operationFacts } from './generated/operations';
import type { components, operations, paths } from './generated/schema';
import { paginate, type Page } from './pagination';
import { retryingFetch, type RetryPolicy } from './retry';
import { verifyWebhook, type WebhookHeaders, type WebhookVerification, type WebhookVerifyOptions } from './webhooks';

export type Schemas = components['schemas'];
export const MERCHANT_ACCOUNT_HEADER = 'x-service-merchant-account-id';
const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export interface SwitchyardClientOptions {
  /** The service, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** The key file `api-keys create` wrote (its path or its JSON), or a PEM and its kid. */
  readonly credentials: Credentials;
  /** The merchant account of every call (`x-service-merchant-account-id`), unless a call names another. */
  readonly merchantAccountId?: string;
  /**
   * The scopes signed into every token. Default: per operation, the first scope the document lists for it, so a
   * token can do only what its request does.
   */
  readonly scopes?: readonly string[];
  /** Token lifetime (default 300 s); a token is signed again when less than 60 s of it are left. */
  readonly tokenLifetimeSeconds?: number;
  /** Retries of reads and of writes with an `Idempotency-Key` (default 200 ms apart for up to 1 s); `false`: none. */
  readonly retry?: RetryPolicy | false;
  /** Another fetch (a proxy agent, tests). */
  readonly fetch?: (request: Request) => Promise<Response>;
}

/** Per call: another merchant account, the write's own idempotency key, an abort signal. */
export interface CallOptions {
  readonly merchantAccountId?: string;
  /** Honoured by transaction writes and gift card issue/activate; generated per call when absent. */
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

export interface EmbedTokenOptions {
  readonly amount?: number;
  readonly currency?: string;
  readonly buyerId?: string;
  readonly buyerExternalIdentifier?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Binds the token to one checkout session: it pays with that session only. */
  readonly checkoutSessionId?: string;
  /** Default 300 s. */
  readonly expiresInSeconds?: number;
}

type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Query<Op extends keyof operations> = operations[Op] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
type Item<List> = List extends { items: readonly (infer I)[] } ? I : never;
type Answer<T> = { data?: T; error?: unknown; response: Response };

const TOKEN_RENEWAL_MARGIN_SECONDS = 60;

export class SwitchyardClient {
  /** The typed openapi-fetch client: every operation of the document, with this client's tokens, headers and retries. */
  readonly api: Client<paths>;
  private readonly signer: TokenSigner;

  constructor(options: SwitchyardClientOptions) {
    this.signer = TokenSigner.from(options.credentials);
    const tokens = new TokenCache(this.signer, options.tokenLifetimeSeconds ?? 300, TOKEN_RENEWAL_MARGIN_SECONDS);
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: retryingFetch(options.fetch ?? ((request) => fetch(request)), options.retry ?? {}),
    });
    this.api.use(authenticate(tokens, options));
  }

  /** An embed token for a browser or app checkout: `embed` scope, pinning what the buyer's client may pay. */
  embedToken(options: EmbedTokenOptions = {}): string {
    const embed = {
      ...(options.amount !== undefined ? { amount: options.amount } : {}),
      ...(options.currency !== undefined ? { currency: options.currency } : {}),
      ...(options.buyerId !== undefined ? { buyer_id: options.buyerId } : {}),
      ...(options.buyerExternalIdentifier !== undefined
        ? { buyer_external_identifier: options.buyerExternalIdentifier }
        : {}),
      ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
    };
    return this.signer.sign(
      {
        scopes: ['embed'],
        ...(Object.keys(embed).length > 0 ? { embed } : {}),
        ...(options.checkoutSessionId !== undefined ? { checkout_session_id: options.checkoutSessionId } : {}),
      },
      options.expiresInSeconds ?? 300,
    );
  }

  readonly transactions = {
    create: (body: Body<'create_transaction'>, options?: CallOptions) =>
      this.call(this.api.POST('/transactions', { body, ...init(options) })),
    get: (transactionId: string, options?: CallOptions) =>
      this.call(
        this.api.GET('/transactions/{transaction_id}', {
          params: { path: { transaction_id: transactionId } },
          ...init(options),
        }),
      ),
    /** Every transaction the query matches, newest first, page after page as the loop asks. */
    list: (query: Query<'list_transactions'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/transactions', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            ...init(options),
          }),
        ),
      ),
    capture: (transactionId: string, body: Body<'capture_transaction'> = {}, options?: CallOptions) =>
      this.call(
        this.api.POST('/transactions/{transaction_id}/capture', {
          params: { path: { transaction_id: transactionId } },
          body,
          ...init(options),
        }),
      ),
    void: (transactionId: string, options?: CallOptions) =>
      this.call(
        this.api.POST('/transactions/{transaction_id}/void', {
          params: { path: { transaction_id: transactionId } },
          ...init(options),
        }),
      ),
    refund: (transactionId: string, body: Body<'create_transaction_refund'> = {}, options?: CallOptions) =>
      this.call(
        this.api.POST('/transactions/{transaction_id}/refunds', {
          params: { path: { transaction_id: transactionId } },
          body,
          ...init(options),
        }),
      ),
    refunds: (transactionId: string, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/transactions/{transaction_id}/refunds', {
            params: { path: { transaction_id: transactionId }, query: cursor ? { cursor } : {} },
            ...init(options),
          }),
        ),
      ),
  };

  readonly paymentServices = {
    create: (body: Body<'create_payment_service'>, options?: CallOptions) =>
      this.call(this.api.POST('/payment-services', { body, ...init(options) })),
    get: (paymentServiceId: string, options?: CallOptions) =>
      this.call(
        this.api.GET('/payment-services/{payment_service_id}', {
          params: { path: { payment_service_id: paymentServiceId } },
          ...init(options),
        }),
      ),
    list: (query: Query<'list_payment_services'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/payment-services', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            ...init(options),
          }),
        ),
      ),
  };

  readonly buyers = {
    create: (body: Body<'create_buyer'>, options?: CallOptions) =>
      this.call(this.api.POST('/buyers', { body, ...init(options) })),
    get: (buyerId: string, options?: CallOptions) =>
      this.call(this.api.GET('/buyers/{buyer_id}', { params: { path: { buyer_id: buyerId } }, ...init(options) })),
    list: (query: Query<'list_buyers'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/buyers', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init(options) }),
        ),
      ),
  };

  /** Stored payment methods (cards in the vault). */
  readonly paymentMethods = {
    create: (body: Body<'create_payment_method'>, options?: CallOptions) =>
      this.call(this.api.POST('/payment-methods', { body, ...init(options) })),
    get: (paymentMethodId: string, options?: CallOptions) =>
      this.call(
        this.api.GET('/payment-methods/{payment_method_id}', {
          params: { path: { payment_method_id: paymentMethodId } },
          ...init(options),
        }),
      ),
    list: (query: Query<'list_payment_methods'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/payment-methods', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            ...init(options),
          }),
        ),
      ),
    delete: (paymentMethodId: string, options?: CallOptions) =>
      this.call(
        this.api.DELETE('/payment-methods/{payment_method_id}', {
          params: { path: { payment_method_id: paymentMethodId } },
          ...init(options),
        }),
      ),
  };

  readonly giftCards = {
    /** Balances of gift cards by number and PIN (nothing is stored). */
    balances: (body: Body<'list_gift_card_balances'>, options?: CallOptions) =>
      this.call(this.api.POST('/gift-cards/balances', { body, ...init(options) })),
    /** Stores a gift card for a buyer. */
    create: (body: Body<'create_gift_card'>, options?: CallOptions) =>
      this.call(this.api.POST('/gift-cards', { body, ...init(options) })),
    list: (query: Query<'list_gift_cards'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/gift-cards', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            ...init(options),
          }),
        ),
      ),
  };

  readonly webhookSubscriptions = {
    create: (body: Body<'create_webhook_subscription'>, options?: CallOptions) =>
      this.call(this.api.POST('/webhook-subscriptions', { body, ...init(options) })),
    get: (subscriptionId: string, options?: CallOptions) =>
      this.call(
        this.api.GET('/webhook-subscriptions/{subscription_id}', {
          params: { path: { subscription_id: subscriptionId } },
          ...init(options),
        }),
      ),
    list: (query: Query<'list_webhook_subscriptions'> = {}, options?: CallOptions) =>
      this.list((cursor) =>
        this.call(
          this.api.GET('/webhook-subscriptions', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            ...init(options),
          }),
        ),
      ),
    delete: (subscriptionId: string, options?: CallOptions) =>
      this.call(
        this.api.DELETE('/webhook-subscriptions/{subscription_id}', {
          params: { path: { subscription_id: subscriptionId } },
          ...init(options),
        }),
      ),
    /** A new signing secret (answered once): deliveries are signed by every active secret. */
    createSecret: (subscriptionId: string, options?: CallOptions) =>
      this.call(
        this.api.POST('/webhook-subscriptions/{subscription_id}/secrets', {
          params: { path: { subscription_id: subscriptionId } },
          ...init(options),
        }),
      ),
  };

  /** Receiving webhooks: `verify(headers, rawBody, secrets)` (no call to the service). */
  readonly webhooks = {
    verify: (
      headers: WebhookHeaders,
      rawBody: string | Uint8Array,
      secrets: string | readonly string[],
      options?: WebhookVerifyOptions,
    ): WebhookVerification => verifyWebhook(headers, rawBody, secrets, options),
  };

  /** The answer's body, or a `SwitchyardApiError`. */
  async call<T>(answer: Promise<Answer<T>>): Promise<T> {
    const { data, error, response } = await answer;
    if (!response.ok) throw SwitchyardApiError.from(response, error);
    return data as T;
  }

  private list<P extends Page<unknown>>(
    fetchPage: (cursor: string | undefined) => Promise<P>,
  ): AsyncGenerator<Item<P>, void, undefined> {
    return paginate(fetchPage as (cursor: string | undefined) => Promise<Page<Item<P>>>);
  }
}

function init(options: CallOptions | undefined): { headers?: Record<string, string>; signal?: AbortSignal } {
  if (!options) return {};
  const headers: Record<string, string> = {};
  if (options.merchantAccountId !== undefined) headers[MERCHANT_ACCOUNT_HEADER] = options.merchantAccountId;
  if (options.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER] = options.idempotencyKey;
  return { headers, ...(options.signal ? { signal: options.signal } : {}) };
}

/**
 * Every request, typed resource or `client.api`: a token with the operation's scopes, the client's merchant account
 * unless the call named one, and an `Idempotency-Key` on writes that honour it (so they can be retried safely).
 */
function authenticate(tokens: TokenCache, options: SwitchyardClientOptions): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      const facts = operationFacts[`${request.method} ${schemaPath}`];
      const scopes = options.scopes ?? (facts?.scopes[0] !== undefined ? [facts.scopes[0]] : ['*.read', '*.write']);
      request.headers.set('authorization', `Bearer ${tokens.token(scopes)}`);
      if (options.merchantAccountId !== undefined && !request.headers.has(MERCHANT_ACCOUNT_HEADER)) {
        request.headers.set(MERCHANT_ACCOUNT_HEADER, options.merchantAccountId);
      }
      if (facts?.idempotencyKey && !request.headers.has(IDEMPOTENCY_KEY_HEADER))
        request.headers.set(IDEMPOTENCY_KEY_HEADER, randomUUID());
      return request;
    },
  };
}
