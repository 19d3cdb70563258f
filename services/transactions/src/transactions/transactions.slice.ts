/**
 * Transactions after their authorization: reads, capture (multiple, with tracking), void, cancel, sync, increment,
 * update and refunds, and the service's RPC handlers for all transaction operations. Provider calls happen between
 * two commands, never inside one: the first claims (capture and refund amounts are claimed while pending), the
 * second records the answer. Elsewhere in this folder: the authorization flow, `POST /transactions` to the buyer's
 * return (`authorizations.ts`, its 3-D Secure in `three-d-secure.ts`); provider notifications and settlement files
 * (`provider-messages.ts`); the plumbing every flow shares — commands decided on the stream's current state and
 * appended with the revision read, queued per transaction, idempotency (`transaction-store.ts`); and what a
 * provider's answer means (`provider-answers.ts`).
 */
import { ApiError, pageOf, type Page, type PageQuery } from '@switchyard/api';
import type { ProviderResponse } from '@switchyard/connectors';
import {
  asOfInstant,
  transactionsPatterns,
  type AuthorizationIncrement,
  type AuthorizationIncrementInput,
  type BuyerReturnRequest,
  type ProviderNotificationRequest,
  type Refund as WireRefund,
  type RefundAllCreateInput,
  type RefundCreateInput,
  type SettlementFileRequest,
  type Transaction as WireTransaction,
  type TransactionActor,
  type TransactionCancel,
  type TransactionCapture,
  type TransactionCaptureRequest,
  type TransactionCaptureSummary,
  type TransactionCreateRequest,
  type TransactionEventItem,
  type TransactionGetRequest,
  type TransactionListRequest,
  type TransactionPageRequest,
  type TransactionRequest,
  type TransactionSummary,
  type TransactionUpdateInput,
  type TransactionVoid,
  type TransactionVoidRequest,
} from '@switchyard/contracts';
import type { MessageBus } from '@switchyard/bus';
import { builtForTheCall, type RpcHandler, type RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type TransactionsContext, type TransactionsSlice } from '../transactions-context';
import { Authorizations, type AuthorizationDependencies } from './authorizations';

import { codesOf, operationStatus, providerError, toOutcome } from './provider-answers';
import type { ProviderConnectors } from './provider-connectors';
import { LateAuthorizations } from './late-authorizations';
import { ProviderMessages } from './provider-messages';
import {
  capturedAmount,
  claimedCaptureAmount,
  claimedRedemptionRefunds,
  claimedRefundAmount,
  hasPaymentMethod,
  type Capture,
  type RefundTarget,
  type Transaction,
} from './transaction';
import {
  assertIncrementAllowed,
  captureLimit,
  decideTransaction,
  type AuthorizationResult,
  type CaptureSettings,
  type ProviderOutcome,
} from './transaction.decide';
import { TransactionStore, type RequestBinding } from './transaction-store';
import { transactionViewAsOf } from './transaction-as-of';
import { toCaptureSummary, toHistoryItem, toRefund, toTransaction, toTransactionSummary } from './transaction-wire';
import type { TransactionsReadModel } from './transactions.read-model';

export interface TransactionsDependencies extends AuthorizationDependencies {
  /**
   * Keys the request fingerprints kept with Idempotency-Keys. A create request holds a card number: a plain hash of
   * it could be brute-forced from the BIN and the Luhn digit, a keyed one cannot.
   */
  readonly fingerprintKey: Buffer;
}

export class Transactions implements TransactionsSlice {
  readonly readModel: TransactionsReadModel;
  private readonly store: TransactionStore;
  private readonly authorizations: Authorizations;
  private readonly providerMessages: ProviderMessages;
  private readonly lateAuthorizations: LateAuthorizations;
  private readonly onBackgroundError: (error: unknown) => void;
  private readonly connectors: ProviderConnectors;
  private readonly paymentServices: TransactionsDependencies['paymentServices'];

  constructor(
    private readonly context: TransactionsContext,
    dependencies: TransactionsDependencies,
  ) {
    this.store = new TransactionStore(context, dependencies.paymentServices, dependencies.fingerprintKey);
    this.readModel = this.store.readModel;
    this.authorizations = new Authorizations(context, this.store, dependencies);
    this.providerMessages = new ProviderMessages(
      context,
      this.store,
      dependencies.paymentServices,
      dependencies.connectors,
      dependencies.vault,
    );
    this.connectors = dependencies.connectors;
    this.paymentServices = dependencies.paymentServices;
    this.lateAuthorizations = new LateAuthorizations(this.store, dependencies.paymentServices, dependencies.connectors);
    this.onBackgroundError = dependencies.onBackgroundError ?? (() => undefined);
  }

  get projection() {
    return this.readModel.projection;
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  async get(merchantAccountId: string, id: string): Promise<WireTransaction> {
    return toTransaction(this.store.owned(merchantAccountId, id));
  }

  /**
   * The transaction as it stood at `asOf` (RFC 3339 with offset), folded from its stream: 404 before it existed
   * (or outside the account), the current state for a moment still to come.
   */
  async getAsOf(merchantAccountId: string, id: string, asOf: string): Promise<WireTransaction> {
    const at = asOfInstant(asOf);
    if (at === null) {
      const message = 'must be an RFC 3339 date-time with offset, e.g. 2025-06-01T12:00:00Z';
      throw ApiError.badRequest(`as_of ${message}`, [
        { location: 'query', pointer: '/as_of', message, type: 'invalid_as_of' },
      ]);
    }
    const view = transactionViewAsOf(await this.store.events(id), at);
    if (!view || view.state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return toTransaction(view);
  }

  list(request: TransactionListRequest): Page<TransactionSummary> {
    const { merchant_account_id: merchantAccountId, cursor, limit, ...filters } = request;
    const page = this.readModel.list(merchantAccountId, filters, { limit, ...(cursor ? { cursor } : {}) });
    return { ...page, items: page.items.map(toTransactionSummary) };
  }

  history(request: TransactionPageRequest): Page<TransactionEventItem> {
    this.store.owned(request.merchant_account_id, request.transaction_id);
    const page = this.readModel.history(request.transaction_id, pageQueryOf(request));
    return { ...page, items: page.items.map(toHistoryItem) };
  }

  captures(request: TransactionPageRequest): Page<TransactionCaptureSummary> {
    const view = this.store.owned(request.merchant_account_id, request.transaction_id);
    const items = view.state.captures.map((capture) => toCaptureSummary(view, capture));
    return pageOf(items, (capture) => `${capture.created_at}|${capture.id}`, pageQueryOf(request));
  }

  capture(merchantAccountId: string, transactionId: string, captureId: string): TransactionCapture {
    const view = this.store.owned(merchantAccountId, transactionId);
    const capture = view.state.captures.find((c) => c.id === captureId);
    if (!capture) throw ApiError.notFound();
    return { ...toCaptureSummary(view, capture), transaction: toTransaction(view) };
  }

  refunds(request: TransactionPageRequest): Page<WireRefund> {
    const view = this.store.owned(request.merchant_account_id, request.transaction_id);
    const items = view.state.refunds.map((refund) => toRefund(view, refund));
    return pageOf(items, (refund) => `${refund.created_at}|${refund.id}`, pageQueryOf(request));
  }

  refund(merchantAccountId: string, transactionId: string, refundId: string): WireRefund {
    const view = this.store.owned(merchantAccountId, transactionId);
    const refund = view.state.refunds.find((r) => r.id === refundId);
    if (!refund) throw ApiError.notFound();
    return toRefund(view, refund);
  }

  refundById(merchantAccountId: string, refundId: string): WireRefund {
    const owner = this.readModel.refundOwner(refundId);
    if (!owner || owner.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return this.refund(merchantAccountId, owner.transactionId, refundId);
  }

  // ---- authorize: `Authorizations` ------------------------------------------------------------------------

  create(request: TransactionCreateRequest): Promise<WireTransaction> {
    return this.authorizations.create(request);
  }

  /** Completes the create requests whose hold window has passed (the service runs it on a timer). */
  expireHolds(): Promise<number> {
    return this.store.actingAs(systemActor('hold-expiry'), () => this.authorizations.expireHolds());
  }

  /**
   * Follows the gift cards service's answers to split tender's requests on `gift-cards.events` as `groupId`
   * (`GiftCardOutcomes`): stored gift cards are redeemed only while it does. Resolves once live.
   */
  followGiftCardOutcomes(options: { readonly bus: MessageBus; readonly groupId: string }): Promise<void> {
    return this.authorizations.giftCards.outcomes.start(options);
  }

  stopFollowingGiftCardOutcomes(): Promise<void> {
    return this.authorizations.giftCards.outcomes.stop();
  }

  /** Sends the vault the security codes waiting to be forgotten (at a stop: the requests are done). */
  forgetSecurityCodesNow(): Promise<void> {
    return this.authorizations.forgetting.flush();
  }

  /** Rolls back gift card payments left unfinished past the recovery window (the service runs it on a timer). */
  recoverGiftCardPayments(): Promise<number> {
    return this.store.actingAs(systemActor('gift-card-recovery'), () => this.authorizations.giftCards.recover());
  }

  // ---- capture, void, cancel, sync ------------------------------------------------------------------------

  captureTransaction(request: TransactionCaptureRequest): Promise<WireTransaction | TransactionCapture> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    const answerBound = async (bound: RequestBinding): Promise<WireTransaction | TransactionCapture> => {
      if (!request.prefer_capture || !bound.capture_id)
        return this.store.render(merchantAccountId, bound.transaction_id);
      await this.context.catchUp();
      return this.capture(merchantAccountId, bound.transaction_id, bound.capture_id);
    };
    return this.store.idempotent(
      merchantAccountId,
      `transactions.capture:${id}`,
      request.idempotency_key,
      { body, prefer: request.prefer_capture },
      async () => {
        const t = await this.store.load(merchantAccountId, id);
        const connection = this.store.connectionOf(t);
        const connector = this.connectors.connectorFor(connection);
        const settings: CaptureSettings = {
          multipleCapturesEnabled:
            request.settings.multiple_captures_enabled && connector.capabilities.multipleCaptures,
          ...(request.settings.over_capture_amount != null || request.settings.over_capture_percentage != null
            ? {
                overCapture: {
                  ...(request.settings.over_capture_amount != null
                    ? { amount: request.settings.over_capture_amount }
                    : {}),
                  ...(request.settings.over_capture_percentage != null
                    ? { percentage: request.settings.over_capture_percentage }
                    : {}),
                },
              }
            : {}),
        };
        const captureId = this.context.newId();
        const tracking = (body.tracking ?? []).map((entry) => ({
          number: entry.number,
          carrier: entry.carrier,
          ...(entry.url ? { url: entry.url } : {}),
        }));
        this.store.bindRequest({ transaction_id: id, capture_id: captureId });
        const decided = await this.store.command(id, {
          type: 'CaptureTransaction',
          data: {
            captureId,
            ...(body.amount != null ? { amount: body.amount } : {}),
            ...(body.final != null ? { final: body.final } : {}),
            tracking,
            settings,
            details: {
              ...(body.external_identifier ? { externalIdentifier: body.external_identifier } : {}),
              ...(body.cart_items ? { cartItems: body.cart_items } : {}),
            },
          },
        });
        const after = decided.state as Transaction;
        const capture = after.captures.find((c) => c.id === captureId) as Capture;
        const before = claimedCaptureAmount(after) - capture.amount;
        const forwarded =
          tracking[0] && connector.capabilities.trackingForwarding
            ? { tracking: { carrier: tracking[0].carrier, trackingNumber: tracking[0].number } }
            : {};
        const answer = await this.store.call(() =>
          connector.capture({
            reference: id,
            providerTransactionId: t.paymentServiceTransactionId ?? '',
            captureReference: captureId,
            amount: capture.amount,
            currency: t.currency,
            ...(before > 0 ? { previouslyCapturedAmount: before } : {}),
            final: capture.final,
            ...(settings.overCapture ? { maxTotalAmount: captureLimit(after.authorizedAmount, settings) } : {}),
            ...forwarded,
          }),
        );
        const providerCaptureId = (answer as { providerCaptureId?: string }).providerCaptureId;
        const outcome = toOutcome(answer, providerCaptureId);
        if (outcome) await this.store.record(id, { type: 'RecordCaptureResult', data: { captureId, ...outcome } });
        // Taken for later (Adyen): its notification names the capture by the provider's reference of it.
        else if (answer.outcome === 'pending' && providerCaptureId) {
          const submitted = { captureId, providerOperationId: providerCaptureId };
          await this.store.record(id, { type: 'RecordCaptureSubmitted', data: submitted });
        }
        if (!request.prefer_capture) return this.store.render(merchantAccountId, id);
        // The capture is read from the read model: it must have seen this capture first.
        await this.context.catchUp();
        return this.capture(merchantAccountId, id, captureId);
      },
      answerBound,
    );
  }

  voidTransaction(request: TransactionVoidRequest): Promise<WireTransaction | TransactionVoid> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    const answerBound = async (bound: RequestBinding): Promise<WireTransaction | TransactionVoid> => {
      const transaction = await this.store.render(merchantAccountId, bound.transaction_id);
      if (!request.prefer_void) return transaction;
      const statuses = { authorization_voided: 'succeeded', authorization_void_pending: 'pending' } as const;
      const status = statuses[transaction.status as keyof typeof statuses] ?? 'failed';
      const codes = { code: null, raw_response_code: null, raw_response_description: null };
      return { type: 'transaction-void', status, ...codes, transaction };
    };
    return this.store.idempotent(
      merchantAccountId,
      `transactions.void:${id}`,
      request.idempotency_key,
      { prefer: request.prefer_void },
      async () => {
        const t = await this.store.load(merchantAccountId, id);
        const connector = this.connectors.connectorFor(this.store.connectionOf(t));
        const voidId = this.context.newId();
        this.store.bindRequest({ transaction_id: id, void_id: voidId });
        await this.store.command(id, { type: 'VoidTransaction', data: { voidId } });
        const answer = await this.store.call(() =>
          connector.void({
            reference: id,
            providerTransactionId: t.paymentServiceTransactionId ?? '',
            voidReference: voidId,
          }),
        );
        const outcome = toOutcome(answer);
        if (outcome) await this.store.record(id, { type: 'RecordVoidResult', data: { voidId, ...outcome } });
        const transaction = await this.store.render(merchantAccountId, id);
        if (!request.prefer_void) return transaction;
        return {
          type: 'transaction-void',
          status: operationStatus(answer, ['succeeded', 'pending', 'declined', 'failed']),
          ...codesOf(answer),
          transaction,
        };
      },
      answerBound,
    );
  }

  /**
   * Cancel abandons an authorization that is still pending. The decider is asked first (without appending) so a
   * refused cancel never reaches the provider; the cancel is recorded only when the provider confirms it.
   */
  async cancel(request: TransactionRequest<undefined>): Promise<TransactionCancel> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    const t = await this.store.load(merchantAccountId, id);
    await asApiErrors(async () =>
      decideTransaction({ type: 'CancelTransaction', data: {}, metadata: { now: this.store.now() } }, t),
    );
    let answer: ProviderResponse = { outcome: 'succeeded' };
    if (t.paymentServiceTransactionId) {
      const connector = this.connectors.connectorFor(this.store.connectionOf(t));
      answer = await this.store.call(() =>
        connector.cancel({ reference: id, providerTransactionId: t.paymentServiceTransactionId ?? '' }),
      );
    }
    if (answer.outcome === 'succeeded') await this.store.command(id, { type: 'CancelTransaction', data: {} });
    const transaction = await this.store.render(merchantAccountId, id);
    return {
      type: 'transaction-cancel',
      status: operationStatus(answer, ['succeeded', 'pending', 'failed']),
      ...codesOf(answer),
      transaction,
    };
  }

  /** Asks the provider for the transaction's latest state and records what changed (unavailable after a second capture). */
  async sync(request: TransactionRequest<undefined>): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, transaction_id: id } = request;
    const t = await this.store.load(merchantAccountId, id);
    this.store.connectionOf(t); // refused before anything is recorded: no payment method, or its service deleted
    await this.store.command(id, { type: 'SyncTransaction', data: {} });
    await this.syncAuthorization(t);
    return this.store.render(merchantAccountId, id);
  }

  /**
   * The provider's word on the authorization, recorded. 'not_found': the provider has no authorization with this
   * reference; 'unknown': it could not be asked (unreachable) or does not know yet.
   */
  private async syncAuthorization(t: Transaction): Promise<'recorded' | 'not_found' | 'unknown'> {
    const connector = this.connectors.connectorFor(this.store.connectionOf(t));
    const known = t.paymentServiceTransactionId;
    const lookup = known ? { providerTransactionId: known } : { attemptedAt: await this.attemptedAt(t.id) };
    const reference = { reference: t.id, ...lookup };
    const found = await this.store.call(() => connector.sync(reference));
    if (found.outcome === 'not_found') return 'not_found';
    if (found.outcome !== 'found') return 'unknown';
    const snapshot = found.transaction;
    const result: AuthorizationResult | null =
      snapshot.status === 'authorized' || snapshot.status === 'captured'
        ? {
            outcome: 'succeeded',
            captured: snapshot.status === 'captured',
            authorizedAmount: snapshot.authorizedAmount,
            paymentServiceTransactionId: snapshot.providerTransactionId,
            ...(snapshot.avsResponseCode ? { avsResponseCode: snapshot.avsResponseCode } : {}),
            ...(snapshot.cvvResponseCode ? { cvvResponseCode: snapshot.cvvResponseCode } : {}),
            ...(snapshot.rawResponseCode ? { rawResponseCode: snapshot.rawResponseCode } : {}),
          }
        : snapshot.status === 'declined' || snapshot.status === 'failed'
          ? { outcome: snapshot.status, error: providerError(snapshot) }
          : null;
    if (!result) return 'unknown';
    const command = { type: 'RecordAuthorizationResult', data: { source: 'notification', result } } as const;
    const recorded = await this.store.record(t.id, command);
    await this.lateAuthorizations.reverseReceived(t.id, recorded);
    return 'recorded';
  }

  /** When the authorization at the transaction's current connection was sent: its creation, or its last failover. */
  private async attemptedAt(id: string): Promise<string> {
    const events = await this.store.events(id);
    const starts = new Set(['TransactionCreated', 'AuthorizationAttemptFailed']);
    const attempts = events.filter(({ type }) => starts.has(type));
    const attempt = attempts.at(-1);
    return (attempt?.data as { at?: string } | undefined)?.at ?? this.store.now();
  }

  /**
   * Reconciliation (the service runs it on a timer): an authorization still `processing` after its create request
   * answered — its outcome unknown (a timeout, a lost answer) or pending with a notification that never came — is
   * synced with the provider once it is older than RECONCILE_AFTER_MS, and again on later rounds until it is
   * decided. One the provider never received (sync: not found) has failed: nothing was authorized.
   */
  reconcile(olderThanMs: number): Promise<number> {
    return this.store.actingAs(systemActor('reconciliation'), () => this.reconcileOlderThan(olderThanMs));
  }

  private async reconcileOlderThan(olderThanMs: number): Promise<number> {
    const before = new Date(this.context.now().getTime() - olderThanMs).toISOString();
    let decided = 0;
    for (const id of this.readModel.undecidedAuthorizations(before, 100)) {
      const t = await this.store.state(id);
      if (t.status !== 'processing' || t.createRequestRunning || t.giftCards?.outcome === null) continue;
      const found = await this.syncAuthorization(t);
      if (found === 'not_found') {
        await this.store.record(id, {
          type: 'RecordAuthorizationResult',
          data: {
            source: 'notification',
            result: {
              outcome: 'failed',
              error: {
                errorCode: 'service_unavailable',
                rawResponseDescription: 'the payment service has no record of this authorization (reconciliation)',
              },
            },
          },
        });
      }
      if (found !== 'unknown') decided += 1;
    }
    for (const id of this.readModel.openOperations(before, 100)) decided += await this.reconcileOperations(id);
    // Late authorizations the provider did not let us reverse yet (unreachable, a refusal): tried again every round.
    for (const id of this.readModel.unreversedLateAuthorizations(100)) {
      // One that cannot be reversed (its payment service deleted) must not hold back the others.
      const reversed = await this.lateAuthorizations.reverse(id).catch((error: unknown) => {
        this.onBackgroundError(error);
        return false;
      });
      if (reversed) decided += 1;
    }
    if (decided > 0) await this.context.catchUp();
    return decided;
  }

  /**
   * Captures and payment-method refunds whose answer never came (a crash or a timeout during the provider call),
   * settled from the provider's record: a refund by its reference; captures by the amount the provider captured
   * beyond the captures we know succeeded, oldest first. One the provider does not have has failed: nothing moved.
   */
  private async reconcileOperations(id: string): Promise<number> {
    const t = await this.store.state(id);
    if (t.status === 'absent') return 0;
    const pendingCaptures = t.captures.filter((c) => c.status === 'pending');
    const processingRefunds = t.refunds.filter((r) => !r.target && r.status === 'processing');
    if (pendingCaptures.length === 0 && processingRefunds.length === 0) return 0;
    const connector = this.connectors.connectorFor(this.store.connectionOf(t));
    const found = await this.store.call(() =>
      connector.sync({
        reference: id,
        ...(t.paymentServiceTransactionId ? { providerTransactionId: t.paymentServiceTransactionId } : {}),
      }),
    );
    if (found.outcome !== 'found') return 0;
    const snapshot = found.transaction;
    const lost = (what: string) => ({
      outcome: 'failed' as const,
      error: {
        errorCode: 'service_unavailable',
        rawResponseDescription: `the payment service has no record of this ${what} (reconciliation)`,
      },
    });
    let settled = 0;
    let unexplained = snapshot.capturedAmount - capturedAmount(t);
    for (const capture of pendingCaptures) {
      const outcome = unexplained >= capture.amount ? ({ outcome: 'succeeded' } as const) : lost('capture');
      if (outcome.outcome === 'succeeded') unexplained -= capture.amount;
      await this.store.record(id, { type: 'RecordCaptureResult', data: { captureId: capture.id, ...outcome } });
      settled += 1;
    }
    for (const refund of processingRefunds) {
      const atProvider = snapshot.refunds.find((r) => r.refundReference === refund.id);
      if (atProvider?.status === 'pending') continue; // settles later (notification, settlement file)
      const outcome: ProviderOutcome =
        atProvider?.status === 'succeeded'
          ? { outcome: 'succeeded', providerOperationId: atProvider.providerRefundId }
          : atProvider
            ? {
                outcome: 'failed',
                error: {
                  errorCode: 'refund_failed',
                  rawResponseDescription: 'the payment service reports this refund failed (reconciliation)',
                },
              }
            : lost('refund');
      await this.store.record(id, { type: 'RecordRefundResult', data: { refundId: refund.id, ...outcome } });
      settled += 1;
    }
    return settled;
  }

  /**
   * Raises the authorized amount (only in `authorization_succeeded`, only where the connection supports it). The
   * provider's answer is recorded either way: `succeeded` raises `authorized_amount`; `failed` and `pending` leave
   * the authorization as it was (an `unknown` answer counts as pending).
   */
  increment(request: TransactionRequest<AuthorizationIncrementInput>): Promise<AuthorizationIncrement> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    const answerBound = async (bound: RequestBinding): Promise<AuthorizationIncrement> => {
      // The increment's own event, when its answer was recorded; else the provider's word is not known yet.
      const recorded = (await this.store.events(bound.transaction_id))
        .map((event) => event.data as { incrementId?: string; outcome?: 'failed' | 'pending'; responseCode?: string })
        .find((data) => data.incrementId === bound.increment_id);
      const status = !recorded ? 'pending' : (recorded.outcome ?? 'succeeded');
      return {
        type: 'transaction-authorization-increment',
        status,
        amount: body.amount,
        response_code: recorded?.responseCode ?? null,
        response_description: null,
        error_code: status === 'failed' ? 'unknown_error' : null,
        transaction: await this.store.render(merchantAccountId, bound.transaction_id),
      };
    };
    return this.store.idempotent(
      merchantAccountId,
      `transactions.increment:${id}`,
      request.idempotency_key,
      body,
      async () => {
        const t = await this.store.load(merchantAccountId, id);
        await asApiErrors(async () => assertIncrementAllowed(t));
        const connector = this.connectors.connectorFor(this.store.connectionOf(t));
        if (!connector.capabilities.incrementalAuthorization) {
          throw ApiError.badRequest(
            `Payment service ${t.paymentServiceId} does not support incremental authorization`,
            [
              {
                location: 'body',
                pointer: '/amount',
                message: 'incremental authorization is off for this payment service',
                type: 'capability_disabled',
              },
            ],
          );
        }
        const incrementId = this.context.newId();
        this.store.bindRequest({ transaction_id: id, increment_id: incrementId });
        const answer = await this.store.call(() =>
          connector.incrementAuthorization({
            reference: id,
            providerTransactionId: t.paymentServiceTransactionId ?? '',
            incrementReference: incrementId,
            amount: body.amount,
            currency: t.currency,
            authorizedAmount: t.authorizedAmount,
          }),
        );
        if (answer.outcome === 'refused')
          throw ApiError.badRequest(`Payment service ${t.paymentServiceId} does not support incremental authorization`);
        const outcome =
          answer.outcome === 'succeeded'
            ? 'succeeded'
            : answer.outcome === 'declined' || answer.outcome === 'failed'
              ? 'failed'
              : 'pending';
        await this.store.command(id, {
          type: 'RecordAuthorizationIncrement',
          data: {
            incrementId,
            amount: body.amount,
            outcome,
            ...(answer.rawResponseCode ? { responseCode: answer.rawResponseCode } : {}),
          },
        });
        return {
          type: 'transaction-authorization-increment',
          status: outcome,
          amount: body.amount,
          response_code: answer.rawResponseCode ?? null,
          response_description: answer.rawResponseDescription ?? null,
          error_code: outcome === 'failed' ? (answer.errorCode ?? 'unknown_error') : null,
          transaction: await this.store.render(merchantAccountId, id),
        };
      },
      answerBound,
    );
  }

  async update(request: TransactionRequest<TransactionUpdateInput>): Promise<WireTransaction> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    await this.store.load(merchantAccountId, id);
    await this.store.command(id, {
      type: 'UpdateTransaction',
      data: {
        ...(body.external_identifier !== undefined ? { externalIdentifier: body.external_identifier } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      },
    });
    return this.store.render(merchantAccountId, id);
  }

  // ---- refunds --------------------------------------------------------------------------------------------

  createRefund(request: TransactionRequest<RefundCreateInput>): Promise<WireRefund> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.store.idempotent(
      merchantAccountId,
      `transactions.refund:${id}`,
      request.idempotency_key,
      body,
      () =>
        this.refundOnce(merchantAccountId, id, {
          ...(body.amount != null ? { amount: body.amount } : {}),
          reason: body.reason ?? undefined,
          externalIdentifier: body.external_identifier ?? undefined,
          ...(body.target_type === 'gift-card-redemption' && body.target_id
            ? { target: { type: 'gift-card-redemption', id: body.target_id } as const }
            : {}),
        }),
      async (bound) => {
        await this.context.catchUp();
        return this.refund(merchantAccountId, bound.transaction_id, bound.refund_ids?.[0] ?? '');
      },
    );
  }

  /** Everything captured and not yet refunded, one refund per instrument: the payment method, then each gift card redemption. */
  refundAll(request: TransactionRequest<RefundAllCreateInput>): Promise<Page<WireRefund>> {
    const { merchant_account_id: merchantAccountId, transaction_id: id, body } = request;
    return this.store.idempotent(
      merchantAccountId,
      `transactions.refund-all:${id}`,
      request.idempotency_key,
      body ?? {},
      async () => {
        const t = await this.store.load(merchantAccountId, id);
        const common = {
          reason: body?.reason ?? undefined,
          externalIdentifier: body?.external_identifier ?? undefined,
        };
        const targets: (RefundTarget | undefined)[] = [
          ...(hasPaymentMethod(t) || !t.giftCards ? [undefined] : []),
          ...(t.giftCards?.redemptions ?? [])
            .filter((r) => r.status === 'succeeded' && r.amount > claimedRedemptionRefunds(t, r.redemptionId))
            .map((r) => ({ type: 'gift-card-redemption' as const, id: r.redemptionId })),
        ];
        // The payment method is skipped when nothing of it is left to refund; a sole instrument still says why.
        const planned = targets.filter(
          (target) => target || !t.giftCards || capturedAmount(t) - claimedRefundAmount(t) > 0,
        );
        // Every instrument's provider is resolved before the first refund: a refusal (its service deleted or turned
        // off) refunds nothing, rather than answering 400 after refunding part of the money.
        for (const target of planned) {
          if (target) this.giftCardConnectorOf(t);
          else this.connectors.connectorFor(this.store.connectionOf(t));
        }
        const items: WireRefund[] = [];
        const made: string[] = [];
        for (const target of planned)
          items.push(await this.refundOnce(merchantAccountId, id, { ...common, ...(target ? { target } : {}) }, made));
        if (items.length === 0) items.push(await this.refundOnce(merchantAccountId, id, common, made));
        return { items, limit: 20, next_cursor: null, previous_cursor: null };
      },
      async (bound) => {
        await this.context.catchUp();
        const refund = (refundId: string) => this.refund(merchantAccountId, bound.transaction_id, refundId);
        const items = (bound.refund_ids ?? []).map(refund);
        return { items, limit: 20, next_cursor: null, previous_cursor: null };
      },
    );
  }

  /** `made`: the refunds this request made before this one (refunds/all), all bound to its Idempotency-Key. */
  private async refundOnce(
    merchantAccountId: string,
    id: string,
    input: {
      amount?: number;
      reason?: string | undefined;
      externalIdentifier?: string | undefined;
      target?: RefundTarget;
    },
    made: string[] = [],
  ): Promise<WireRefund> {
    const t = await this.store.load(merchantAccountId, id);
    // The provider is resolved first: a refund refused here (service deleted, gift cards only) claims nothing.
    const target = input.target;
    const giftCardConnector = target ? this.giftCardConnectorOf(t) : null;
    const connector = target ? null : this.connectors.connectorFor(this.store.connectionOf(t));
    const refundId = this.context.newId();
    made.push(refundId);
    this.store.bindRequest({ transaction_id: id, refund_ids: [...made] });
    const decided = await this.store.command(id, {
      type: 'RefundTransaction',
      data: {
        refundId,
        ...(input.amount !== undefined ? { amount: input.amount } : {}),
        ...(input.reason ? { reason: input.reason } : {}),
        details: input.externalIdentifier ? { externalIdentifier: input.externalIdentifier } : {},
        ...(input.target ? { target: input.target } : {}),
      },
    });
    const refund = (decided.state as Transaction).refunds.find((r) => r.id === refundId);
    const amount = refund?.amount ?? 0;
    const answer =
      target && giftCardConnector
        ? await this.store.call(() =>
            giftCardConnector.refund({
              reference: refundId,
              redemptionReference: target.id,
              amount,
              currency: t.currency,
            }),
          )
        : await this.store.call(() =>
            (connector as NonNullable<typeof connector>).refund({
              reference: id,
              providerTransactionId: t.paymentServiceTransactionId ?? '',
              refundReference: refundId,
              amount,
              currency: t.currency,
            }),
          );
    // `pending`: the refund settles later, by notification or settlement file; it stays `processing` until then.
    const providerRefundId = (answer as { providerRefundId?: string }).providerRefundId;
    const outcome = toOutcome(answer, providerRefundId);
    if (outcome) await this.store.record(id, { type: 'RecordRefundResult', data: { refundId, ...outcome } });
    else if (answer.outcome === 'pending' && providerRefundId) {
      const submitted = { refundId, providerOperationId: providerRefundId };
      await this.store.record(id, { type: 'RecordRefundSubmitted', data: submitted });
    }
    await this.context.catchUp();
    return this.refund(merchantAccountId, id, refundId);
  }

  private giftCardConnectorOf(t: Transaction) {
    const connection = t.giftCards ? this.paymentServices.connection(t.merchantAccountId, t.giftCards.serviceId) : null;
    if (!connection) throw ApiError.badRequest('The gift card service of this transaction was deleted');
    return this.connectors.giftCardConnectorFor(connection);
  }

  rpcHandlers(): RpcHandlers {
    type Ids = { merchant_account_id: string; transaction_id: string };
    /** A change a caller asked for: its events record the caller the payload names. */
    // Who acts is the call's actor, authenticated with the call (never a payload field).
    const asCaller =
      (handler: RpcHandler): RpcHandler =>
      (payload, call) =>
        this.store.actingAs(call.actor, () => handler(payload, call));
    const asSystem =
      (id: string, handler: RpcHandler): RpcHandler =>
      (payload, call) =>
        this.store.actingAs(systemActor(id), () => handler(payload, call));
    return {
      [transactionsPatterns.create]: asCaller(async (payload) =>
        this.authorizations.create(payload as TransactionCreateRequest),
      ),
      [transactionsPatterns.get]: async (payload) => {
        const p = payload as TransactionGetRequest;
        return p.as_of === undefined || p.as_of === null
          ? builtForTheCall(await this.get(p.merchant_account_id, p.transaction_id))
          : this.getAsOf(p.merchant_account_id, p.transaction_id, String(p.as_of));
      },
      // The read model's views, parsed for this read: the in-process transport need not clone them.
      [transactionsPatterns.list]: async (payload) => builtForTheCall(this.list(payload as TransactionListRequest)),
      [transactionsPatterns.update]: asCaller(async (payload) =>
        this.update(payload as TransactionRequest<TransactionUpdateInput>),
      ),
      [transactionsPatterns.events]: async (payload) => this.history(payload as TransactionPageRequest),
      [transactionsPatterns.capture]: asCaller(async (payload) =>
        this.captureTransaction(payload as TransactionCaptureRequest),
      ),
      [transactionsPatterns.captures]: async (payload) => this.captures(payload as TransactionPageRequest),
      [transactionsPatterns.captureGet]: async (payload) => {
        const p = payload as Ids & { capture_id: string };
        return this.capture(p.merchant_account_id, p.transaction_id, p.capture_id);
      },
      [transactionsPatterns.void]: asCaller(async (payload) => this.voidTransaction(payload as TransactionVoidRequest)),
      [transactionsPatterns.cancel]: asCaller(async (payload) => this.cancel(payload as TransactionRequest<undefined>)),
      [transactionsPatterns.sync]: asCaller(async (payload) => this.sync(payload as TransactionRequest<undefined>)),
      [transactionsPatterns.increment]: asCaller(async (payload) =>
        this.increment(payload as TransactionRequest<AuthorizationIncrementInput>),
      ),
      [transactionsPatterns.refund]: asCaller(async (payload) =>
        this.createRefund(payload as TransactionRequest<RefundCreateInput>),
      ),
      [transactionsPatterns.refundAll]: asCaller(async (payload) =>
        this.refundAll(payload as TransactionRequest<RefundAllCreateInput>),
      ),
      [transactionsPatterns.refunds]: async (payload) => this.refunds(payload as TransactionPageRequest),
      [transactionsPatterns.refundGet]: async (payload) => {
        const p = payload as Ids & { refund_id: string };
        return this.refund(p.merchant_account_id, p.transaction_id, p.refund_id);
      },
      [transactionsPatterns.refundById]: async (payload) => {
        const p = payload as { merchant_account_id: string; refund_id: string };
        return this.refundById(p.merchant_account_id, p.refund_id);
      },
      [transactionsPatterns.notification]: asSystem('provider-notification', async (payload) =>
        this.providerMessages.notify(payload as ProviderNotificationRequest),
      ),
      [transactionsPatterns.settlementFile]: asCaller(async (payload) =>
        this.providerMessages.ingestSettlementFile(payload as SettlementFileRequest),
      ),
      // The buyer's browser, back from a challenge or a redirect: nobody with credentials.
      [transactionsPatterns.buyerReturn]: asSystem('buyer-return', async (payload) =>
        this.authorizations.buyerReturn(payload as BuyerReturnRequest),
      ),
      [transactionsPatterns.actions]: async (payload) =>
        this.authorizations.actions((payload as Ids).merchant_account_id, (payload as Ids).transaction_id),
    };
  }
}

const systemActor = (id: string): TransactionActor => ({ type: 'system', id });

const pageQueryOf = (request: { cursor?: string | null; limit: number }): PageQuery => ({
  limit: request.limit,
  ...(request.cursor ? { cursor: request.cursor } : {}),
});
