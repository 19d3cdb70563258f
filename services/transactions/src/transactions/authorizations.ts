/**
 * The authorization flow: `POST /transactions` (card → vault first, flow rules, the route, the 3-D Secure plan),
 * 3-D Secure (its directory-server steps in `three-d-secure.ts`), the attempts along the route with failover, and
 * the pause for a challenge or a redirect: the buyer's return and the hold window that ends an abandoned one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { issuerMandatesAuthentication } from '@switchyard/bin-data';
import { ApiError } from '@switchyard/api';
import { countAuthorization } from '@switchyard/metrics';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  type AuthorizationResult as ConnectorAuthorizationResult,
  type CapabilityRefusal,
  type PaymentInstrument,
  type ThreeDSecureData,
  type ThreeDSecureDirectory,
  type ProviderResponse,
} from '@switchyard/connectors';
import type {
  BuyerReturnRequest,
  BuyerReturnResult,
  EmbedBuyerPin,
  TransactionAction,
  Transaction as WireTransaction,
  TransactionCreateInput,
  TransactionCreateRequest,
} from '@switchyard/contracts';
import type { PaymentServiceConnection, PaymentServices } from '../payment-services/payment-services.slice';
import type { TransactionsContext } from '../transactions-context';
import { Instruments, takesNetworkTokens, type Instrument, type InstrumentCard } from './instruments';
import type { VaultPort } from '../vault-port';
import type { FlowDecision } from '../flow-rules/card-transaction-flow';
import type { FlowRules } from '../flow-rules/flow-rules.slice';
import { GiftCardPayments, type GiftCardSource, type PlannedGiftCards } from './gift-card-payments';
import {
  flowActionRecords,
  isFailoverCandidate,
  noFlowDecision,
  planThreeDSecure,
  type ThreeDSecurePlan,
} from './authorization-policy';
import { KeyedQueue } from '@switchyard/service';
import { toAuthorizationResult } from './provider-answers';
import type { ProviderConnectors } from './provider-connectors';
import { SecurityCodeForgetting } from './security-code-forgetting';
import { SecurityCodeShelf } from './security-code-shelf';
import { ThreeDSecureAuthenticator } from './three-d-secure';
import { nextConnection, paymentMethodAmount, type Transaction } from './transaction';
import type { TransactionDetails } from './transaction-wire';
import { abandonedRequestAfterMs, type TransactionStore } from './transaction-store';
import { vaultCardUseOf } from './transaction-upcasters';

/**
 * How far a create request got: whether its transaction was created, the card vaulted for it (if any), and the
 * alias of its security code, forgotten unless the request paused for the buyer (a challenge keeps it).
 */
interface AuthorizeProgress {
  created: boolean;
  cardId: string | null;
  securityCode: string | null;
  paused: boolean;
}

/**
 * What the Idempotency-Key fingerprint is taken of: the body as the client sent it, the card data handed to the vault
 * by the gateway standing in as the vault's digest of it, and each gift card handed to the gift cards service as its
 * digest (never the card or one-off card ids minted for this very request).
 */
function fingerprinted(request: TransactionCreateRequest): unknown {
  const handOver = request.card_hand_over;
  const giftCards = request.gift_card_hand_over;
  const body = giftCards?.some(Boolean)
    ? {
        ...request.body,
        gift_cards: request.body.gift_cards?.map((item, index) => {
          const given = giftCards[index];
          return given ? { gift_card_digest: given.digest, amount: item.amount } : item;
        }),
      }
    : request.body;
  if (!handOver || !body.payment_method) return body;
  return { ...body, payment_method: { ...body.payment_method, card_data_digest: handOver.digest } };
}

/** What the transaction flow asks of the flow rules (the `FlowRules` slice). */
export type FlowRuleDecisions = Pick<FlowRules, 'decide'>;

export interface AuthorizationSettings {
  /** ISSUER_MANDATED_3DS: EEA and UK issuers get 3-D Secure even when a skip rule matched. */
  readonly issuerMandatedThreeDSecure: boolean;
  /** How long a create request may hold failure notifications (a challenge or a redirect) before it is completed. */
  readonly holdWindowMs: number;
  /** Keys the buyer-return tokens. */
  readonly returnTokenKey: Buffer;
  /** GIFT_CARD_RECOVERY_AFTER_MS: how long a split payment may stay unfinished before it is rolled back. */
  readonly giftCardRecoveryAfterMs: number;
  /** How long a request waits for the gift cards service's answer (`GiftCardPaymentSettings.outcomeTimeoutMs`). */
  readonly giftCardOutcomeTimeoutMs?: number;
  /**
   * Refuse a card given by number that the gateway did not hand to the vault (a 400 `card_data_not_handed_over`):
   * the distributed runtime's transactions process, outside the card data environment, never takes card data.
   */
  readonly cardDataByHandOverOnly?: boolean;
}

/** What an attempt pays with: a vaulted card (by id: each attempt gets fresh aliases of it), a token, a redirect. */
type AttemptInstrument =
  | Exclude<PaymentInstrument, { readonly type: 'card' }>
  | { readonly type: 'vaulted-card'; readonly card: InstrumentCard };

interface AttemptInput {
  readonly instrument: AttemptInstrument;
  readonly billingPostalCode?: string | undefined;
  readonly threeDSecure?: ThreeDSecureData;
  readonly store: boolean;
  /** A network token's card, for a connection of the route that does not take network tokens. */
  readonly fallbackCard?: InstrumentCard | undefined;
  /**
   * The create request ends with the provider's answer (no gift card left to redeem after it): its completion, for
   * this reason, goes in the answer's append (one commit), and the attempt ends 'completed'.
   */
  readonly completion?: 'responded' | 'buyer_returned';
  /** Told right before the authorization goes to a provider (from then on the money may move). */
  readonly onProviderCall?: () => void;
}

/** How the attempts ended: the buyer is away; done; done with the create request's completion recorded. */
type AttemptEnd = 'paused' | 'done' | 'completed';

/** What the authorization flow needs besides the shared plumbing (the transactions slice's dependencies hold these). */
export interface AuthorizationDependencies {
  readonly paymentServices: PaymentServices;
  readonly flowRules: FlowRuleDecisions;
  /**
   * The 3-D Secure directory server of a merchant account (its calls through the vault's forwarder); null: 3-D
   * Secure cannot run (recorded as a setup error).
   */
  readonly directory: ((merchantAccountId: string) => ThreeDSecureDirectory) | null;
  readonly settings: AuthorizationSettings;
  /** The vault: cards, stored payment methods, buyers, checkout sessions, network tokens, Paze (`VaultPort`). */
  readonly vault: VaultPort;
  readonly connectors: ProviderConnectors;
  /** Stored gift cards' numbers and PINs (the gift cards slice); null: only cards given by number can pay. */
  readonly giftCardCredentials: GiftCardSource | null;
  /** Told of work left for a timer's next round (a gift card roll-back the provider could not take yet). */
  readonly onBackgroundError?: (error: unknown) => void;
  /** Whether a merchant account exists (identity's); null: not checked (a service without identity, in tests). */
  readonly merchantAccounts?: { exists(merchantAccountId: string): Promise<boolean> } | null;
}

export class Authorizations {
  /** One buyer return at a time per transaction: a double submit must not authorize twice. */
  private readonly returns = new KeyedQueue();
  private readonly flowRules: FlowRuleDecisions;
  private readonly authenticator: ThreeDSecureAuthenticator;
  private readonly settings: AuthorizationSettings;
  private readonly securityCodes: SecurityCodeShelf;
  /** Security codes' aliases to forget once their authorizations are done, a moment's together. */
  readonly forgetting: SecurityCodeForgetting;
  private readonly paymentServices: PaymentServices;
  private readonly vault: VaultPort;
  private readonly connectors: ProviderConnectors;
  private readonly instruments: Instruments;
  private readonly merchantAccounts: AuthorizationDependencies['merchantAccounts'];
  private readonly onBackgroundError: (error: unknown) => void;
  readonly giftCards: GiftCardPayments;

  constructor(
    private readonly context: TransactionsContext,
    private readonly store: TransactionStore,
    dependencies: AuthorizationDependencies,
  ) {
    this.paymentServices = dependencies.paymentServices;
    this.flowRules = dependencies.flowRules;
    this.authenticator = new ThreeDSecureAuthenticator(store, dependencies.directory, {
      returnUrl: (id) => this.returnUrl(id),
      holdExpiry: () => this.holdExpiry(),
    });
    this.settings = dependencies.settings;
    this.securityCodes = new SecurityCodeShelf(dependencies.settings.holdWindowMs, context.now);
    this.vault = dependencies.vault;
    this.connectors = dependencies.connectors;
    this.merchantAccounts = dependencies.merchantAccounts ?? null;
    this.onBackgroundError = dependencies.onBackgroundError ?? (() => undefined);
    this.forgetting = new SecurityCodeForgetting(dependencies.vault, this.onBackgroundError);
    this.instruments = new Instruments({
      vault: dependencies.vault,
      cardDataByHandOverOnly: dependencies.settings.cardDataByHandOverOnly ?? false,
      activeConnections: (merchantAccountId) => dependencies.paymentServices.activeConnections(merchantAccountId),
    });
    this.giftCards = new GiftCardPayments(context, store, {
      paymentServices: dependencies.paymentServices,
      connectors: dependencies.connectors,
      credentialSource: dependencies.giftCardCredentials,
      settings: {
        recoveryAfterMs: dependencies.settings.giftCardRecoveryAfterMs,
        ...(dependencies.settings.giftCardOutcomeTimeoutMs !== undefined
          ? { outcomeTimeoutMs: dependencies.settings.giftCardOutcomeTimeoutMs }
          : {}),
      },
      ...(dependencies.onBackgroundError ? { onRollBackPending: dependencies.onBackgroundError } : {}),
    });
  }

  async create(request: TransactionCreateRequest): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId } = request;
    // The card vaulted for this request (by the gateway's hand-over, or here from a card given by number): shredded
    // unless a transaction was created with it (a refusal, a replay, a conflict).
    const progress: AuthorizeProgress = {
      created: false,
      cardId: request.card_hand_over?.card_id ?? null,
      securityCode: request.card_hand_over?.security_code_alias ?? null,
      paused: false,
    };
    try {
      // Before the key is claimed: the answer may change once the account is created.
      if (this.merchantAccounts && !(await this.merchantAccounts.exists(merchantAccountId))) {
        throw ApiError.notFound(`Merchant account ${merchantAccountId} does not exist`);
      }
      return await this.store.idempotent(
        merchantAccountId,
        'transactions.create',
        request.idempotency_key,
        fingerprinted(request),
        () => this.authorize(request, progress),
        (bound) => this.store.renderBound(merchantAccountId, bound.transaction_id),
      );
    } finally {
      // A removal that fails leaves the card to the vault (it is not this request's answer).
      if (!progress.created && progress.cardId)
        await this.vault.removeCards([{ merchantAccountId, id: progress.cardId }]).catch(this.onBackgroundError);
      // So are the gift cards the gateway handed to the gift cards service for it.
      if (!progress.created && request.gift_card_hand_over)
        await this.giftCards
          .forgetHandedOver(merchantAccountId, request.gift_card_hand_over)
          .catch(this.onBackgroundError);
      // PCI DSS: a security code is kept until the authorization, not after (a challenge keeps it until the return).
      // Not waited for: the answer does not depend on it (an alias the vault did not hear about expires on its own).
      if (!progress.paused && progress.securityCode) this.forgetting.forget(merchantAccountId, progress.securityCode);
    }
  }

  /**
   * Set-up (instrument, flow rules, route, 3-D Secure plan), then one command creates the transaction with all of
   * it; then 3-D Secure, then the attempts along the route. A challenge or a redirect method pauses the create:
   * failure notifications stay held until the buyer returns or the hold window ends (spec, Events rule 2).
   */
  private async authorize(request: TransactionCreateRequest, progress: AuthorizeProgress): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, body } = request;
    const buyer = await this.buyerNamed(merchantAccountId, body, '/buyer_id');
    // An embed token's call uses the pinned buyer's stored instruments only (issue 22, item 2).
    const owner =
      request.embed_buyer === undefined
        ? { embed: false, buyerId: buyer?.id ?? null }
        : { embed: true, buyerId: await this.pinnedBuyerId(merchantAccountId, request.embed_buyer) };
    const giftCards = await this.giftCards.plan(
      merchantAccountId,
      body,
      request.embed_buyer,
      request.gift_card_hand_over,
    );
    if (!body.payment_method) return this.payWithGiftCardsOnly(request, giftCards as PlannedGiftCards, progress);
    const paymentMethod = body.payment_method;
    const id = this.context.newId();
    const instrument = await this.instruments.resolve(merchantAccountId, paymentMethod, {
      transactionId: id,
      buyerId: buyer?.id ?? null,
      currency: body.currency,
      owner,
      handOver: request.card_hand_over ?? null,
    });
    // Refused before the transaction existed (no route, a capability off): the card just vaulted goes too (`create`).
    if (instrument.type === 'pan' && instrument.summary.id) progress.cardId = instrument.summary.id;
    if (instrument.card?.securityCode) progress.securityCode = instrument.card.securityCode;
    return this.authorizeInstrument(id, request, instrument, giftCards, progress, buyer?.id ?? null);
  }

  /**
   * The buyer a request (or an embed token's pin) names, as the vault resolves it (a 400 for an unknown one); null
   * when it names none, without asking the vault (a call over RPC in the distributed runtime).
   */
  private async buyerNamed(
    merchantAccountId: string,
    ref: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null },
    pointer: string,
  ): Promise<{ readonly id: string } | null> {
    const named = { buyer_id: ref.buyer_id ?? null, buyer_external_identifier: ref.buyer_external_identifier ?? null };
    if (named.buyer_id === null && named.buyer_external_identifier === null) return null;
    return this.vault.resolveBuyer(merchantAccountId, named, pointer);
  }

  /** The id of the buyer an embed token pins; null when it pins none, or no such buyer exists. */
  private async pinnedBuyerId(merchantAccountId: string, pin: EmbedBuyerPin): Promise<string | null> {
    if (pin === null) return null;
    try {
      return (await this.buyerNamed(merchantAccountId, pin, '/buyer_id'))?.id ?? null;
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return null;
      throw error;
    }
  }

  private async authorizeInstrument(
    id: string,
    request: TransactionCreateRequest,
    instrument: Instrument,
    giftCards: PlannedGiftCards | null,
    progress: AuthorizeProgress,
    buyerId: string | null,
  ): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, body } = request;
    const paymentMethod = body.payment_method as NonNullable<TransactionCreateInput['payment_method']>;
    // Decided on the vault's card summary: the number is only for the card-bearing calls below.
    const binInfo = instrument.cardBin?.info ?? null;
    const flow = instrument.cardBin
      ? this.flowRules.decide(merchantAccountId, {
          amount: body.amount,
          currency: body.currency,
          country: body.country ?? null,
          cardNumberPrefix: instrument.cardBin.prefix,
          cardScheme: instrument.summary.scheme ?? binInfo?.scheme ?? null,
          cardType: binInfo?.cardType ?? null,
          metadata: body.metadata ?? {},
          merchantInitiated: body.merchant_initiated,
        })
      : noFlowDecision;
    const route = this.route(
      merchantAccountId,
      body,
      instrument.summary.method === 'paze' ? 'card' : instrument.summary.method,
      flow,
      instrument.connectionFilter,
    );
    const first = route[0] as PaymentServiceConnection;
    if (instrument.storedNetworkToken && takesNetworkTokens(first)) {
      // A stored card with an active network token: the connection gets the token and a fresh cryptogram instead.
      const token = await instrument.storedNetworkToken(body.merchant_initiated ?? false);
      if (token) {
        instrument.type = 'network_token';
        instrument.networkToken = token;
      }
    }
    if (body.intent === 'authorize' && !first.effectiveCapabilities.delayedCapture) {
      throw ApiError.badRequest(
        `Payment service ${first.id} cannot capture later (delayed capture is off): send intent "capture"`,
        [
          {
            location: 'body',
            pointer: '/intent',
            message: 'delayed capture is off for this payment service',
            type: 'capability_disabled',
          },
        ],
      );
    }
    const threeDSecure = instrument.cardBin
      ? planThreeDSecure({
          connectionEnabled: first.threeDSecureEnabled,
          flow,
          issuerMandate: binInfo ? issuerMandatesAuthentication(binInfo) : null,
          issuerMandateEnabled: this.settings.issuerMandatedThreeDSecure,
          externalData: Boolean(body.three_d_secure_data),
        })
      : null;
    const summaryOf = (c: PaymentServiceConnection) => ({
      id: c.id,
      definitionId: c.paymentServiceDefinitionId,
      method: c.method,
      displayName: c.displayName,
    });
    const redirectUrl = paymentMethod.redirect_url ?? null;
    const details: TransactionDetails = {
      ...(await this.commonDetails(merchantAccountId, body, giftCards)),
      paymentMethod: {
        ...instrument.summary,
        cardType: binInfo?.cardType ?? null,
        issuerName: binInfo?.issuerName ?? null,
      },
      instrumentType: instrument.type,
      ...(instrument.checkoutSessionId ? { checkoutSessionId: instrument.checkoutSessionId } : {}),
      paymentService: summaryOf(first),
      paymentServices: Object.fromEntries(route.map((c) => [c.id, summaryOf(c)])),
      redirectUrl,
    };
    this.store.bindRequest({ transaction_id: id });
    await this.store.commandCreating(id, {
      type: 'CreateTransaction',
      data: {
        transactionId: id,
        merchantAccountId,
        paymentServiceId: first.id,
        route: route.map((c) => c.id),
        flowActions: flowActionRecords(flow, threeDSecure, Boolean(body.payment_service_id)),
        intent: body.intent,
        amount: body.amount,
        currency: body.currency,
        isAmountEstimated: body.is_amount_estimated,
        ...(body.external_identifier ? { externalIdentifier: body.external_identifier } : {}),
        ...(giftCards ? { giftCards: giftCards.plan } : {}),
        details: details as Record<string, unknown>,
        vaultCard: vaultCardUseOf(details),
      },
    });
    progress.created = true;
    if (body.store && instrument.type === 'pan' && instrument.summary.id) {
      // Recorded before the provider is asked to vault the card, so that its notification always finds the method.
      const card = await this.vault.findCard(merchantAccountId, instrument.summary.id);
      if (card) {
        await this.vault.recordStoreRequested(merchantAccountId, {
          card,
          transactionId: id,
          paymentServiceId: first.id,
          buyerId,
          externalIdentifier: instrument.summary.externalIdentifier ?? null,
        });
      }
    }

    let paused = false;
    let completed = false;
    let providerAsked = false;
    try {
      const ended = await this.proceed(id, request, instrument, flow, threeDSecure, binInfo?.scheme ?? null, {
        completion: giftCards ? null : 'responded',
        onProviderCall: () => {
          providerAsked = true;
        },
      });
      paused = ended === 'paused';
      completed = ended === 'completed';
      // The gift cards are redeemed once the payment method is authorized (after the buyer's return when paused).
      if (giftCards && !paused) await this.giftCards.settle(id);
    } catch (error) {
      if (!providerAsked) await this.failBeforeProviderCall(id);
      throw error;
    } finally {
      progress.paused = paused;
      // Held failure notifications apply now (spec, Events rule 2) — unless the buyer still has to come back.
      if (!paused && !completed)
        await this.store.record(id, { type: 'CompleteCreateRequest', data: { reason: 'responded' } });
    }
    // Rendered once the request is complete: a held failure has been applied by then.
    return this.store.render(merchantAccountId, id);
  }

  /**
   * A create request that failed after its transaction was recorded and before the authorization went to a provider
   * (the vault lost while it took the card or issued its aliases, a 3-D Secure lookup that broke off): nothing can
   * have been charged, so the payment is failed now — its retries and webhooks say so at once, instead of it staying
   * `processing` until the hold timer and reconciliation settle it. That record failing (the store down) leaves it
   * to them, as before. True when the payment is failed now.
   */
  private async failBeforeProviderCall(id: string): Promise<boolean> {
    try {
      if ((await this.store.state(id)).status !== 'processing') return false;
      await this.store.record(id, {
        type: 'RecordAuthorizationResult',
        data: {
          source: 'create_request',
          result: {
            outcome: 'failed',
            error: {
              errorCode: 'internal_error',
              rawResponseDescription: 'not sent to the payment service: the payment failed before it could be',
            },
          },
        },
      });
      return true;
    } catch (error) {
      this.onBackgroundError(error);
      return false;
    }
  }

  /** A payment by gift cards alone: no payment method, no routing, no 3-D Secure. */
  private async payWithGiftCardsOnly(
    request: TransactionCreateRequest,
    giftCards: PlannedGiftCards,
    progress: AuthorizeProgress,
  ): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, body } = request;
    const id = this.context.newId();
    this.store.bindRequest({ transaction_id: id });
    await this.store.commandCreating(id, {
      type: 'CreateTransaction',
      data: {
        transactionId: id,
        merchantAccountId,
        // The gift card service is the only connection; `payment_service` stays null on the wire.
        paymentServiceId: giftCards.service.id,
        route: [giftCards.service.id],
        flowActions: [],
        intent: body.intent,
        amount: body.amount,
        currency: body.currency,
        isAmountEstimated: body.is_amount_estimated,
        ...(body.external_identifier ? { externalIdentifier: body.external_identifier } : {}),
        giftCards: giftCards.plan,
        details: {
          ...(await this.commonDetails(merchantAccountId, body, giftCards)),
          instrumentType: 'gift_card',
        } as Record<string, unknown>,
        vaultCard: null,
      },
    });
    progress.created = true;
    try {
      await this.giftCards.settle(id);
    } finally {
      await this.store.record(id, { type: 'CompleteCreateRequest', data: { reason: 'responded' } });
    }
    return this.store.render(merchantAccountId, id);
  }

  /** What every transaction record shows of its request beyond the payment method. */
  private async commonDetails(
    merchantAccountId: string,
    body: TransactionCreateInput,
    giftCards: PlannedGiftCards | null,
  ): Promise<TransactionDetails> {
    const named = await this.buyerNamed(merchantAccountId, body, '/buyer_id');
    const stored = named
      ? ((await this.vault.buyerWire(merchantAccountId, named.id)) as {
          display_name?: string | null;
          external_identifier?: string | null;
          billing_details?: unknown;
          account_number?: string | null;
        } | null)
      : null;
    return {
      country: body.country ?? null,
      buyer: body.buyer
        ? {
            id: null,
            display_name: body.buyer.display_name ?? null,
            external_identifier: body.buyer.external_identifier ?? null,
            billing_details: body.buyer.billing_details ?? null,
            account_number: body.buyer.account_number ?? null,
          }
        : named
          ? {
              id: named.id,
              display_name: stored?.display_name ?? null,
              external_identifier: stored?.external_identifier ?? null,
              billing_details: stored?.billing_details ?? null,
              account_number: stored?.account_number ?? null,
            }
          : body.buyer_id
            ? {
                id: body.buyer_id,
                display_name: null,
                external_identifier: body.buyer_external_identifier ?? null,
                billing_details: null,
                account_number: null,
              }
            : null,
      cartItems: body.cart_items ?? null,
      metadata: body.metadata ?? null,
      paymentSource: body.payment_source ?? (body.merchant_initiated ? 'recurring' : 'ecommerce'),
      merchantInitiated: body.merchant_initiated,
      isSubsequentPayment: body.is_subsequent_payment,
      store: body.store,
      integrationClient: body.integration_client ?? null,
      accountFundingTransaction: body.account_funding_transaction ?? false,
      ...(giftCards
        ? {
            giftCardService: {
              id: giftCards.service.id,
              definitionId: giftCards.service.paymentServiceDefinitionId,
              method: giftCards.service.method,
              displayName: giftCards.service.displayName,
            },
          }
        : {}),
    };
  }

  /** After the transaction exists: decline early, or 3-D Secure then the attempts; 'paused' while the buyer is away. */
  private async proceed(
    id: string,
    request: TransactionCreateRequest,
    instrument: Instrument,
    flow: FlowDecision,
    threeDSecure: ThreeDSecurePlan | null,
    binScheme: string | null,
    options: { readonly completion: 'responded' | null; readonly onProviderCall: () => void },
  ): Promise<AttemptEnd> {
    const { body } = request;
    if (flow.declineEarly) {
      await this.store.record(id, {
        type: 'RecordAuthorizationResult',
        data: {
          source: 'create_request',
          result: {
            outcome: 'declined',
            error: {
              errorCode: 'flow_decline',
              rawResponseDescription: `declined by flow rule ${flow.declineEarly.ruleId}`,
            },
          },
        },
      });
      return 'done';
    }
    const attempt: AttemptInput = {
      instrument: instrument.networkToken
        ? { type: 'network-token', networkToken: instrument.networkToken }
        : instrument.card
          ? { type: 'vaulted-card', card: instrument.card }
          : {
              type: 'redirect',
              redirect: {
                method: instrument.summary.method,
                returnUrl: this.returnUrl(id),
                ...(body.country ? { country: body.country } : {}),
              },
            },
      fallbackCard: instrument.networkToken && instrument.card ? instrument.card : undefined,
      billingPostalCode: body.buyer?.billing_details?.address?.postal_code ?? undefined,
      store: body.store,
    };
    let threeDSecureData: ThreeDSecureData | undefined;
    if (body.three_d_secure_data) {
      threeDSecureData = await this.authenticator.recordExternalThreeDSecure(id, body.three_d_secure_data);
    } else if (threeDSecure?.run && instrument.card) {
      const card = instrument.card;
      const outcome = await this.authenticator.authenticate(
        id,
        request,
        // The directory gets aliases of the number (no security code), swapped back by the vault's forwarder.
        async () => {
          const directoryCard = { id: card.id, securityCode: null, ...(card.taken ? { taken: card.taken } : {}) };
          const aliases = await this.cardAliases(request.merchant_account_id, directoryCard, id);
          return { number: aliases.number, expirationDate: aliases.expirationDate };
        },
        instrument.summary.scheme ?? binScheme,
        Boolean(body.payment_method?.redirect_url),
      );
      if (outcome === 'challenge') {
        // The vault keeps the security code (this service only its alias) until the buyer is back, at most the window.
        if (
          card.securityCode &&
          (await this.vault.keepSecurityCode(
            request.merchant_account_id,
            card.securityCode,
            this.settings.holdWindowMs,
          ))
        )
          this.securityCodes.keep(id, card.securityCode);
        return 'paused';
      }
      if (outcome === 'stop') return 'done';
      threeDSecureData = outcome ?? undefined;
    }
    return this.attemptAuthorization(id, {
      ...attempt,
      ...(threeDSecureData ? { threeDSecure: threeDSecureData } : {}),
      ...(options.completion ? { completion: options.completion } : {}),
      onProviderCall: options.onProviderCall,
    });
  }

  /**
   * The connections to try, in order: `payment_service_id` alone (it bypasses routing); else the route-transaction
   * rule's list; else every active connection of the payment method by position. Connections that are gone,
   * inactive, of another method or not taking the currency and country are left out.
   */
  private route(
    merchantAccountId: string,
    body: TransactionCreateInput,
    method: string,
    flow: FlowDecision,
    connectionFilter: (connection: PaymentServiceConnection) => boolean = () => true,
  ): PaymentServiceConnection[] {
    if (body.payment_service_id) {
      const connection = this.paymentServices.connection(merchantAccountId, body.payment_service_id);
      if (!connection?.active) {
        throw ApiError.badRequest('The payment service does not exist or is not active', [
          {
            location: 'body',
            pointer: '/payment_service_id',
            message: 'no active payment service with this id',
            type: 'payment_service_not_found',
          },
        ]);
      }
      if (connection.method === method && !connectionFilter(connection)) {
        throw ApiError.badRequest(`Payment service ${connection.id} cannot take this payment method`, [
          {
            location: 'body',
            pointer: '/payment_service_id',
            message:
              'this payment service cannot take this payment method (Paze: a US acquiring connection with network tokens)',
            type: 'payment_method_not_supported',
          },
        ]);
      }
      if (connection.method !== method) {
        throw ApiError.badRequest(
          `Payment service ${connection.id} takes ${connection.method} payments, not ${method}`,
          [
            {
              location: 'body',
              pointer: '/payment_service_id',
              message: `this payment service does not take ${method}`,
              type: 'payment_method_not_supported',
            },
          ],
        );
      }
      return [connection];
    }
    const usable = (connection: PaymentServiceConnection | undefined): connection is PaymentServiceConnection =>
      connection?.active === true &&
      connection.method === method &&
      connection.acceptedCurrencies.includes(body.currency) &&
      (!body.country || connection.acceptedCountries.includes(body.country)) &&
      connectionFilter(connection);
    if (flow.route) {
      const listed = flow.route.paymentServiceIds
        .map((id) => this.paymentServices.connection(merchantAccountId, id) ?? undefined)
        .filter(usable);
      if (listed.length === 0) {
        throw ApiError.badRequest(
          `None of the payment services of flow rule ${flow.route.ruleId} can take this transaction (all_attempts_skipped)`,
          [
            {
              location: 'body',
              pointer: '/currency',
              message:
                'the matched flow rule routes to no active payment service taking this method, currency and country',
              type: 'all_attempts_skipped',
            },
          ],
        );
      }
      return listed;
    }
    const connections = this.paymentServices.activeConnections(merchantAccountId).filter(usable);
    if (connections.length === 0) {
      throw ApiError.badRequest(
        `No active payment service of this merchant account takes ${method} in ${body.currency}${body.country ? ` in ${body.country}` : ''}`,
        [
          {
            location: 'body',
            pointer: '/currency',
            message: 'no payment service takes this payment method, currency and country',
            type: 'no_payment_service',
          },
        ],
      );
    }
    return connections;
  }

  /**
   * Tries the transaction's current connection, and on a failure the next one may not share (`isFailoverCandidate`)
   * moves along its route, each failed attempt recorded. 'paused': the provider wants the buyer's approval first.
   */
  private async attemptAuthorization(id: string, input: AttemptInput): Promise<AttemptEnd> {
    for (;;) {
      const t = await this.store.state(id);
      if (t.status !== 'processing') return 'done';
      const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
      const chosen: AttemptInstrument =
        input.instrument.type === 'network-token' && input.fallbackCard && connection && !takesNetworkTokens(connection)
          ? { type: 'vaulted-card', card: input.fallbackCard }
          : input.instrument;
      // A card goes to the connector as fresh aliases, swapped back only by the vault's forwarder (its `fetch`).
      const paymentInstrument: PaymentInstrument | null = !connection?.active
        ? null
        : chosen.type === 'vaulted-card'
          ? await this.cardAliases(t.merchantAccountId, chosen.card, id).then(
              (aliases): PaymentInstrument => ({
                type: 'card',
                card: {
                  number: aliases.number,
                  expirationDate: aliases.expirationDate,
                  ...(aliases.securityCode ? { securityCode: aliases.securityCode } : {}),
                },
              }),
            )
          : chosen;
      if (connection?.active && paymentInstrument) input.onProviderCall?.();
      const answer: ConnectorAuthorizationResult | CapabilityRefusal | ProviderResponse =
        connection?.active && paymentInstrument
          ? await this.store.call(() =>
              this.connectors.connectorFor(connection).authorize({
                reference: id,
                amount: paymentMethodAmount(t),
                currency: t.currency,
                paymentInstrument,
                ...(input.billingPostalCode ? { billingPostalCode: input.billingPostalCode } : {}),
                // With gift cards the payment method is captured once they are all redeemed.
                capture: t.intent === 'capture' && !t.giftCards,
                ...(input.threeDSecure ? { threeDSecure: input.threeDSecure } : {}),
                ...(input.store ? { storePaymentMethod: true } : {}),
              }),
            )
          : {
              outcome: 'failed',
              errorCode: 'invalid_service_configuration',
              rawResponseDescription: `payment service ${t.paymentServiceId} was deleted or deactivated`,
            };
      const result = toAuthorizationResult(answer, paymentMethodAmount(t));
      countAuthorization(t.paymentServiceId, result?.outcome ?? 'unknown');
      if (result && isFailoverCandidate(result) && nextConnection(t)) {
        await this.store.record(id, {
          type: 'FailOver',
          data: { paymentServiceId: t.paymentServiceId, kind: result.outcome, error: result.error },
        });
        continue;
      }
      if (result?.outcome === 'buyer_approval_required') {
        await this.store.record(id, {
          type: 'RecordAuthorizationResult',
          data: { source: 'create_request', result: { ...result, reason: 'redirect', expiresAt: this.holdExpiry() } },
        });
        return 'paused';
      }
      if (!result) return 'done';
      await this.store.recordAll(id, [
        { type: 'RecordAuthorizationResult', data: { source: 'create_request', result } },
        ...(input.completion ? [{ type: 'CompleteCreateRequest', data: { reason: input.completion } } as const] : []),
      ]);
      return input.completion ? 'completed' : 'done';
    }
  }

  // ---- the buyer's return ---------------------------------------------------------------------------------

  /** Our return address for the ACS and redirect providers; the token keeps strangers from poking transactions. */
  private returnUrl(id: string): string {
    return `${this.connectors.publicBaseUrl()}/transactions/${id}/buyer-return?token=${this.returnToken(id)}`;
  }

  private returnToken(id: string): string {
    return createHmac('sha256', this.settings.returnTokenKey).update(`buyer-return:${id}`).digest('base64url');
  }

  /**
   * The buyer's browser is back from the ACS or the redirect provider. A held failure applies first (and the
   * payment service is not called); otherwise a finished challenge is read back from the directory server (never
   * from the query string) and the authorization goes ahead. A repeated return changes nothing. When the
   * authorization could not be sent (the vault lost as it issued the card's aliases), the payment is failed and the
   * buyer sent back with it, as a payment failed before its provider call is on create.
   */
  buyerReturn(request: BuyerReturnRequest): Promise<BuyerReturnResult> {
    const expected = Buffer.from(this.returnToken(request.transaction_id));
    const given = Buffer.from(request.token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw ApiError.notFound();
    return this.returns.run(request.transaction_id, async () => {
      const id = request.transaction_id;
      const t = await this.store.state(id);
      if (t.status === 'absent') throw ApiError.notFound();
      if (
        t.createRequestRunning &&
        t.status === 'buyer_approval_pending' &&
        t.notificationHeld.length === 0 &&
        t.approvalReason === 'three_d_secure'
      ) {
        await this.resumeAfterChallenge(t);
      } else if (t.createRequestRunning && (t.status === 'buyer_approval_pending' || t.notificationHeld.length > 0)) {
        await this.store.record(id, { type: 'CompleteCreateRequest', data: { reason: 'buyer_returned' } });
      }
      const view = await this.store.render(t.merchantAccountId, id);
      const redirectUrl =
        (this.store.readModel.find(id)?.details as TransactionDetails | undefined)?.redirectUrl ?? null;
      const location = redirectUrl
        ? withQuery(redirectUrl, { transaction_id: id, transaction_status: view.status })
        : null;
      return { location, transaction_id: id, transaction_status: view.status };
    });
  }

  private async resumeAfterChallenge(t: Transaction): Promise<void> {
    const id = t.id;
    let paused = false;
    let completed = false;
    /** The alias of the security code kept through the challenge: forgotten once the authorization is done. */
    let securityCode: string | null = null;
    let providerAsked = false;
    try {
      const outcome = await this.authenticator
        .applyAuthentication(id, await this.authenticator.directoryResult(t), true)
        .catch(async (error: unknown) => {
          if (!(error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError))
            throw error;
          paused = true; // the directory server is unreachable: the buyer can come back again
          return 'challenge' as const;
        });
      if (outcome === 'challenge') {
        paused = true;
        return;
      }
      if (outcome === 'stop') return;
      const card = this.vaultedCard(t);
      securityCode = card.securityCode;
      const view = this.store.readModel.find(id);
      const postalCode =
        (
          (view?.details as TransactionDetails | undefined)?.buyer?.billing_details as
            | { address?: { postal_code?: string | null } }
            | null
            | undefined
        )?.address?.postal_code ?? undefined;
      const ended = await this.attemptAuthorization(id, {
        instrument: { type: 'vaulted-card', card },
        ...(postalCode ? { billingPostalCode: postalCode } : {}),
        store: (view?.details as TransactionDetails | undefined)?.store ?? false,
        ...(outcome ? { threeDSecure: outcome } : {}),
        ...(t.giftCards ? {} : { completion: 'buyer_returned' as const }),
        onProviderCall: () => {
          providerAsked = true;
        },
      });
      paused = ended === 'paused';
      completed = ended === 'completed';
      if (!paused && t.giftCards) await this.giftCards.settle(id);
    } catch (error) {
      if (providerAsked || !(await this.failBeforeProviderCall(id))) throw error;
      // The payment is failed and the buyer goes back to the merchant: why stays in the log.
      this.onBackgroundError(error);
    } finally {
      if (!paused && securityCode) this.forgetting.forget(t.merchantAccountId, securityCode);
      if (!paused && !completed)
        await this.store.record(id, { type: 'CompleteCreateRequest', data: { reason: 'buyer_returned' } });
    }
  }

  /** The card of a transaction paused for a challenge: its vault id (in the events) and its security code's alias. */
  private vaultedCard(t: Transaction): InstrumentCard {
    const paymentMethodId = (this.store.readModel.find(t.id)?.details as TransactionDetails | undefined)?.paymentMethod
      ?.id;
    if (!paymentMethodId) throw cardGone(t.id);
    return { id: paymentMethodId, securityCode: this.securityCodes.take(t.id) ?? null };
  }

  /**
   * Aliases of a vaulted card (and its security code's, while live) for one card-bearing call: those issued with the
   * card while they have `aliasesLiveForAtLeastMs` left (the provider call fits in it), else fresh ones.
   */
  private async cardAliases(merchantAccountId: string, card: InstrumentCard, transactionId: string) {
    await card.taken;
    if (card.aliases && Date.parse(card.aliases.expiresAt) - this.context.now().getTime() >= aliasesLiveForAtLeastMs)
      return card.aliases;
    const aliases = await this.vault.cardAliases(merchantAccountId, card.id, { securityCode: card.securityCode });
    if (!aliases) throw cardGone(transactionId);
    return aliases;
  }

  private holdExpiry(): string {
    return new Date(this.context.now().getTime() + this.settings.holdWindowMs).toISOString();
  }

  /**
   * The hold window: a create request that never recorded its completion (an abandoned challenge or redirect, a
   * crashed process) is completed with `hold_expired` once the window has passed, so held failures apply and an
   * abandoned approval ends (`incomplete_buyer_approval`). A redirect payment still open at the provider is
   * cancelled there first. Runs on a timer in every transactions process; the decider makes a repeat a no-op.
   */
  async expireHolds(): Promise<number> {
    const now = this.context.now().getTime();
    const before = new Date(now - this.settings.holdWindowMs).toISOString();
    // A create request still running past the Idempotency-Key lease while `processing` (no buyer to wait for) died
    // with its process: completed now, so reconciliation syncs it and its key answers the reconciled transaction.
    const abandoned = new Date(now - Math.min(this.settings.holdWindowMs, abandonedRequestAfterMs)).toISOString();
    const readModel = this.store.readModel;
    const due = new Set([
      ...readModel.expiredCreateHolds(before, 100),
      ...readModel.runningCreateRequests(abandoned, 100),
    ]);
    let expired = 0;
    for (const id of due) {
      const t = await this.store.state(id);
      if (t.status === 'absent' || !t.createRequestRunning) continue;
      if (t.status === 'buyer_approval_pending' && t.approvalReason === 'redirect' && t.paymentServiceTransactionId) {
        const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
        if (connection)
          await this.store.call(() =>
            this.connectors
              .connectorFor(connection)
              .cancel({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '' }),
          );
      }
      const securityCode = this.securityCodes.take(id);
      if (securityCode) this.forgetting.forget(t.merchantAccountId, securityCode);
      await this.store.record(id, { type: 'CompleteCreateRequest', data: { reason: 'hold_expired' } });
      expired += 1;
    }
    if (expired > 0) await this.context.catchUp();
    return expired;
  }

  /** `GET /transactions/{id}/actions`: the flow rules that matched when the transaction was created. */
  actions(merchantAccountId: string, id: string): { items: TransactionAction[] } {
    const view = this.store.owned(merchantAccountId, id);
    return {
      items: view.flowActions.map((a) => ({
        type: 'action',
        id: a.action,
        flow: 'card-transaction',
        rule_id: a.ruleId,
        created_at: view.createdAt,
        outcome: { ...a.outcome },
      })),
    };
  }
}

/**
 * What a card's aliases issued with it must have left to go into a provider call (the forwarder swaps them as it sends
 * the call, so the call's own length does not count); with less, fresh ones are asked for.
 */
const aliasesLiveForAtLeastMs = 10_000;

const cardGone = (transactionId: string): ApiError =>
  ApiError.badGateway(new Error(`the card of transaction ${transactionId} is no longer in the vault`));

/** The URL with these query parameters added (existing ones kept). */
function withQuery(url: string, params: Readonly<Record<string, string>>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return target.toString();
}
