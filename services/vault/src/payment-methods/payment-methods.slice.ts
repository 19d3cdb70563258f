/**
 * Stored payment methods (`/payment-methods`, `/buyers/payment-methods`): cards kept in the card vault for later
 * payments, through the API (`succeeded` at once) or by a purchase with `store: true` (spec, Events rule 3:
 * `processing` until the provider's vault-token notification, `failed` when it never comes within
 * `vaultTokenTimeoutMs`). Other slices hook in: network tokens provision a method once it is `succeeded` and go with
 * it; the account updater replaces its number or expiry; a deleted buyer takes their methods and, by shredding their
 * data key, every card number of theirs.
 */
import { ApiError, type Page } from '@switchyard/api';
import type { BinData, CardBinInfo } from '@switchyard/bin-data';
import {
  paymentMethodPatterns,
  type BuyerPaymentMethodListRequest,
  type PaymentMethod,
  type PaymentMethodCreateRequest,
  type PaymentMethodListRequest,
  type PaymentMethodRef,
  type PaymentMethodSummary,
} from '@switchyard/contracts';
import { asDomainEvent, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type VaultContext, type VaultSlice } from '../vault-context';
import type { CardVault, StoredCard } from '../vault/card-vault';
import {
  paymentMethodDecider,
  paymentMethodStream,
  type AccountUpdateOutcome,
  type PaymentMethodCommand,
  type PaymentMethodEvent,
  type PaymentMethodState,
  type StoredPaymentMethod,
} from './payment-method';
import { PaymentMethodsReadModel, type PaymentMethodView } from './payment-methods.read-model';
import { toPaymentMethod, toPaymentMethodSummary } from './payment-method-wire';

export type { PaymentMethodView } from './payment-methods.read-model';

/** The buyers a method can belong to (the buyers slice). */
export interface BuyerDirectory {
  /** Null when neither is given; throws a 400 at `pointer` when the given buyer does not exist. */
  resolve(
    merchantAccountId: string,
    ref: { buyer_id?: string | null; buyer_external_identifier?: string | null },
    pointer: string,
  ): { readonly id: string } | null;
  /** The buyer as the `buyer` field of a payment method shows it; null once deleted. */
  wire(merchantAccountId: string, buyerId: string): Record<string, unknown> | null;
}

/** A checkout session's card, claimed once (the checkout sessions slice). */
export interface CheckoutSessionCards {
  claim(
    merchantAccountId: string,
    sessionId: string,
    usedBy: string,
    options: { readonly forStoring: true },
  ): Promise<{ readonly cardId: string; readonly card: { readonly number: string; readonly expirationDate: string } }>;
}

export interface PaymentMethodsDependencies {
  readonly vault: CardVault;
  readonly binData?: BinData;
  readonly buyers: BuyerDirectory;
  readonly checkoutSessions?: CheckoutSessionCards;
  /** How long a method stored by a purchase waits for the provider's vault token before it fails (default 10 min). */
  readonly vaultTokenTimeoutMs?: number;
  /** Told when a listener (network tokens, …) fails; the listener's own timer retries. */
  readonly onBackgroundError?: (error: unknown) => void;
}

type Listener = (view: PaymentMethodView) => Promise<void>;

export class PaymentMethods implements VaultSlice {
  readonly readModel: PaymentMethodsReadModel;
  readonly vaultTokenTimeoutMs: number;
  private readonly storedListeners: Listener[] = [];
  private readonly deletedListeners: Listener[] = [];

  constructor(
    private readonly context: VaultContext,
    private readonly deps: PaymentMethodsDependencies,
  ) {
    this.readModel = new PaymentMethodsReadModel(context.db);
    this.vaultTokenTimeoutMs = deps.vaultTokenTimeoutMs ?? 10 * 60 * 1000;
  }

  get projection() {
    return this.readModel.projection;
  }

  onStored(listener: Listener): void {
    this.storedListeners.push(listener);
  }

  onDeleted(listener: Listener): void {
    this.deletedListeners.push(listener);
  }

  /** A method of the merchant account; null when absent, deleted or another account's. */
  find(merchantAccountId: string, id: string): PaymentMethodView | null {
    const view = this.readModel.find(id);
    return view && view.merchantAccountId === merchantAccountId ? view : null;
  }

  /** The card, for a provider call only (never log, persist or emit it); null when the method or its card is gone. */
  cardOf(merchantAccountId: string, id: string): { number: string; expirationDate: string } | null {
    return this.find(merchantAccountId, id) ? this.deps.vault.reveal(merchantAccountId, id) : null;
  }

  /**
   * A method a payment may use (`payment_method: {method: "id"}`): `succeeded` only. A 400 at `/payment_method/id`
   * otherwise, saying why (unknown, still waiting for the provider's vault token, or failed to be stored).
   */
  usable(merchantAccountId: string, id: string): PaymentMethodView {
    const view = this.find(merchantAccountId, id);
    const refuse = (type: string, message: string) =>
      ApiError.badRequest(message, [{ location: 'body', pointer: '/payment_method/id', message, type }]);
    if (!view) throw refuse('payment_method_not_found', 'no stored payment method with this id');
    if (view.status === 'processing') {
      throw refuse(
        'payment_method_not_ready',
        'the payment method is still processing: the payment service has not confirmed that it stored the card (vault token) yet',
      );
    }
    if (view.status === 'failed')
      throw refuse(
        'payment_method_failed',
        'the payment method could not be stored: the payment service never confirmed it (vault token)',
      );
    return view;
  }

  // ---- the API ------------------------------------------------------------------------------------------------

  async create({ merchant_account_id: merchantAccountId, body }: PaymentMethodCreateRequest): Promise<PaymentMethod> {
    const buyer = this.deps.buyers.resolve(merchantAccountId, body, '/buyer_id');
    let stored: StoredCard;
    let bin: CardBinInfo | null;
    if (body.method === 'card') {
      stored = this.deps.vault.store(
        merchantAccountId,
        { number: body.number, expirationDate: body.expiration_date },
        { buyerId: buyer?.id ?? null },
      );
      bin = this.deps.binData?.lookup(body.number) ?? null;
    } else {
      if (!this.deps.checkoutSessions) throw ApiError.badRequest('Checkout sessions are not available');
      // The session's card moves under the buyer's data key (so deleting the buyer shreds it), and the session is used.
      // A session holding a stored method is refused here: that method is stored already (and is not to be moved).
      const claims = this.deps.checkoutSessions;
      const { cardId, card } = await claims.claim(merchantAccountId, body.id, 'payment-method', { forStoring: true });
      stored = this.deps.vault.store(merchantAccountId, card, { buyerId: buyer?.id ?? null });
      this.deps.vault.remove(merchantAccountId, cardId);
      bin = this.deps.binData?.lookup(card.number) ?? null;
    }
    try {
      await this.handle(stored.id, {
        type: 'StorePaymentMethod',
        data: {
          ...this.storedOf(merchantAccountId, stored, buyer?.id ?? null, body.external_identifier ?? null, bin),
          source: 'api',
          transactionId: null,
          paymentServiceId: null,
          status: 'succeeded',
        },
        metadata: this.metadata(),
      });
    } catch (error) {
      this.deps.vault.remove(merchantAccountId, stored.id);
      throw error;
    }
    const view = this.readModel.find(stored.id) as PaymentMethodView;
    this.announce(this.storedListeners, view);
    return this.wire(view);
  }

  get({ merchant_account_id: merchantAccountId, payment_method_id: id }: PaymentMethodRef): PaymentMethod {
    const view = this.find(merchantAccountId, id);
    if (!view) throw ApiError.notFound();
    return this.wire(view);
  }

  list(request: PaymentMethodListRequest): Page<PaymentMethod> {
    const buyerId = this.buyerFilter(request.merchant_account_id, request);
    if (buyerId === null) return { items: [], limit: request.limit, next_cursor: null, previous_cursor: null };
    const page = this.readModel.page(
      request.merchant_account_id,
      { buyerId, externalIdentifier: request.external_identifier, statuses: request.status },
      { limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) },
    );
    return { ...page, items: page.items.map((view) => this.wire(view)) };
  }

  /** One buyer's usable methods by `last_used_at` (never used: last). Cards serve every country and currency. */
  buyerList(request: BuyerPaymentMethodListRequest): { items: PaymentMethodSummary[] } {
    const buyerId = this.buyerFilter(request.merchant_account_id, request);
    if (!buyerId) return { items: [] };
    return {
      items: this.readModel.ofBuyer(request.merchant_account_id, buyerId, request.order_by).map(toPaymentMethodSummary),
    };
  }

  /** The card goes from the vault first: unrecoverable even if the rest fails (a retry finishes the job). */
  async delete(
    { merchant_account_id: merchantAccountId, payment_method_id: id }: PaymentMethodRef,
    reason: 'request' | 'buyer_deleted' = 'request',
  ): Promise<void> {
    const state = await this.state(id);
    if (state.status === 'absent' || state.status === 'deleted' || state.merchantAccountId !== merchantAccountId)
      throw ApiError.notFound();
    const view = this.readModel.find(id);
    if (view) await Promise.all(this.deletedListeners.map((listener) => listener(view)));
    this.deps.vault.remove(merchantAccountId, id);
    await this.handle(id, {
      type: 'DeletePaymentMethod',
      data: { merchantAccountId, reason },
      metadata: this.metadata(),
    });
  }

  /**
   * A buyer is being deleted: each of their methods goes (`buyer_deleted`), then their data key is shredded, which
   * makes every card of theirs — one-off purchases included — unrecoverable. Safe to repeat.
   */
  async deleteAllOfBuyer(merchantAccountId: string, buyerId: string): Promise<void> {
    for (const id of this.readModel.idsOfBuyer(merchantAccountId, buyerId)) {
      await this.delete({ merchant_account_id: merchantAccountId, payment_method_id: id }, 'buyer_deleted').catch(
        (error: unknown) => {
          if (!(error instanceof ApiError && error.status === 404)) throw error;
        },
      );
    }
    this.deps.vault.shredBuyer(merchantAccountId, buyerId);
  }

  // ---- purchases with `store: true` (spec, Events rule 3) ------------------------------------------------------

  /** The purchase's card is kept as a method `processing` until the provider confirms it vaulted it. */
  async recordStoreRequested(
    merchantAccountId: string,
    request: {
      card: StoredCard;
      bin: CardBinInfo | null;
      transactionId: string;
      paymentServiceId: string;
      buyerId: string | null;
      externalIdentifier: string | null;
    },
  ): Promise<void> {
    await this.handle(request.card.id, {
      type: 'StorePaymentMethod',
      data: {
        ...this.storedOf(merchantAccountId, request.card, request.buyerId, request.externalIdentifier, request.bin),
        source: 'transaction',
        transactionId: request.transactionId,
        paymentServiceId: request.paymentServiceId,
        status: 'processing',
      },
      metadata: this.metadata(),
    });
  }

  /** The provider's vault-token notification for a purchase: its method becomes usable. */
  async receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void> {
    const view = this.readModel.ofTransaction(transactionId);
    if (view?.status !== 'processing') return;
    await this.handle(view.id, { type: 'ReceiveVaultToken', data: { paymentServiceId }, metadata: this.metadata() });
    const now = this.readModel.find(view.id);
    if (now?.status === 'succeeded') this.announce(this.storedListeners, now);
  }

  /** Timer: methods that waited longer than `vaultTokenTimeoutMs` fail (their card stays until deleted). */
  async expireWaiting(): Promise<number> {
    const before = new Date(this.context.now().getTime() - this.vaultTokenTimeoutMs).toISOString();
    let failed = 0;
    for (const view of this.readModel.waitingSince(before, 100)) {
      await this.handle(view.id, {
        type: 'TimeOutVaultToken',
        data: { waitedMs: this.vaultTokenTimeoutMs },
        metadata: this.metadata(),
      });
      failed += 1;
    }
    return failed;
  }

  // ---- the account updater -------------------------------------------------------------------------------------

  /** An updater's answer: a new expiry and/or number goes to the vault, and the event says what changed. Idempotent by job. */
  async applyAccountUpdate(
    merchantAccountId: string,
    id: string,
    update: { jobId: string; outcome: string; number?: string; expirationDate?: string },
  ): Promise<void> {
    const state = await this.state(id);
    if (
      state.status === 'absent' ||
      state.status === 'deleted' ||
      state.merchantAccountId !== merchantAccountId ||
      state.accountUpdateJobs.includes(update.jobId)
    )
      return;
    const change = {
      ...(update.number ? { number: update.number } : {}),
      ...(update.expirationDate ? { expirationDate: update.expirationDate } : {}),
    };
    const card = Object.keys(change).length > 0 ? this.deps.vault.replace(merchantAccountId, id, change) : null;
    await this.handle(id, {
      type: 'ApplyAccountUpdate',
      data: {
        jobId: update.jobId,
        outcome: update.outcome as AccountUpdateOutcome,
        ...(card
          ? {
              card: {
                scheme: card.scheme,
                bin: card.bin,
                last4: card.last4,
                expirationDate: card.expirationDate,
                fingerprint: card.fingerprint,
              },
            }
          : {}),
      },
      metadata: this.metadata(),
    });
  }

  rpcHandlers(): RpcHandlers {
    return {
      [paymentMethodPatterns.create]: async (payload) => this.create(payload as PaymentMethodCreateRequest),
      [paymentMethodPatterns.get]: async (payload) => this.get(payload as PaymentMethodRef),
      [paymentMethodPatterns.list]: async (payload) => this.list(payload as PaymentMethodListRequest),
      [paymentMethodPatterns.delete]: async (payload) => {
        await this.delete(payload as PaymentMethodRef);
        return null;
      },
      [paymentMethodPatterns.buyerList]: async (payload) => this.buyerList(payload as BuyerPaymentMethodListRequest),
    };
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  private storedOf(
    merchantAccountId: string,
    card: StoredCard,
    buyerId: string | null,
    externalIdentifier: string | null,
    bin: CardBinInfo | null,
  ): Omit<StoredPaymentMethod, 'source' | 'transactionId' | 'paymentServiceId'> {
    return {
      id: card.id,
      merchantAccountId,
      method: 'card',
      scheme: card.scheme,
      bin: card.bin,
      last4: card.last4,
      expirationDate: card.expirationDate,
      fingerprint: card.fingerprint,
      buyerId,
      externalIdentifier,
      cardType: bin?.cardType ?? null,
      cardIssuerName: bin?.issuerName ?? null,
      country: bin?.issuerCountry ?? null,
    };
  }

  /** undefined: no buyer filter; null: the buyer asked for does not exist (an empty answer). */
  private buyerFilter(
    merchantAccountId: string,
    query: { buyer_id?: string | undefined; buyer_external_identifier?: string | undefined },
  ): string | null | undefined {
    if (query.buyer_id !== undefined) return query.buyer_id;
    if (query.buyer_external_identifier === undefined) return undefined;
    try {
      return (
        this.deps.buyers.resolve(
          merchantAccountId,
          { buyer_external_identifier: query.buyer_external_identifier },
          '/buyer_external_identifier',
        )?.id ?? null
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return null;
      throw error;
    }
  }

  private wire(view: PaymentMethodView): PaymentMethod {
    return toPaymentMethod(view, view.buyerId ? this.deps.buyers.wire(view.merchantAccountId, view.buyerId) : null);
  }

  private announce(listeners: readonly Listener[], view: PaymentMethodView): void {
    for (const listener of listeners) listener(view).catch((error: unknown) => this.deps.onBackgroundError?.(error));
  }

  private metadata() {
    return { now: this.context.now().toISOString() };
  }

  private async state(id: string): Promise<PaymentMethodState> {
    const events = await this.context.store.readStream(paymentMethodStream(id));
    return events.reduce(
      (state, event) => paymentMethodDecider.evolve(state, asDomainEvent<PaymentMethodEvent>(event)),
      paymentMethodDecider.initialState(),
    );
  }

  /** Runs the command on the method's stream, then waits for the read model (read-your-writes). */
  private async handle(id: string, command: PaymentMethodCommand): Promise<void> {
    await asApiErrors(() => handleCommand(this.context.store, paymentMethodStream(id), paymentMethodDecider, command));
    await this.context.catchUp();
  }
}
