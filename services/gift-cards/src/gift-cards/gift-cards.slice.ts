/**
 * Gift cards — through the merchant account's gift card service (its active payment service of method `gift-card`):
 * issue a virtual card, activate a physical one, check balances; and stored cards (`gift-card-<uuid>`, number and PIN
 * in the gift card vault): store after a balance check, list, read, delete, a buyer's cards by last use. The split
 * payment flow reads a stored card's number and PIN through `credentialsFor`.
 *
 * A card number or PIN never reaches an event, a read model, a log or an error message; an issued card's number and
 * PIN are answered once (and kept only sealed, for the replay of an Idempotency-Key).
 */
import { ApiError, type ErrorDetail, type Page } from '@switchyard/api';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  giftCardDigitsOf,
  type GiftCardConnector,
  type GiftCardFailure,
} from '@switchyard/connectors';
import {
  giftCardPatterns,
  type BuyerGiftCardListRequest,
  type EmbedBuyerPin,
  type GiftCard,
  type GiftCardActivateInput,
  type GiftCardBalanceInput,
  type GiftCardCreateInput,
  type GiftCardIssued,
  type GiftCardIssueInput,
  type GiftCardListRequest,
  type GiftCardRef,
  type GiftCardSummary,
  type GiftCardWriteRequest,
} from '@switchyard/contracts';
import { asDomainEvent, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { IdempotencyStore, type IdempotencyBinding } from '@switchyard/transactions';
import type { ServiceContext, ServiceSlice } from '@switchyard/service';
import { asApiErrors } from '../errors';
import type { GiftCardSecret, GiftCardVault } from '../vault/gift-card-vault';
import {
  giftCardDecider,
  giftCardStream,
  type GiftCardCommand,
  type GiftCardEvent,
  type GiftCardServiceRef,
  type GiftCardState,
} from './gift-card';
import { storedSummary, toGiftCard, toSummary, unstored } from './gift-card-wire';
import { GiftCardsReadModel, type BuyerFilter, type GiftCardView } from './gift-cards.read-model';

/**
 * The merchant accounts' gift card services: a merchant account's active payment service of method `gift-card` and
 * its connector. The connections are the transactions service's payment services: in process its
 * `giftCardServiceDirectory` (embedded runtime), else its RPC patterns (`giftCardServicesOverRpc`, distributed).
 */
export interface GiftCardServiceDirectory {
  /** The merchant account's active gift card service and its connector; null without one. */
  activeGiftCardService(
    merchantAccountId: string,
  ): Promise<{ readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null>;
  /** The connection `id` as it is now (its display name may have changed); null once deleted. */
  serviceRef(merchantAccountId: string, id: string): Promise<GiftCardServiceRef | null>;
  /** The connection `id` (active or not) and its connector: the one a split payment planned with; null once deleted. */
  giftCardService(
    merchantAccountId: string,
    id: string,
  ): Promise<{ readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null>;
}

export interface GiftCardsDependencies {
  readonly services: GiftCardServiceDirectory;
  readonly vault: GiftCardVault;
  /** Keys the request fingerprints kept with Idempotency-Keys (they cover card numbers and PINs). */
  readonly fingerprintKey: Buffer;
}

/**
 * What an Idempotency-Key of issue and activate is recorded under (and an issued card's answer sealed for): the RPC
 * patterns of when the transactions service held gift cards, kept so that a key used before the gift cards service
 * had its own store still replays after its records moved (`gift-cards-storage.ts`).
 */
export const idempotencyOperations = {
  issue: 'transactions.gift-cards.issue',
  activate: 'transactions.gift-cards.activate',
} as const;

export class GiftCards implements ServiceSlice {
  readonly readModel: GiftCardsReadModel;
  private readonly idempotency: IdempotencyStore;

  constructor(
    private readonly context: ServiceContext,
    private readonly deps: GiftCardsDependencies,
  ) {
    this.readModel = new GiftCardsReadModel(context.db);
    this.idempotency = new IdempotencyStore(context.db, { now: context.now });
  }

  get projection() {
    return this.readModel.projection;
  }

  /**
   * A stored card's number and PIN, for the gift card service call of a payment only (never log, persist or emit
   * them). Null when the card is unknown, deleted, or another merchant account's.
   */
  credentialsFor(merchantAccountId: string, giftCardId: string): GiftCardSecret | null {
    return this.find(merchantAccountId, giftCardId) ? this.deps.vault.reveal(merchantAccountId, giftCardId) : null;
  }

  /** Whether the stored card was stored for this buyer (named the way the pin names it, as `GET /buyers/gift-cards` lists). */
  belongsTo(merchantAccountId: string, giftCardId: string, buyer: NonNullable<EmbedBuyerPin>): boolean {
    const card = this.find(merchantAccountId, giftCardId);
    if (!card) return false;
    return 'buyer_id' in buyer
      ? card.buyerId === buyer.buyer_id
      : card.buyerExternalIdentifier === buyer.buyer_external_identifier;
  }

  /** A stored card of the merchant account, without its number; null when unknown, deleted or another account's. */
  find(merchantAccountId: string, giftCardId: string): GiftCardView | null {
    const card = this.readModel.find(giftCardId);
    return card && card.merchantAccountId === merchantAccountId ? card : null;
  }

  /** A new virtual card: its summary, and its number and PIN, answered here only. */
  async issue({
    merchant_account_id: merchantAccountId,
    body,
    idempotency_key: key,
  }: GiftCardWriteRequest<GiftCardIssueInput>): Promise<GiftCardIssued> {
    const respond = async (reference: string): Promise<GiftCardIssued> => {
      const { connector } = await this.service(merchantAccountId);
      const issued = await provider(() =>
        connector.issue({
          reference,
          theme: body.theme,
          amount: body.amount,
          currency: body.currency,
        }),
      );
      if (issued.outcome === 'failed') throw refused('issue the gift card', issued);
      const { number, pin, ...balance } = issued;
      return { ...toSummary(merchantAccountId, giftCardDigitsOf(number), unstored, balance), number, pin };
    };
    if (key === undefined) return respond(this.context.newId());
    // The answer to replay is kept with the number and PIN sealed (vault encryption), bound to this request's key.
    const context = [merchantAccountId, idempotencyOperations.issue, key];
    const kept = await this.idempotent(merchantAccountId, idempotencyOperations.issue, key, body, async (reference) => {
      const { number, pin, ...summary } = await respond(reference);
      return { summary, sealed: this.deps.vault.seal({ number, pin }, context) };
    });
    const { number, pin = '' } = this.deps.vault.open(kept.sealed, context);
    return { ...kept.summary, number, pin };
  }

  /** A physical card put into use (loaded with `amount` when given): its summary with the balance. */
  activate({
    merchant_account_id: merchantAccountId,
    body,
    idempotency_key: key,
  }: GiftCardWriteRequest<GiftCardActivateInput>): Promise<GiftCardSummary> {
    return this.idempotent(merchantAccountId, idempotencyOperations.activate, key, body, async (reference) => {
      const { connector } = await this.service(merchantAccountId);
      const card = { number: body.number, ...(body.pin !== undefined ? { pin: body.pin } : {}) };
      const request = {
        reference,
        card,
        currency: body.currency,
        ...(body.amount !== undefined ? { amount: body.amount } : {}),
      };
      const activated = await provider(() => connector.activate(request));
      if (activated.outcome === 'failed') throw refused('activate the gift card', activated);
      return toSummary(merchantAccountId, giftCardDigitsOf(body.number), unstored, activated);
    });
  }

  /**
   * One summary per card, in the request's order: its balance, or why the gift card service gave none. A stored card
   * (`{id}`) unknown to the merchant account is a 404 naming the item, before any card is checked.
   */
  async balances({
    merchant_account_id: merchantAccountId,
    body,
    embed_buyer: embedBuyer,
  }: GiftCardWriteRequest<GiftCardBalanceInput>): Promise<{ items: GiftCardSummary[] }> {
    const cards = body.items.map((item, index) => {
      if (!('id' in item)) return { secret: item, stored: null };
      // An embed token reads the pinned buyer's stored cards only (issue 22, item 2).
      if (embedBuyer !== undefined && (embedBuyer === null || !this.belongsTo(merchantAccountId, item.id, embedBuyer)))
        throw notThePinnedBuyers(index);
      const stored = this.find(merchantAccountId, item.id);
      const secret = stored && this.deps.vault.reveal(merchantAccountId, item.id);
      if (!stored || !secret) throw unknownItem(index, item.id);
      return { secret, stored };
    });
    const { connector } = await this.service(merchantAccountId);
    const items = await Promise.all(
      cards.map(async ({ secret, stored }) => {
        const answer = await provider(() => connector.balance(secret));
        return stored
          ? storedSummary(stored, answer)
          : toSummary(merchantAccountId, giftCardDigitsOf(secret.number), unstored, answer);
      }),
    );
    return { items };
  }

  /** Stores a card the gift card service accepts (a balance check first): number and PIN to the vault, the rest to its stream. */
  async create({
    merchant_account_id: merchantAccountId,
    body,
  }: GiftCardWriteRequest<GiftCardCreateInput>): Promise<GiftCard> {
    const { service, connector } = await this.service(merchantAccountId);
    const secret = { number: body.number, pin: body.pin };
    const checked = await provider(() => connector.balance(secret));
    if (checked.outcome === 'failed') throw refused('store the gift card', checked);

    const id = this.context.newId();
    const digits = giftCardDigitsOf(body.number);
    this.deps.vault.store(merchantAccountId, id, secret);
    try {
      await this.handle(id, {
        type: 'StoreGiftCard',
        data: {
          id,
          merchantAccountId,
          ...digits,
          currency: checked.currency,
          expirationDate: checked.expiresAt,
          buyerId: body.buyer_id ?? null,
          buyerExternalIdentifier: body.buyer_external_identifier ?? null,
          giftCardService: service,
        },
        metadata: { now: this.context.now().toISOString() },
      });
    } catch (error) {
      this.deps.vault.erase(merchantAccountId, id);
      throw error;
    }
    return this.get({ merchant_account_id: merchantAccountId, gift_card_id: id });
  }

  /** The merchant account's stored cards, newest first, of one buyer when asked. */
  async list(request: GiftCardListRequest): Promise<Page<GiftCard>> {
    const filter = {
      ...(request.buyer_id !== undefined ? { buyerId: request.buyer_id } : {}),
      ...(request.buyer_external_identifier !== undefined
        ? { buyerExternalIdentifier: request.buyer_external_identifier }
        : {}),
    };
    const page = this.readModel.page(request.merchant_account_id, filter, {
      limit: request.limit,
      ...(request.cursor ? { cursor: request.cursor } : {}),
    });
    const refs = await this.serviceRefs(request.merchant_account_id, page.items);
    return {
      ...page,
      items: page.items.map((card) => toGiftCard(card, refs.get(card.giftCardService.id) ?? card.giftCardService)),
    };
  }

  /** A card of another merchant account, or deleted, does not exist. */
  async get({ merchant_account_id: merchantAccountId, gift_card_id: id }: GiftCardRef): Promise<GiftCard> {
    const card = this.find(merchantAccountId, id);
    if (!card) throw ApiError.notFound();
    const refs = await this.serviceRefs(merchantAccountId, [card]);
    return toGiftCard(card, refs.get(card.giftCardService.id) ?? card.giftCardService);
  }

  /** Deletes the card: its number and PIN are erased from the vault first, so they are unrecoverable even if the rest fails. */
  async delete({ merchant_account_id: merchantAccountId, gift_card_id: id }: GiftCardRef): Promise<void> {
    const state = await this.state(id);
    if (state.status !== 'present' || state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    this.deps.vault.erase(merchantAccountId, id);
    await this.handle(id, {
      type: 'DeleteGiftCard',
      data: { id, merchantAccountId },
      metadata: { now: this.context.now().toISOString() },
    });
  }

  /** One buyer's stored cards by `last_used_at` (never used: last), as stored: no balance is asked for. */
  buyerList(request: BuyerGiftCardListRequest): { items: GiftCardSummary[] } {
    const filter: BuyerFilter =
      request.buyer_id !== undefined
        ? { buyerId: request.buyer_id }
        : { buyerExternalIdentifier: request.buyer_external_identifier ?? '' };
    return {
      items: this.readModel
        .ofBuyer(request.merchant_account_id, filter, request.order_by)
        .map((card) => storedSummary(card)),
    };
  }

  rpcHandlers(): RpcHandlers {
    return {
      [giftCardPatterns.issue]: async (payload) => this.issue(payload as GiftCardWriteRequest<GiftCardIssueInput>),
      [giftCardPatterns.activate]: async (payload) =>
        this.activate(payload as GiftCardWriteRequest<GiftCardActivateInput>),
      [giftCardPatterns.balances]: async (payload) =>
        this.balances(payload as GiftCardWriteRequest<GiftCardBalanceInput>),
      [giftCardPatterns.create]: async (payload) => this.create(payload as GiftCardWriteRequest<GiftCardCreateInput>),
      [giftCardPatterns.list]: async (payload) => this.list(payload as GiftCardListRequest),
      [giftCardPatterns.get]: async (payload) => this.get(payload as GiftCardRef),
      [giftCardPatterns.delete]: async (payload) => {
        await this.delete(payload as GiftCardRef);
        return null;
      },
      [giftCardPatterns.buyerList]: async (payload) => this.buyerList(payload as BuyerGiftCardListRequest),
    };
  }

  /** The merchant account's gift card service and its connector; 400 `no_gift_card_service` without one. */
  private async service(
    merchantAccountId: string,
  ): Promise<{ service: GiftCardServiceRef; connector: GiftCardConnector }> {
    const found = await this.deps.services.activeGiftCardService(merchantAccountId);
    if (!found) {
      const message =
        'This merchant account has no active gift card service: add a payment service of a gift card definition (e.g. mock-gift-card) first';
      throw ApiError.badRequest(message, [{ location: 'body', pointer: '', message, type: 'no_gift_card_service' }]);
    }
    return found;
  }

  /**
   * The cards' gift card services as they are now (a display name may have changed), asked once per service; a
   * deleted one is left out, and its cards show it as they stored it.
   */
  private async serviceRefs(
    merchantAccountId: string,
    cards: readonly GiftCardView[],
  ): Promise<Map<string, GiftCardServiceRef>> {
    const ids = [...new Set(cards.map((card) => card.giftCardService.id))];
    const refs = await Promise.all(ids.map((id) => this.deps.services.serviceRef(merchantAccountId, id)));
    return new Map(refs.flatMap((ref, index) => (ref ? [[ids[index]!, ref] as const] : [])));
  }

  /**
   * Runs an issue or activation once per Idempotency-Key. The provider's reference (idempotent there) is bound to the
   * key before the provider is called: a request that failed after that — a timeout, a lost answer, a crash — may
   * have issued or loaded the card, so a retry with the key sends the same reference again and gets the provider's
   * first answer instead of a second card or a second load. That answer is kept with the key: later retries replay it.
   */
  private idempotent<T>(
    merchantAccountId: string,
    operation: string,
    key: string | undefined,
    body: unknown,
    execute: (reference: string) => Promise<T>,
  ): Promise<T> {
    return this.idempotency.runRequest(
      { merchantAccountId, operation, key, body, fingerprintKey: this.deps.fingerprintKey, keepsBoundAnswer: true },
      (request) => {
        const reference = this.context.newId();
        request.bind({ reference });
        request.beforeProviderCall();
        return execute(reference);
      },
      (binding) => execute(boundReference(binding)),
    );
  }

  private async state(id: string): Promise<GiftCardState> {
    const events = await this.context.store.readStream(giftCardStream(id));
    return events.reduce(
      (state, event) => giftCardDecider.evolve(state, asDomainEvent<GiftCardEvent>(event)),
      giftCardDecider.initialState(),
    );
  }

  /** Runs the command on the card's stream, then waits for the read model (read-your-writes). */
  private async handle(id: string, command: GiftCardCommand): Promise<void> {
    await asApiErrors(() => handleCommand(this.context.store, giftCardStream(id), giftCardDecider, command));
    await this.context.catchUp();
  }
}

/** The provider reference an issue or activation bound to its key (`idempotent`). */
function boundReference(binding: IdempotencyBinding): string {
  if (typeof binding.reference !== 'string')
    throw new Error('An idempotency key of a gift card request holds no reference');
  return binding.reference;
}

/**
 * A gift card service call; an unreachable provider, or one that broke the protocol, is a 502, one that gave no answer
 * in time a 504 (the message stays in the log).
 */
async function provider<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof ConnectorUnavailableError && error.timedOut) throw ApiError.gatewayTimeout(error);
    if (error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError)
      throw ApiError.badGateway(error);
    throw error;
  }
}

/** The gift card service refused: a 400 whose detail `type` is its error code (`invalid_gift_card`, `expired_card`, …). */
function refused(what: string, failure: GiftCardFailure): ApiError {
  const raw = [failure.rawErrorCode, failure.rawErrorMessage].filter(Boolean).join(': ');
  const detail: ErrorDetail = {
    location: 'body',
    pointer: '',
    message: raw || failure.errorCode,
    type: failure.errorCode,
  };
  return ApiError.badRequest(`The gift card service refused to ${what}: ${failure.errorCode}`, [detail]);
}

function notThePinnedBuyers(index: number): ApiError {
  const message = 'the stored gift card does not belong to the buyer this embed token is limited to';
  return new ApiError(403, message, [
    { location: 'body', pointer: `/items/${index}/id`, message, type: 'pinned_by_embed_token' },
  ]);
}

function unknownItem(index: number, id: string): ApiError {
  const message = `no stored gift card ${id} in this merchant account`;
  return new ApiError(404, 'The resource could not be found', [
    { location: 'body', pointer: `/items/${index}/id`, message, type: 'gift_card_not_found' },
  ]);
}
