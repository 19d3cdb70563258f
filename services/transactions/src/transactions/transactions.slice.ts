/**
 * Transactions: authorize (card → vault first), capture (multiple, with tracking), void, cancel, sync, refunds,
 * provider notifications and settlement files. Every change is a command decided by the transaction decider on
 * the stream's current state and appended with the revision read (`handleCommand`), so the money rules hold
 * under any concurrency; commands on one transaction are also queued in process so 50 racing requests do not
 * exhaust the conflict retries. Provider calls happen between two commands, never inside one: the first claims
 * (capture and refund amounts are claimed while pending), the second records the answer.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { issuerMandatesAuthentication, type BinData } from '@switchyard/bin-data';
import type Database from 'better-sqlite3';
import { ApiError, pageOf, type Page, type PageQuery } from '@switchyard/api';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  NotificationRejectedError,
  type AuthorizationResult as ConnectorAuthorizationResult,
  type CapabilityRefusal,
  type CardDetails,
  type PaymentInstrument,
  type ThreeDSecureAuthentication,
  type ThreeDSecureData,
  type ThreeDSecureDirectory,
  type ProviderNotification,
  type ProviderResponse,
} from '@switchyard/connectors';
import {
  transactionsPatterns,
  type AuthorizationIncrement,
  type AuthorizationIncrementInput,
  type BuyerReturnRequest,
  type BuyerReturnResult,
  type ThreeDSecureDataInput,
  type TransactionAction,
  type ProviderNotificationRequest,
  type Refund as WireRefund,
  type RefundAllCreateInput,
  type RefundCreateInput,
  type SettlementFileRequest,
  type SettlementFileResult,
  type Transaction as WireTransaction,
  type TransactionCancel,
  type TransactionCapture,
  type TransactionCaptureRequest,
  type TransactionCaptureSummary,
  type TransactionCreateInput,
  type TransactionCreateRequest,
  type TransactionEventItem,
  type TransactionListRequest,
  type TransactionPageRequest,
  type TransactionRequest,
  type TransactionSummary,
  type TransactionUpdateInput,
  type TransactionVoid,
  type TransactionVoidRequest,
} from '@switchyard/contracts';
import { DomainError, asDomainEvent, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { IdempotencyStore, requestFingerprint } from '../idempotency/idempotency-store';
import type { PaymentServiceConnection, PaymentServices } from '../payment-services/payment-services.slice';
import { asApiErrors, type TransactionsContext, type TransactionsSlice } from '../transactions-context';
import type { CardVault } from '../vault/card-vault';
import { KeyedQueue } from './keyed-queue';
import { ProviderConnectors } from './provider-connectors';
import { parseSettlementFile } from './settlement-file';
import type { FlowDecision } from '../flow-rules/card-transaction-flow';
import type { FlowRules } from '../flow-rules/flow-rules.slice';
import { flowActionRecords, isFailoverCandidate, noFlowDecision, planThreeDSecure, threeDsConfigurationFor, type ThreeDSecurePlan } from './authorization-policy';
import { claimedCaptureAmount, nextConnection, transactionStream, type Capture, type ProviderError, type Transaction, type TransactionEvent, type TransactionState } from './transaction';
import { assertIncrementAllowed, captureLimit, decideTransaction, transaction, type AuthorizationResult, type CaptureSettings, type ProviderOutcome, type TransactionCommand } from './transaction.decide';
import { toCaptureSummary, toHistoryItem, toRefund, toTransaction, toTransactionSummary, type TransactionDetails } from './transaction-wire';
import { TransactionsReadModel, type TransactionView } from './transactions.read-model';

/** Codes a late or repeated provider message can meet: the record already says more than the message. */
const staleNotificationCodes = new Set([
  'authorization_already_decided',
  'capture_not_pending',
  'capture_not_found',
  'refund_not_processing',
  'refund_not_found',
  'void_not_found',
  'transaction_declined',
  'transaction_failed',
  'transaction_voided',
  'transaction_refunded',
]);

/** What the transaction flow asks of the flow rules (the `FlowRules` slice). */
export type FlowRuleDecisions = Pick<FlowRules, 'decide'>;

export interface AuthorizationSettings {
  /** ISSUER_MANDATED_3DS: EEA and UK issuers get 3-D Secure even when a skip rule matched. */
  readonly issuerMandatedThreeDSecure: boolean;
  /** How long a create request may hold failure notifications (a challenge or a redirect) before it is completed. */
  readonly holdWindowMs: number;
  /** Keys the buyer-return tokens. */
  readonly returnTokenKey: Buffer;
}

interface Instrument {
  readonly type: 'pan' | 'card_token' | 'redirect';
  readonly card: CardDetails | null;
  readonly summary: NonNullable<TransactionDetails['paymentMethod']>;
}

interface AttemptInput {
  readonly instrument: PaymentInstrument;
  readonly billingPostalCode?: string | undefined;
  readonly threeDSecure?: ThreeDSecureData;
  readonly store: boolean;
}

/**
 * Security codes of transactions paused for a challenge, kept in memory only until the authorization (PCI DSS allows
 * sensitive authentication data until authorization completes; it is never written anywhere). A restart loses them:
 * the authorization then goes without, as any card-on-file charge does.
 */
class SecurityCodeShelf {
  private readonly codes = new Map<string, { readonly code: string; readonly until: number }>();

  constructor(private readonly ttlMs: number, private readonly now: () => Date) {}

  keep(id: string, code: string): void {
    const now = this.now().getTime();
    for (const [key, entry] of this.codes) if (entry.until < now) this.codes.delete(key);
    this.codes.set(id, { code, until: now + this.ttlMs });
  }

  take(id: string): string | undefined {
    const entry = this.codes.get(id);
    this.codes.delete(id);
    return entry && entry.until >= this.now().getTime() ? entry.code : undefined;
  }
}

export interface TransactionsDependencies {
  readonly paymentServices: PaymentServices;
  readonly flowRules: FlowRuleDecisions;
  readonly binData: BinData;
  /** The 3-D Secure directory server; null: 3-D Secure cannot run (recorded as a setup error). */
  readonly directory: ThreeDSecureDirectory | null;
  readonly settings: AuthorizationSettings;
  readonly vault: CardVault;
  readonly connectors: ProviderConnectors;
  /**
   * Keys the request fingerprints kept with Idempotency-Keys. A create request holds a card number: a plain hash of
   * it could be brute-forced from the BIN and the Luhn digit, a keyed one cannot.
   */
  readonly fingerprintKey: Buffer;
}

export class Transactions implements TransactionsSlice {
  readonly readModel: TransactionsReadModel;
  private readonly idempotency: IdempotencyStore;
  private readonly queue = new KeyedQueue();
  /** One buyer return at a time per transaction: a double submit must not authorize twice. */
  private readonly returns = new KeyedQueue();
  private readonly flowRules: FlowRuleDecisions;
  private readonly binData: BinData;
  private readonly directory: ThreeDSecureDirectory | null;
  private readonly settings: AuthorizationSettings;
  private readonly securityCodes: SecurityCodeShelf;
  private readonly paymentServices: PaymentServices;
  private readonly vault: CardVault;
  private readonly connectors: ProviderConnectors;
  private readonly fingerprintKey: Buffer;
  private readonly notificationSeen: Database.Statement<[string, string]>;
  private readonly notificationApplied: Database.Statement<[string, string, string]>;

  constructor(
    private readonly context: TransactionsContext,
    dependencies: TransactionsDependencies,
  ) {
    this.readModel = new TransactionsReadModel(context.db);
    this.idempotency = new IdempotencyStore(context.db, { now: context.now });
    this.paymentServices = dependencies.paymentServices;
    this.flowRules = dependencies.flowRules;
    this.binData = dependencies.binData;
    this.directory = dependencies.directory;
    this.settings = dependencies.settings;
    this.securityCodes = new SecurityCodeShelf(dependencies.settings.holdWindowMs, context.now);
    this.vault = dependencies.vault;
    this.connectors = dependencies.connectors;
    this.fingerprintKey = dependencies.fingerprintKey;
    context.db.exec(`CREATE TABLE IF NOT EXISTS provider_notifications (
      payment_service_id TEXT NOT NULL, event_id TEXT NOT NULL, received_at TEXT NOT NULL, PRIMARY KEY (payment_service_id, event_id))`);
    this.notificationSeen = context.db.prepare('SELECT 1 FROM provider_notifications WHERE payment_service_id = ? AND event_id = ?');
    this.notificationApplied = context.db.prepare('INSERT OR IGNORE INTO provider_notifications (payment_service_id, event_id, received_at) VALUES (?, ?, ?)');
  }

  get projection() {
    return this.readModel.projection;
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  async get(merchantAccountId: string, id: string): Promise<WireTransaction> {
    return toTransaction(this.owned(merchantAccountId, id));
  }

  list(request: TransactionListRequest): Page<TransactionSummary> {
    const { merchant_account_id: merchantAccountId, cursor, limit, ...filters } = request;
    const page = this.readModel.list(merchantAccountId, filters, { limit, ...(cursor ? { cursor } : {}) });
    return { ...page, items: page.items.map(toTransactionSummary) };
  }

  history(request: TransactionPageRequest): Page<TransactionEventItem> {
    this.owned(request.merchant_account_id, request.transaction_id);
    const page = this.readModel.history(request.transaction_id, pageQueryOf(request));
    return { ...page, items: page.items.map(toHistoryItem) };
  }

  captures(request: TransactionPageRequest): Page<TransactionCaptureSummary> {
    const view = this.owned(request.merchant_account_id, request.transaction_id);
    const items = view.state.captures.map((capture) => toCaptureSummary(view, capture));
    return pageOf(items, (capture) => `${capture.created_at}|${capture.id}`, pageQueryOf(request));
  }

  capture(merchantAccountId: string, transactionId: string, captureId: string): TransactionCapture {
    const view = this.owned(merchantAccountId, transactionId);
    const capture = view.state.captures.find((c) => c.id === captureId);
    if (!capture) throw ApiError.notFound();
    return { ...toCaptureSummary(view, capture), transaction: toTransaction(view) };
  }

  refunds(request: TransactionPageRequest): Page<WireRefund> {
    const view = this.owned(request.merchant_account_id, request.transaction_id);
    const items = view.state.refunds.map((refund) => toRefund(view, refund));
    return pageOf(items, (refund) => `${refund.created_at}|${refund.id}`, pageQueryOf(request));
  }

  refund(merchantAccountId: string, transactionId: string, refundId: string): WireRefund {
    const view = this.owned(merchantAccountId, transactionId);
    const refund = view.state.refunds.find((r) => r.id === refundId);
    if (!refund) throw ApiError.notFound();
    return toRefund(view, refund);
  }

  refundById(merchantAccountId: string, refundId: string): WireRefund {
    const owner = this.readModel.refundOwner(refundId);
    if (!owner || owner.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return this.refund(merchantAccountId, owner.transactionId, refundId);
  }

  // ---- authorize ------------------------------------------------------------------------------------------

  create(request: TransactionCreateRequest): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, body } = request;
    return this.idempotent(merchantAccountId, 'transactions.create', request.idempotency_key, body, () => this.authorize(request));
  }

  /**
   * Set-up (instrument, flow rules, route, 3-D Secure plan), then one command creates the transaction with all of
   * it; then 3-D Secure, then the attempts along the route. A challenge or a redirect method pauses the create:
   * failure notifications stay held until the buyer returns or the hold window ends (spec, Events rule 2).
   */
  private async authorize(request: TransactionCreateRequest): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, body } = request;
    const instrument = this.instrumentOf(merchantAccountId, body);
    const binInfo = instrument.card ? this.binData.lookup(instrument.card.number) : null;
    const flow = instrument.card
      ? this.flowRules.decide(merchantAccountId, {
          amount: body.amount,
          currency: body.currency,
          country: body.country ?? null,
          cardNumberPrefix: instrument.card.number.slice(0, 8),
          cardScheme: instrument.summary.scheme ?? binInfo?.scheme ?? null,
          cardType: binInfo?.cardType ?? null,
          metadata: body.metadata ?? {},
          merchantInitiated: body.merchant_initiated,
        })
      : noFlowDecision;
    const route = this.route(merchantAccountId, body, instrument.summary.method, flow);
    const first = route[0] as PaymentServiceConnection;
    if (body.intent === 'authorize' && !first.effectiveCapabilities.delayedCapture) {
      throw ApiError.badRequest(`Payment service ${first.id} cannot capture later (delayed capture is off): send intent "capture"`, [
        { location: 'body', pointer: '/intent', message: 'delayed capture is off for this payment service', type: 'capability_disabled' },
      ]);
    }
    const threeDSecure = instrument.card
      ? planThreeDSecure({
          connectionEnabled: first.threeDSecureEnabled,
          flow,
          issuerMandate: binInfo ? issuerMandatesAuthentication(binInfo) : null,
          issuerMandateEnabled: this.settings.issuerMandatedThreeDSecure,
          externalData: Boolean(body.three_d_secure_data),
        })
      : null;
    const id = this.context.newId();
    const summaryOf = (c: PaymentServiceConnection) => ({ id: c.id, definitionId: c.paymentServiceDefinitionId, method: c.method, displayName: c.displayName });
    const redirectUrl = body.payment_method.redirect_url ?? null;
    const details: TransactionDetails = {
      country: body.country ?? null,
      paymentMethod: { ...instrument.summary, cardType: binInfo?.cardType ?? null, issuerName: binInfo?.issuerName ?? null },
      instrumentType: instrument.type,
      paymentService: summaryOf(first),
      paymentServices: Object.fromEntries(route.map((c) => [c.id, summaryOf(c)])),
      redirectUrl,
      buyer: body.buyer
        ? {
            id: null,
            display_name: body.buyer.display_name ?? null,
            external_identifier: body.buyer.external_identifier ?? null,
            billing_details: body.buyer.billing_details ?? null,
            account_number: body.buyer.account_number ?? null,
          }
        : body.buyer_id
          ? { id: body.buyer_id, display_name: null, external_identifier: body.buyer_external_identifier ?? null, billing_details: null, account_number: null }
          : null,
      cartItems: body.cart_items ?? null,
      metadata: body.metadata ?? null,
      paymentSource: body.payment_source ?? (body.merchant_initiated ? 'recurring' : 'ecommerce'),
      merchantInitiated: body.merchant_initiated,
      isSubsequentPayment: body.is_subsequent_payment,
      store: body.store,
      integrationClient: body.integration_client ?? null,
      accountFundingTransaction: body.account_funding_transaction ?? false,
    };
    await this.command(id, {
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
        details: details as Record<string, unknown>,
      },
    });

    let paused = false;
    try {
      paused = (await this.proceed(id, request, instrument, flow, threeDSecure, binInfo?.scheme ?? null)) === 'paused';
    } finally {
      // Held failure notifications apply now (spec, Events rule 2) — unless the buyer still has to come back.
      if (!paused) await this.record(id, { type: 'CompleteCreateRequest', data: { reason: 'responded' } });
    }
    // Rendered once the request is complete: a held failure has been applied by then.
    return this.render(merchantAccountId, id);
  }

  /** After the transaction exists: decline early, or 3-D Secure then the attempts; 'paused' while the buyer is away. */
  private async proceed(id: string, request: TransactionCreateRequest, instrument: Instrument, flow: FlowDecision, threeDSecure: ThreeDSecurePlan | null, binScheme: string | null): Promise<'paused' | 'done'> {
    const { body } = request;
    if (flow.declineEarly) {
      await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'create_request', result: { outcome: 'declined', error: { errorCode: 'flow_decline', rawResponseDescription: `declined by flow rule ${flow.declineEarly.ruleId}` } } } });
      return 'done';
    }
    const attempt: AttemptInput = {
      instrument: instrument.card ? { type: 'card', card: instrument.card } : { type: 'redirect', redirect: { method: instrument.summary.method, returnUrl: this.returnUrl(id), ...(body.country ? { country: body.country } : {}) } },
      billingPostalCode: body.buyer?.billing_details?.address?.postal_code ?? undefined,
      store: body.store,
    };
    let threeDSecureData: ThreeDSecureData | undefined;
    if (body.three_d_secure_data) {
      threeDSecureData = await this.recordExternalThreeDSecure(id, body.three_d_secure_data);
    } else if (threeDSecure?.run && instrument.card) {
      const outcome = await this.authenticate(id, request, instrument.card, instrument.summary.scheme ?? binScheme, Boolean(body.payment_method.redirect_url));
      if (outcome === 'challenge') {
        if (instrument.card.securityCode) this.securityCodes.keep(id, instrument.card.securityCode);
        return 'paused';
      }
      if (outcome === 'stop') return 'done';
      threeDSecureData = outcome ?? undefined;
    }
    return this.attemptAuthorization(id, { ...attempt, ...(threeDSecureData ? { threeDSecure: threeDSecureData } : {}) });
  }

  /**
   * The connections to try, in order: `payment_service_id` alone (it bypasses routing); else the route-transaction
   * rule's list; else every active connection of the payment method by position. Connections that are gone,
   * inactive, of another method or not taking the currency and country are left out.
   */
  private route(merchantAccountId: string, body: TransactionCreateInput, method: string, flow: FlowDecision): PaymentServiceConnection[] {
    if (body.payment_service_id) {
      const connection = this.paymentServices.connection(merchantAccountId, body.payment_service_id);
      if (!connection || !connection.active) {
        throw ApiError.badRequest('The payment service does not exist or is not active', [
          { location: 'body', pointer: '/payment_service_id', message: 'no active payment service with this id', type: 'payment_service_not_found' },
        ]);
      }
      if (connection.method !== method) {
        throw ApiError.badRequest(`Payment service ${connection.id} takes ${connection.method} payments, not ${method}`, [
          { location: 'body', pointer: '/payment_service_id', message: `this payment service does not take ${method}`, type: 'payment_method_not_supported' },
        ]);
      }
      return [connection];
    }
    const usable = (connection: PaymentServiceConnection | undefined): connection is PaymentServiceConnection =>
      connection !== undefined &&
      connection.active &&
      connection.method === method &&
      connection.acceptedCurrencies.includes(body.currency) &&
      (!body.country || connection.acceptedCountries.includes(body.country));
    if (flow.route) {
      const listed = flow.route.paymentServiceIds.map((id) => this.paymentServices.connection(merchantAccountId, id) ?? undefined).filter(usable);
      if (listed.length === 0) {
        throw ApiError.badRequest(`None of the payment services of flow rule ${flow.route.ruleId} can take this transaction (all_attempts_skipped)`, [
          { location: 'body', pointer: '/currency', message: 'the matched flow rule routes to no active payment service taking this method, currency and country', type: 'all_attempts_skipped' },
        ]);
      }
      return listed;
    }
    const connections = this.paymentServices.activeConnections(merchantAccountId).filter(usable);
    if (connections.length === 0) {
      throw ApiError.badRequest(`No active payment service of this merchant account takes ${method} in ${body.currency}${body.country ? ` in ${body.country}` : ''}`, [
        { location: 'body', pointer: '/currency', message: 'no payment service takes this payment method, currency and country', type: 'no_payment_service' },
      ]);
    }
    return connections;
  }

  /** A card goes to the vault first: from here on only its id, scheme, BIN and last four travel. */
  private instrumentOf(merchantAccountId: string, body: TransactionCreateInput): Instrument {
    const method = body.payment_method;
    if (method.method === 'card') {
      const stored = this.vault.store(merchantAccountId, { number: method.number, expirationDate: method.expiration_date });
      return {
        type: 'pan',
        card: { number: method.number, expirationDate: method.expiration_date, ...(method.security_code ? { securityCode: method.security_code } : {}) },
        summary: { id: stored.id, method: 'card', scheme: stored.scheme, last4: stored.last4, bin: stored.bin, expirationDate: stored.expirationDate, fingerprint: stored.fingerprint, externalIdentifier: method.external_identifier ?? null },
      };
    }
    if (method.method === 'id') {
      const stored = this.vault.find(merchantAccountId, method.id);
      const card = stored && this.vault.reveal(merchantAccountId, method.id);
      if (!stored || !card) {
        throw ApiError.badRequest('The payment method does not exist', [
          { location: 'body', pointer: '/payment_method/id', message: 'no stored payment method with this id', type: 'payment_method_not_found' },
        ]);
      }
      return {
        type: 'card_token',
        card: { number: card.number, expirationDate: card.expirationDate, ...(method.security_code ? { securityCode: method.security_code } : {}) },
        summary: { id: stored.id, method: 'card', scheme: stored.scheme, last4: stored.last4, bin: stored.bin, expirationDate: stored.expirationDate, fingerprint: stored.fingerprint },
      };
    }
    return {
      type: 'redirect',
      card: null,
      summary: { id: null, method: method.method, scheme: null, last4: null, bin: null, expirationDate: null, fingerprint: null, externalIdentifier: method.external_identifier ?? null },
    };
  }

  /**
   * Tries the transaction's current connection, and on a failure the next one may not share (`isFailoverCandidate`)
   * moves along its route, each failed attempt recorded. 'paused': the provider wants the buyer's approval first.
   */
  private async attemptAuthorization(id: string, input: AttemptInput): Promise<'paused' | 'done'> {
    for (;;) {
      const t = await this.state(id);
      if (t.status !== 'processing') return 'done';
      const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
      const answer: ConnectorAuthorizationResult | CapabilityRefusal | ProviderResponse = connection?.active
        ? await this.call(() =>
            this.connectors.connectorFor(connection).authorize({
              reference: id,
              amount: t.amount,
              currency: t.currency,
              paymentInstrument: input.instrument,
              ...(input.billingPostalCode ? { billingPostalCode: input.billingPostalCode } : {}),
              capture: t.intent === 'capture',
              ...(input.threeDSecure ? { threeDSecure: input.threeDSecure } : {}),
              ...(input.store ? { storePaymentMethod: true } : {}),
            }),
          )
        : { outcome: 'failed', errorCode: 'invalid_service_configuration', rawResponseDescription: `payment service ${t.paymentServiceId} was deleted or deactivated` };
      const result = toAuthorizationResult(answer, t.amount);
      if (result && isFailoverCandidate(result) && nextConnection(t)) {
        await this.record(id, { type: 'FailOver', data: { paymentServiceId: t.paymentServiceId, kind: result.outcome, error: result.error } });
        continue;
      }
      if (result?.outcome === 'buyer_approval_required') {
        await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'create_request', result: { ...result, reason: 'redirect', expiresAt: this.holdExpiry() } } });
        return 'paused';
      }
      if (result) await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'create_request', result } });
      return 'done';
    }
  }

  // ---- 3-D Secure -----------------------------------------------------------------------------------------

  /**
   * Authenticates through the scheme's directory server with the merchant account's configuration for the card's
   * scheme and currency. Returns the data to pass to the payment service, null to go on without (setup error, or
   * the directory could not authenticate), 'challenge' when the buyer must be sent to the ACS, 'stop' when the
   * transaction was decided (not authenticated).
   */
  private async authenticate(id: string, request: TransactionCreateRequest, card: CardDetails, scheme: string | null, hasRedirectUrl: boolean): Promise<ThreeDSecureData | null | 'challenge' | 'stop'> {
    const { body } = request;
    const configuration = threeDsConfigurationFor(request.three_ds_configurations ?? [], scheme, body.currency);
    const setupError = (errorDescription: string) =>
      this.record(id, { type: 'RecordThreeDSecure', data: { status: 'setup_error', method: null, source: 'directory', errorDescription } }).then(() => null);
    if (!configuration) return setupError(`the merchant account has no 3-D Secure configuration for ${scheme ?? 'this card scheme'} in ${body.currency}`);
    if (!this.directory) return setupError('no 3-D Secure directory server is configured');
    let authentication: ThreeDSecureAuthentication;
    try {
      authentication = await this.directory.authenticate({
        reference: id,
        amount: body.amount,
        currency: body.currency,
        card: { number: card.number, expirationDate: card.expirationDate },
        merchant: {
          acquirerBin: configuration.merchant_acquirer_bin,
          acquirerMerchantId: configuration.merchant_acquirer_id,
          name: configuration.merchant_name,
          countryCode: configuration.merchant_country_code,
          categoryCode: configuration.merchant_category_code,
          url: configuration.merchant_url,
        },
        returnUrl: this.returnUrl(id),
      });
    } catch (error) {
      if (!(error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError)) throw error;
      await this.record(id, { type: 'RecordThreeDSecure', data: { status: 'error', method: null, source: 'directory', errorDescription: error.message } });
      return null;
    }
    return this.applyAuthentication(id, authentication, hasRedirectUrl);
  }

  /** Records what the directory server said and what it means for the transaction. */
  private async applyAuthentication(id: string, a: ThreeDSecureAuthentication, hasRedirectUrl: boolean): Promise<ThreeDSecureData | null | 'challenge' | 'stop'> {
    const summary = {
      source: 'directory' as const,
      method: a.method,
      version: a.version,
      transactionStatus: a.transactionStatus,
      directoryServerTransactionId: a.directoryServerTransactionId,
      authenticationId: a.authenticationId,
      ...(a.statusReason ? { statusReason: a.statusReason } : {}),
    };
    switch (a.transactionStatus) {
      case 'C': {
        if (!hasRedirectUrl) {
          await this.record(id, { type: 'RecordThreeDSecure', data: { ...summary, status: 'error', errorDescription: 'a challenge is required and the payment method has no redirect_url' } });
          await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'create_request', result: { outcome: 'failed', error: { errorCode: 'missing_redirect_url' } } } });
          return 'stop';
        }
        const t = await this.state(id);
        if (t.status === 'buyer_approval_pending') return 'challenge'; // still waiting: nothing new
        await this.record(id, {
          type: 'RecordAuthorizationResult',
          data: { source: 'create_request', result: { outcome: 'buyer_approval_required', reason: 'three_d_secure', authenticationId: a.authenticationId, ...(a.challengeUrl ? { approvalUrl: a.challengeUrl } : {}), expiresAt: this.holdExpiry() } },
        });
        return 'challenge';
      }
      case 'Y':
      case 'A':
        await this.record(id, { type: 'RecordThreeDSecure', data: { ...summary, status: 'complete', ...(a.eci ? { eci: a.eci } : {}), ...(a.cavv ? { cavv: a.cavv } : {}) } });
        return { version: a.version, eci: a.eci ?? '', cryptogram: a.cavv ?? '', directoryServerTransactionId: a.directoryServerTransactionId };
      case 'N':
      case 'R':
        await this.record(id, { type: 'RecordThreeDSecure', data: { ...summary, status: 'declined', errorDescription: a.transactionStatus === 'N' ? 'the cardholder was not authenticated' : 'the issuer rejected the authentication' } });
        await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'create_request', result: { outcome: 'declined', error: { errorCode: 'failed_buyer_approval', rawResponseCode: a.transactionStatus } } } });
        return 'stop';
      case 'U':
        await this.record(id, { type: 'RecordThreeDSecure', data: { ...summary, status: 'error', errorDescription: 'the issuer could not authenticate the cardholder' } });
        return null;
    }
  }

  private async recordExternalThreeDSecure(id: string, data: ThreeDSecureDataInput): Promise<ThreeDSecureData> {
    const dsTransactionId = 'directory_transaction_id' in data ? data.directory_transaction_id : undefined;
    await this.record(id, {
      type: 'RecordThreeDSecure',
      data: {
        status: 'complete',
        method: null,
        source: 'external',
        version: data.version,
        eci: data.eci,
        cavv: data.cavv,
        directoryResponse: data.directory_response,
        ...(data.authentication_response ? { transactionStatus: data.authentication_response } : {}),
        ...(dsTransactionId ? { directoryServerTransactionId: dsTransactionId } : {}),
      },
    });
    return { version: data.version, eci: data.eci, cryptogram: data.cavv, ...(dsTransactionId ? { directoryServerTransactionId: dsTransactionId } : {}) };
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
   * from the query string) and the authorization goes ahead. A repeated return changes nothing.
   */
  buyerReturn(request: BuyerReturnRequest): Promise<BuyerReturnResult> {
    const expected = Buffer.from(this.returnToken(request.transaction_id));
    const given = Buffer.from(request.token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw ApiError.notFound();
    return this.returns.run(request.transaction_id, async () => {
      const id = request.transaction_id;
      const t = await this.state(id);
      if (t.status === 'absent') throw ApiError.notFound();
      if (t.createRequestRunning && t.status === 'buyer_approval_pending' && t.notificationHeld.length === 0 && t.approvalReason === 'three_d_secure') {
        await this.resumeAfterChallenge(t);
      } else if (t.createRequestRunning && (t.status === 'buyer_approval_pending' || t.notificationHeld.length > 0)) {
        await this.record(id, { type: 'CompleteCreateRequest', data: { reason: 'buyer_returned' } });
      }
      const view = await this.render(t.merchantAccountId, id);
      const redirectUrl = (this.readModel.find(id)?.details as TransactionDetails | undefined)?.redirectUrl ?? null;
      const location = redirectUrl ? withQuery(redirectUrl, { transaction_id: id, transaction_status: view.status }) : null;
      return { location, transaction_id: id, transaction_status: view.status };
    });
  }

  private async resumeAfterChallenge(t: Transaction): Promise<void> {
    const id = t.id;
    let paused = false;
    try {
      const outcome = await this.applyAuthentication(id, await this.directoryResult(t), true).catch(async (error: unknown) => {
        if (!(error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError)) throw error;
        paused = true; // the directory server is unreachable: the buyer can come back again
        return 'challenge' as const;
      });
      if (outcome === 'challenge') {
        paused = true;
        return;
      }
      if (outcome === 'stop') return;
      const card = this.vaultedCard(t);
      const securityCode = this.securityCodes.take(id);
      const view = this.readModel.find(id);
      const postalCode = ((view?.details as TransactionDetails | undefined)?.buyer?.billing_details as { address?: { postal_code?: string | null } } | null | undefined)?.address?.postal_code ?? undefined;
      paused =
        (await this.attemptAuthorization(id, {
          instrument: { type: 'card', card: { ...card, ...(securityCode ? { securityCode } : {}) } },
          ...(postalCode ? { billingPostalCode: postalCode } : {}),
          store: (view?.details as TransactionDetails | undefined)?.store ?? false,
          ...(outcome ? { threeDSecure: outcome } : {}),
        })) === 'paused';
    } finally {
      if (!paused) await this.record(id, { type: 'CompleteCreateRequest', data: { reason: 'buyer_returned' } });
    }
  }

  private directoryResult(t: Transaction): Promise<ThreeDSecureAuthentication> {
    if (!this.directory || !t.pendingAuthenticationId) throw ApiError.badGateway(new Error('no 3-D Secure directory server is configured'));
    return this.directory.result(t.pendingAuthenticationId);
  }

  /** The card of a transaction, from the vault (only its id is in the events). */
  private vaultedCard(t: Transaction): CardDetails {
    const paymentMethodId = (this.readModel.find(t.id)?.details as TransactionDetails | undefined)?.paymentMethod?.id;
    const card = paymentMethodId ? this.vault.reveal(t.merchantAccountId, paymentMethodId) : null;
    if (!card) throw ApiError.badGateway(new Error(`the card of transaction ${t.id} is no longer in the vault`));
    return { number: card.number, expirationDate: card.expirationDate };
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
    const before = new Date(this.context.now().getTime() - this.settings.holdWindowMs).toISOString();
    let expired = 0;
    for (const id of this.readModel.expiredCreateHolds(before, 100)) {
      const t = await this.state(id);
      if (t.status === 'absent' || !t.createRequestRunning) continue;
      if (t.status === 'buyer_approval_pending' && t.approvalReason === 'redirect' && t.paymentServiceTransactionId) {
        const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
        if (connection) await this.call(() => this.connectors.connectorFor(connection).cancel({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '' }));
      }
      this.securityCodes.take(id);
      await this.record(id, { type: 'CompleteCreateRequest', data: { reason: 'hold_expired' } });
      expired += 1;
    }
    if (expired > 0) await this.context.catchUp();
    return expired;
  }

  /** `GET /transactions/{id}/actions`: the flow rules that matched when the transaction was created. */
  actions(merchantAccountId: string, id: string): { items: TransactionAction[] } {
    const view = this.owned(merchantAccountId, id);
    return { items: view.flowActions.map((a) => ({ type: 'action', id: a.action, flow: 'card-transaction', rule_id: a.ruleId, created_at: view.createdAt, outcome: { ...a.outcome } })) };
  }

  // ---- capture, void, cancel, sync ------------------------------------------------------------------------

  captureTransaction(request: TransactionCaptureRequest): Promise<WireTransaction | TransactionCapture> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.idempotent(merchantAccountId, `transactions.capture:${id}`, request.idempotency_key, { body, prefer: request.prefer_capture }, async () => {
      const t = await this.load(merchantAccountId, id);
      const connection = this.connectionOf(t);
      const connector = this.connectors.connectorFor(connection);
      const settings: CaptureSettings = {
        multipleCapturesEnabled: request.settings.multiple_captures_enabled && connector.capabilities.multipleCaptures,
        ...(request.settings.over_capture_amount != null || request.settings.over_capture_percentage != null
          ? {
              overCapture: {
                ...(request.settings.over_capture_amount != null ? { amount: request.settings.over_capture_amount } : {}),
                ...(request.settings.over_capture_percentage != null ? { percentage: request.settings.over_capture_percentage } : {}),
              },
            }
          : {}),
      };
      const captureId = this.context.newId();
      const tracking = (body.tracking ?? []).map((entry) => ({ number: entry.number, carrier: entry.carrier, ...(entry.url ? { url: entry.url } : {}) }));
      const decided = await this.command(id, {
        type: 'CaptureTransaction',
        data: {
          captureId,
          ...(body.amount != null ? { amount: body.amount } : {}),
          ...(body.final != null ? { final: body.final } : {}),
          tracking,
          settings,
          details: { ...(body.external_identifier ? { externalIdentifier: body.external_identifier } : {}), ...(body.cart_items ? { cartItems: body.cart_items } : {}) },
        },
      });
      const after = decided.state as Transaction;
      const capture = after.captures.find((c) => c.id === captureId) as Capture;
      const before = claimedCaptureAmount(after) - capture.amount;
      const forwarded = tracking[0] && connector.capabilities.trackingForwarding ? { tracking: { carrier: tracking[0].carrier, trackingNumber: tracking[0].number } } : {};
      const answer = await this.call(() =>
        connector.capture({
          reference: id,
          providerTransactionId: t.paymentServiceTransactionId ?? '',
          amount: capture.amount,
          currency: t.currency,
          ...(before > 0 ? { previouslyCapturedAmount: before } : {}),
          final: capture.final,
          ...(settings.overCapture ? { maxTotalAmount: captureLimit(after.authorizedAmount, settings) } : {}),
          ...forwarded,
        }),
      );
      const outcome = toOutcome(answer, (answer as { providerCaptureId?: string }).providerCaptureId);
      if (outcome) await this.record(id, { type: 'RecordCaptureResult', data: { captureId, ...outcome } });
      if (!request.prefer_capture) return this.render(merchantAccountId, id);
      // The capture is read from the read model: it must have seen this capture first.
      await this.context.catchUp();
      return this.capture(merchantAccountId, id, captureId);
    });
  }

  voidTransaction(request: TransactionVoidRequest): Promise<WireTransaction | TransactionVoid> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    return this.idempotent(merchantAccountId, `transactions.void:${id}`, request.idempotency_key, { prefer: request.prefer_void }, async () => {
      const t = await this.load(merchantAccountId, id);
      const connector = this.connectors.connectorFor(this.connectionOf(t));
      const voidId = this.context.newId();
      await this.command(id, { type: 'VoidTransaction', data: { voidId } });
      const answer = await this.call(() => connector.void({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '' }));
      const outcome = toOutcome(answer);
      if (outcome) await this.record(id, { type: 'RecordVoidResult', data: { voidId, ...outcome } });
      const transaction = await this.render(merchantAccountId, id);
      if (!request.prefer_void) return transaction;
      return { type: 'transaction-void', status: operationStatus(answer, ['succeeded', 'pending', 'declined', 'failed']), ...codesOf(answer), transaction };
    });
  }

  /**
   * Cancel abandons an authorization that is still pending. The decider is asked first (without appending) so a
   * refused cancel never reaches the provider; the cancel is recorded only when the provider confirms it.
   */
  async cancel(request: TransactionRequest<undefined>): Promise<TransactionCancel> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    const t = await this.load(merchantAccountId, id);
    await asApiErrors(async () => decideTransaction({ type: 'CancelTransaction', data: {}, metadata: { now: this.now() } }, t));
    let answer: ProviderResponse = { outcome: 'succeeded' };
    if (t.paymentServiceTransactionId) {
      const connector = this.connectors.connectorFor(this.connectionOf(t));
      answer = await this.call(() => connector.cancel({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '' }));
    }
    if (answer.outcome === 'succeeded') await this.command(id, { type: 'CancelTransaction', data: {} });
    const transaction = await this.render(merchantAccountId, id);
    return { type: 'transaction-cancel', status: operationStatus(answer, ['succeeded', 'pending', 'failed']), ...codesOf(answer), transaction };
  }

  /** Asks the provider for the transaction's latest state and records what changed (unavailable after a second capture). */
  async sync(request: TransactionRequest<undefined>): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    const t = await this.load(merchantAccountId, id);
    await this.command(id, { type: 'SyncTransaction', data: {} });
    const connector = this.connectors.connectorFor(this.connectionOf(t));
    const found = await this.call(() => connector.sync({ reference: id, ...(t.paymentServiceTransactionId ? { providerTransactionId: t.paymentServiceTransactionId } : {}) }));
    if (found.outcome === 'found') {
      const snapshot = found.transaction;
      const result: AuthorizationResult | null =
        snapshot.status === 'authorized' || snapshot.status === 'captured'
          ? {
              outcome: 'succeeded',
              authorizedAmount: snapshot.authorizedAmount,
              paymentServiceTransactionId: snapshot.providerTransactionId,
              ...(snapshot.avsResponseCode ? { avsResponseCode: snapshot.avsResponseCode } : {}),
              ...(snapshot.cvvResponseCode ? { cvvResponseCode: snapshot.cvvResponseCode } : {}),
              ...(snapshot.rawResponseCode ? { rawResponseCode: snapshot.rawResponseCode } : {}),
            }
          : snapshot.status === 'declined' || snapshot.status === 'failed'
            ? { outcome: snapshot.status, error: providerError(snapshot) }
            : null;
      if (result) await this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'notification', result } });
    }
    return this.render(merchantAccountId, id);
  }

  /**
   * Raises the authorized amount (only in `authorization_succeeded`, only where the connection supports it). The
   * provider's answer is recorded either way: `succeeded` raises `authorized_amount`; `failed` and `pending` leave
   * the authorization as it was (an `unknown` answer counts as pending).
   */
  increment(request: TransactionRequest<AuthorizationIncrementInput>): Promise<AuthorizationIncrement> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.idempotent(merchantAccountId, `transactions.increment:${id}`, request.idempotency_key, body, async () => {
      const t = await this.load(merchantAccountId, id);
      await asApiErrors(async () => assertIncrementAllowed(t));
      const connector = this.connectors.connectorFor(this.connectionOf(t));
      if (!connector.capabilities.incrementalAuthorization) {
        throw ApiError.badRequest(`Payment service ${t.paymentServiceId} does not support incremental authorization`, [
          { location: 'body', pointer: '/amount', message: 'incremental authorization is off for this payment service', type: 'capability_disabled' },
        ]);
      }
      const answer = await this.call(() =>
        connector.incrementAuthorization({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '', amount: body.amount, currency: t.currency }),
      );
      if (answer.outcome === 'refused') throw ApiError.badRequest(`Payment service ${t.paymentServiceId} does not support incremental authorization`);
      const outcome = answer.outcome === 'succeeded' ? 'succeeded' : answer.outcome === 'declined' || answer.outcome === 'failed' ? 'failed' : 'pending';
      await this.command(id, {
        type: 'RecordAuthorizationIncrement',
        data: { incrementId: this.context.newId(), amount: body.amount, outcome, ...(answer.rawResponseCode ? { responseCode: answer.rawResponseCode } : {}) },
      });
      return {
        type: 'transaction-authorization-increment',
        status: outcome,
        amount: body.amount,
        response_code: answer.rawResponseCode ?? null,
        response_description: answer.rawResponseDescription ?? null,
        error_code: outcome === 'failed' ? (answer.errorCode ?? 'unknown_error') : null,
        transaction: await this.render(merchantAccountId, id),
      };
    });
  }

  async update(request: TransactionRequest<TransactionUpdateInput>): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    await this.load(merchantAccountId, id);
    await this.command(id, {
      type: 'UpdateTransaction',
      data: { ...(body.external_identifier !== undefined ? { externalIdentifier: body.external_identifier } : {}), ...(body.metadata !== undefined ? { metadata: body.metadata } : {}) },
    });
    return this.render(merchantAccountId, id);
  }

  // ---- refunds --------------------------------------------------------------------------------------------

  createRefund(request: TransactionRequest<RefundCreateInput>): Promise<WireRefund> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.idempotent(merchantAccountId, `transactions.refund:${id}`, request.idempotency_key, body, () =>
      this.refundOnce(merchantAccountId, id, { ...(body.amount != null ? { amount: body.amount } : {}), reason: body.reason ?? undefined, externalIdentifier: body.external_identifier ?? undefined }),
    );
  }

  /** Everything captured and not yet refunded, as one refund (the only instrument is the card). */
  refundAll(request: TransactionRequest<RefundAllCreateInput>): Promise<Page<WireRefund>> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.idempotent(merchantAccountId, `transactions.refund-all:${id}`, request.idempotency_key, body ?? {}, async () => {
      const refund = await this.refundOnce(merchantAccountId, id, { reason: body?.reason ?? undefined, externalIdentifier: body?.external_identifier ?? undefined });
      return { items: [refund], limit: 20, next_cursor: null, previous_cursor: null };
    });
  }

  private async refundOnce(merchantAccountId: string, id: string, input: { amount?: number; reason?: string | undefined; externalIdentifier?: string | undefined }): Promise<WireRefund> {
    const t = await this.load(merchantAccountId, id);
    const connector = this.connectors.connectorFor(this.connectionOf(t));
    const refundId = this.context.newId();
    const decided = await this.command(id, {
      type: 'RefundTransaction',
      data: {
        refundId,
        ...(input.amount !== undefined ? { amount: input.amount } : {}),
        ...(input.reason ? { reason: input.reason } : {}),
        details: input.externalIdentifier ? { externalIdentifier: input.externalIdentifier } : {},
      },
    });
    const refund = (decided.state as Transaction).refunds.find((r) => r.id === refundId);
    const answer = await this.call(() =>
      connector.refund({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '', refundReference: refundId, amount: refund?.amount ?? 0, currency: t.currency }),
    );
    // `pending`: the refund settles later, by notification or settlement file; it stays `processing` until then.
    const outcome = toOutcome(answer, (answer as { providerRefundId?: string }).providerRefundId);
    if (outcome) await this.record(id, { type: 'RecordRefundResult', data: { refundId, ...outcome } });
    await this.context.catchUp();
    return this.refund(merchantAccountId, id, refundId);
  }

  // ---- what providers send ----------------------------------------------------------------------------------

  /** A provider notification: verified by the connector (signature over the raw bytes), applied once per provider event id. */
  async notify(request: ProviderNotificationRequest): Promise<void> {
    const row = this.paymentServices.readModel.find(request.payment_service_id);
    if (!row) throw ApiError.notFound();
    const connection = this.paymentServices.connection(row.merchantAccountId, row.id);
    if (!connection) throw ApiError.notFound();
    let notification: ProviderNotification;
    try {
      notification = this.connectors.connectorFor(connection).parseNotification(request.raw_body, request.headers);
    } catch (error) {
      if (!(error instanceof NotificationRejectedError)) throw error;
      if (error.reason === 'malformed_body') throw ApiError.badRequest(`The notification was rejected: ${error.message}`);
      throw ApiError.unauthorized(`The notification was rejected: ${error.message}`);
    }
    if (this.notificationSeen.get(connection.id, notification.providerEventId)) return;
    const state = await this.state(notification.reference);
    if (state.status === 'absent' || state.merchantAccountId !== connection.merchantAccountId || !state.route.includes(connection.id)) throw ApiError.notFound();
    // A connection the transaction failed over from has nothing more to say about it: acknowledged, not applied.
    if (state.paymentServiceId === connection.id) await this.applyNotification(state, notification);
    this.notificationApplied.run(connection.id, notification.providerEventId, this.now());
    await this.context.catchUp();
  }

  private async applyNotification(t: Transaction, notification: ProviderNotification): Promise<void> {
    const id = t.id;
    switch (notification.type) {
      case 'authorization': {
        const error = providerError(notification);
        switch (notification.status) {
          case 'authorized':
          case 'captured':
            return this.record(id, {
              type: 'RecordAuthorizationResult',
              data: {
                source: 'notification',
                result: {
                  outcome: 'succeeded',
                  authorizedAmount: notification.amount,
                  paymentServiceTransactionId: notification.providerTransactionId,
                  ...(notification.avsResponseCode ? { avsResponseCode: notification.avsResponseCode } : {}),
                  ...(notification.cvvResponseCode ? { cvvResponseCode: notification.cvvResponseCode } : {}),
                  ...(notification.rawResponseCode ? { rawResponseCode: notification.rawResponseCode } : {}),
                },
              },
            });
          case 'declined':
          case 'failed':
            return this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'notification', result: { outcome: notification.status, error, ...verificationCodes(notification) } } });
          case 'pending':
            return this.record(id, { type: 'RecordAuthorizationResult', data: { source: 'notification', result: { outcome: 'pending', paymentServiceTransactionId: notification.providerTransactionId } } });
          case 'voided':
            if (t.pendingVoidId) return this.record(id, { type: 'RecordVoidResult', data: { voidId: t.pendingVoidId, outcome: 'succeeded' } });
            return;
          case 'cancelled':
            return; // recorded by the cancel request itself, once the provider confirmed it
        }
        return;
      }
      case 'capture': {
        const view = this.readModel.find(id);
        const captureId = view && Object.entries(view.captures).find(([, capture]) => capture.providerOperationId === notification.providerCaptureId)?.[0];
        if (!captureId) return;
        const outcome: ProviderOutcome = notification.status === 'succeeded' ? { outcome: 'succeeded', providerOperationId: notification.providerCaptureId } : { outcome: notification.status, error: providerError(notification) };
        return this.record(id, { type: 'RecordCaptureResult', data: { captureId, ...outcome } });
      }
      case 'refund': {
        const outcome: ProviderOutcome = notification.status === 'succeeded' ? { outcome: 'succeeded', providerOperationId: notification.providerRefundId } : { outcome: 'failed', error: providerError(notification) };
        return this.record(id, { type: 'RecordRefundResult', data: { refundId: notification.refundReference, ...outcome } });
      }
      case 'vault-token':
        return; // stored payment methods arrive with the vault (a later issue)
    }
  }

  /**
   * A provider's settlement file: each refund record moves its `processing` refund to `succeeded` (spec, Refund
   * statuses). Records of other accounts' or unknown refunds are counted as unmatched; repeats change nothing.
   */
  async ingestSettlementFile(request: SettlementFileRequest): Promise<SettlementFileResult> {
    const connection = this.paymentServices.connection(request.merchant_account_id, request.payment_service_id);
    if (!connection) throw ApiError.notFound();
    const records = parseSettlementFile(request.content);
    let settled = 0;
    let already = 0;
    let unmatched = 0;
    for (const record of records) {
      if (record.recordType !== 'refund') continue;
      const owner = this.readModel.refundOwner(record.operationReference);
      if (!owner || owner.merchantAccountId !== request.merchant_account_id || owner.transactionId !== record.reference) {
        unmatched += 1;
        continue;
      }
      const handled = await this.command(owner.transactionId, { type: 'IngestSettledRefund', data: { refundId: record.operationReference } }).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 400) return null; // declined or failed refunds do not settle
        throw error;
      });
      if (handled === null) unmatched += 1;
      else if (handled.events.length > 0) settled += 1;
      else already += 1;
    }
    await this.context.catchUp();
    return { type: 'settlement-file-ingestion', file_name: request.file_name, records: records.length, refunds_settled: settled, already_settled: already, unmatched };
  }

  rpcHandlers(): RpcHandlers {
    type Ids = { merchant_account_id: string; transaction_id: string };
    return {
      [transactionsPatterns.create]: async (payload) => this.create(payload as TransactionCreateRequest),
      [transactionsPatterns.get]: async (payload) => this.get((payload as Ids).merchant_account_id, (payload as Ids).transaction_id),
      [transactionsPatterns.list]: async (payload) => this.list(payload as TransactionListRequest),
      [transactionsPatterns.update]: async (payload) => this.update(payload as TransactionRequest<TransactionUpdateInput>),
      [transactionsPatterns.events]: async (payload) => this.history(payload as TransactionPageRequest),
      [transactionsPatterns.capture]: async (payload) => this.captureTransaction(payload as TransactionCaptureRequest),
      [transactionsPatterns.captures]: async (payload) => this.captures(payload as TransactionPageRequest),
      [transactionsPatterns.captureGet]: async (payload) => {
        const p = payload as Ids & { capture_id: string };
        return this.capture(p.merchant_account_id, p.transaction_id, p.capture_id);
      },
      [transactionsPatterns.void]: async (payload) => this.voidTransaction(payload as TransactionVoidRequest),
      [transactionsPatterns.cancel]: async (payload) => this.cancel(payload as TransactionRequest<undefined>),
      [transactionsPatterns.sync]: async (payload) => this.sync(payload as TransactionRequest<undefined>),
      [transactionsPatterns.increment]: async (payload) => this.increment(payload as TransactionRequest<AuthorizationIncrementInput>),
      [transactionsPatterns.refund]: async (payload) => this.createRefund(payload as TransactionRequest<RefundCreateInput>),
      [transactionsPatterns.refundAll]: async (payload) => this.refundAll(payload as TransactionRequest<RefundAllCreateInput>),
      [transactionsPatterns.refunds]: async (payload) => this.refunds(payload as TransactionPageRequest),
      [transactionsPatterns.refundGet]: async (payload) => {
        const p = payload as Ids & { refund_id: string };
        return this.refund(p.merchant_account_id, p.transaction_id, p.refund_id);
      },
      [transactionsPatterns.refundById]: async (payload) => {
        const p = payload as { merchant_account_id: string; refund_id: string };
        return this.refundById(p.merchant_account_id, p.refund_id);
      },
      [transactionsPatterns.notification]: async (payload) => {
        await this.notify(payload as ProviderNotificationRequest);
        return null;
      },
      [transactionsPatterns.settlementFile]: async (payload) => this.ingestSettlementFile(payload as SettlementFileRequest),
      [transactionsPatterns.buyerReturn]: async (payload) => this.buyerReturn(payload as BuyerReturnRequest),
      [transactionsPatterns.actions]: async (payload) => this.actions((payload as Ids).merchant_account_id, (payload as Ids).transaction_id),
    };
  }

  // ---- plumbing -------------------------------------------------------------------------------------------

  private now(): string {
    return this.context.now().toISOString();
  }

  private idempotent<T>(merchantAccountId: string, operation: string, key: string | undefined, body: unknown, execute: () => Promise<T>): Promise<T> {
    if (key === undefined) return execute();
    const fingerprint = createHmac('sha256', this.fingerprintKey).update(requestFingerprint({ operation, body })).digest('hex');
    return this.idempotency.run({ merchantAccountId, operation, key }, fingerprint, execute);
  }

  /** Decides and appends, queued per transaction in this process (so a burst does not exhaust the conflict retries). */
  private append(id: string, command: Omit<TransactionCommand, 'metadata'>) {
    return this.queue.run(id, () => handleCommand(this.context.store, transactionStream(id), transaction, { ...command, metadata: { now: this.now() } } as TransactionCommand));
  }

  /** A caller's command: domain errors become the spec's errors. */
  private command(id: string, command: Omit<TransactionCommand, 'metadata'>) {
    return asApiErrors(() => this.append(id, command));
  }

  /**
   * Records what a provider said (its answer, a notification, a sync). The provider's later word may already have
   * settled what this message is about: stale or repeated messages are dropped; any other refusal surfaces.
   */
  private async record(id: string, command: Omit<TransactionCommand, 'metadata'>): Promise<void> {
    await this.append(id, command).catch((error: unknown) => {
      if (error instanceof DomainError && staleNotificationCodes.has(error.code)) return;
      throw error;
    });
  }

  private async state(id: string): Promise<TransactionState> {
    const events = await this.context.store.readStream(transactionStream(id));
    return events.reduce((state, event) => transaction.evolve(state, asDomainEvent<TransactionEvent>(event)), transaction.initialState());
  }

  /** The transaction from its stream (not the read model: a decision needs the latest state); 404 outside the account. */
  private async load(merchantAccountId: string, id: string): Promise<Transaction> {
    const state = await this.state(id);
    if (state.status === 'absent' || state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return state;
  }

  private owned(merchantAccountId: string, id: string): TransactionView {
    const view = this.readModel.find(id);
    if (!view || view.state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return view;
  }

  private connectionOf(t: Transaction): PaymentServiceConnection {
    const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
    if (!connection) throw ApiError.badRequest('The payment service of this transaction was deleted');
    return connection;
  }

  private async render(merchantAccountId: string, id: string): Promise<WireTransaction> {
    await this.context.catchUp();
    return this.get(merchantAccountId, id);
  }

  /**
   * A provider call. An unreachable provider (refused connection, 5xx) did nothing: that is a failure with
   * `service_unavailable`. A request the provider rejected as malformed is `invalid_service_request`.
   */
  private async call<T>(request: () => Promise<T>): Promise<T | ProviderResponse> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof ConnectorUnavailableError) return { outcome: 'failed', errorCode: 'service_unavailable', rawResponseDescription: error.message };
      if (error instanceof ConnectorRequestRejectedError) return { outcome: 'failed', errorCode: 'invalid_service_request', rawResponseDescription: error.message };
      throw error;
    }
  }
}

/** The URL with these query parameters added (existing ones kept). */
function withQuery(url: string, params: Readonly<Record<string, string>>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return target.toString();
}

const pageQueryOf = (request: { cursor?: string | null; limit: number }): PageQuery => ({ limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) });

function providerError(answer: { errorCode?: string; rawResponseCode?: string; rawResponseDescription?: string }): ProviderError {
  return {
    errorCode: answer.errorCode ?? 'unknown_error',
    ...(answer.rawResponseCode !== undefined ? { rawResponseCode: answer.rawResponseCode } : {}),
    ...(answer.rawResponseDescription !== undefined ? { rawResponseDescription: answer.rawResponseDescription } : {}),
  };
}

/** The AVS and CVV results of a provider's answer, when it has them (a decline does, a failure does not). */
const verificationCodes = (answer: { avsResponseCode?: string | null; cvvResponseCode?: string | null }) => ({
  ...(answer.avsResponseCode ? { avsResponseCode: answer.avsResponseCode } : {}),
  ...(answer.cvvResponseCode ? { cvvResponseCode: answer.cvvResponseCode } : {}),
});

/** A connector's answer to authorize as the decider's result; null when nothing is known yet (`unknown`). */
function toAuthorizationResult(answer: ConnectorAuthorizationResult | CapabilityRefusal | ProviderResponse, amount: number): AuthorizationResult | null {
  switch (answer.outcome) {
    case 'refused':
      return { outcome: 'failed', error: { errorCode: 'invalid_service_configuration', rawResponseDescription: `capability ${answer.capability} is off for this payment service` } };
    case 'succeeded': {
      const a = answer as ConnectorAuthorizationResult;
      return {
        outcome: 'succeeded',
        authorizedAmount: a.authorizedAmount ?? amount,
        ...(a.providerTransactionId ? { paymentServiceTransactionId: a.providerTransactionId } : {}),
        ...(a.avsResponseCode ? { avsResponseCode: a.avsResponseCode } : {}),
        ...(a.cvvResponseCode ? { cvvResponseCode: a.cvvResponseCode } : {}),
        ...(a.rawResponseCode ? { rawResponseCode: a.rawResponseCode } : {}),
      };
    }
    case 'declined':
    case 'failed':
      return { outcome: answer.outcome, error: providerError(answer), ...verificationCodes(answer as ConnectorAuthorizationResult) };
    case 'pending':
      return { outcome: 'pending', ...(answer.providerTransactionId ? { paymentServiceTransactionId: answer.providerTransactionId } : {}) };
    case 'buyer_approval_required': {
      const a = answer as ConnectorAuthorizationResult;
      return { outcome: 'buyer_approval_required', ...(a.approvalUrl ? { approvalUrl: a.approvalUrl } : {}), ...(a.providerTransactionId ? { paymentServiceTransactionId: a.providerTransactionId } : {}) };
    }
    case 'unknown':
      return null;
  }
}

/** A connector's answer to capture, void or refund as the decider's outcome; null while pending or unknown. */
function toOutcome(answer: ProviderResponse | CapabilityRefusal, providerOperationId?: string): ProviderOutcome | null {
  switch (answer.outcome) {
    case 'refused':
      return { outcome: 'failed', error: { errorCode: 'invalid_service_configuration', rawResponseDescription: `capability ${answer.capability} is off for this payment service` } };
    case 'succeeded':
      return { outcome: 'succeeded', ...(answer.rawResponseCode ? { rawResponseCode: answer.rawResponseCode } : {}), ...(providerOperationId ? { providerOperationId } : {}) };
    case 'declined':
    case 'failed':
      return { outcome: answer.outcome, error: providerError(answer) };
    default:
      return null;
  }
}

function operationStatus<S extends string>(answer: ProviderResponse, allowed: readonly S[]): S {
  const status = answer.outcome === 'unknown' ? 'pending' : answer.outcome;
  return (allowed.includes(status as S) ? status : 'failed') as S;
}

const codesOf = (answer: ProviderResponse) => ({
  code: answer.errorCode ?? null,
  raw_response_code: answer.rawResponseCode ?? null,
  raw_response_description: answer.rawResponseDescription ?? null,
});

