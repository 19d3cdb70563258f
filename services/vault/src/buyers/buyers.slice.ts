/**
 * Buyers of a merchant account (`buyer-<uuid>`): create, list, read, update, delete, with billing details and
 * shipping details; other slices find a buyer here (`find`, `findByExternalIdentifier`, `resolve`).
 *
 * The external identifier is unique among a merchant account's live buyers, across processes: claimed before the
 * buyer's event that sets it, released after the one that drops it (`external-identifier-claims.ts`). A second
 * buyer with it is a 409 `duplicate_record` whose `resource_id` is the buyer holding it.
 */
import { ApiError, type ErrorDetail, type Page } from '@switchyard/api';
import {
  buyerPatterns,
  type Buyer,
  type BuyerCreateRequest,
  type BuyerListRequest,
  type BuyerRef,
  type BuyerUpdateRequest,
  type ShippingDetails,
  type ShippingDetailsCreateRequest,
  type ShippingDetailsRef,
  type ShippingDetailsUpdateRequest,
} from '@switchyard/contracts';
import { appendEvents, asDomainEvent, handleCommand, type HandledCommand } from '@switchyard/decider';
import { WrongExpectedRevisionError } from '@switchyard/eventstore';
import type { RpcHandlers } from '@switchyard/rpc';
import { domainErrorMapper, KeyedQueue, withApiErrors } from '@switchyard/service';
import type { VaultContext, VaultSlice } from '../vault-context';
import {
  buyerDecider,
  buyerStream,
  type BuyerCommand,
  type BuyerEvent,
  type BuyerState,
  type PresentBuyer,
} from './buyer';
import { ExternalIdentifierTaken } from './buyer-external-identifier';
import {
  buyerChangesOf,
  buyerDetailsOf,
  shippingDetailsChangesOf,
  shippingDetailsOf,
  toBuyer,
  toShippingDetails,
} from './buyer-wire';
import { BuyersReadModel, type BuyerView } from './buyers.read-model';
import { ExternalIdentifierClaims } from './external-identifier-claims';

export interface BuyersDependencies {
  /**
   * Runs before a buyer is deleted (their payment methods deleted, their card data key shredded). When it throws,
   * the buyer stays and the request fails (5xx); it must be idempotent, since the retry runs it again.
   */
  readonly onDelete: (merchantAccountId: string, buyerId: string) => Promise<void>;
}

/** How a buyer is given in another resource's request (`buyer_id` or `buyer_external_identifier`, not both). */
export interface BuyerReference {
  readonly buyer_id?: string | null;
  readonly buyer_external_identifier?: string | null;
}

/** The buyer codes that are not a plain 400 (kept here, like the gift cards', beside the slice). */
const toApiError = domainErrorMapper({
  buyer_not_found: 404,
  buyer_exists: 409,
  shipping_details_not_found: 404,
  shipping_details_exists: 409,
});
const asApiErrors = withApiErrors(toApiError);

/** Conflicts on the buyer's stream tolerated by an update before the caller gets a 409 "retry". */
const MAX_UPDATE_ROUNDS = 5;

export class Buyers implements VaultSlice {
  readonly readModel: BuyersReadModel;
  private readonly claims: ExternalIdentifierClaims;
  /** Writes to one buyer queue in this process (fewer revision conflicts); across processes the revisions decide. */
  private readonly writes = new KeyedQueue();

  constructor(
    private readonly context: VaultContext,
    private readonly deps: BuyersDependencies,
  ) {
    this.readModel = new BuyersReadModel(context.db);
    this.claims = new ExternalIdentifierClaims(context.store, context.now);
  }

  get projection() {
    return this.readModel.projection;
  }

  /** A live buyer of the merchant account; null when unknown, deleted or another account's. */
  find(merchantAccountId: string, buyerId: string): BuyerView | null {
    const buyer = this.readModel.find(buyerId);
    return buyer && buyer.merchantAccountId === merchantAccountId ? buyer : null;
  }

  findByExternalIdentifier(merchantAccountId: string, externalIdentifier: string): BuyerView | null {
    return this.readModel.findByExternalIdentifier(merchantAccountId, externalIdentifier);
  }

  /**
   * The buyer a request names: null when it names none; a 400 whose detail is at `pointer` when it names both
   * fields (type `mutually_exclusive`) or a buyer the merchant account does not have (type `buyer_not_found`).
   */
  resolve(merchantAccountId: string, ref: BuyerReference, pointer: string): BuyerView | null {
    const id = ref.buyer_id ?? null;
    const externalIdentifier = ref.buyer_external_identifier ?? null;
    const refuse = (message: string, type: string): ApiError =>
      ApiError.badRequest(message, [{ location: 'body', pointer, message, type }]);
    if (id !== null && externalIdentifier !== null)
      throw refuse(
        'buyer_id and buyer_external_identifier are mutually exclusive: give one of them',
        'mutually_exclusive',
      );
    if (id !== null)
      return (
        this.find(merchantAccountId, id) ??
        throwing(refuse(`no buyer ${id} in this merchant account`, 'buyer_not_found'))
      );
    if (externalIdentifier !== null) {
      return (
        this.findByExternalIdentifier(merchantAccountId, externalIdentifier) ??
        throwing(
          refuse(
            `no buyer with external_identifier ${JSON.stringify(externalIdentifier)} in this merchant account`,
            'buyer_not_found',
          ),
        )
      );
    }
    return null;
  }

  async create({ merchant_account_id: merchantAccountId, body }: BuyerCreateRequest): Promise<Buyer> {
    const id = this.context.newId();
    const details = buyerDetailsOf(body);
    const externalIdentifier = details.externalIdentifier;
    if (externalIdentifier !== null) await this.claim(merchantAccountId, externalIdentifier, id);
    try {
      await asApiErrors(() =>
        handleCommand(this.context.store, buyerStream(id), buyerDecider, {
          type: 'CreateBuyer',
          data: { id, merchantAccountId, ...details },
          metadata: this.metadata(),
        }),
      );
    } catch (error) {
      if (externalIdentifier === null) throw error;
      // The claim goes back; when another buyer took it over meanwhile (this stream was fenced), that is the duplicate.
      await asApiErrors(() => this.claims.release(merchantAccountId, externalIdentifier, id));
      const holder = await this.claims.holder(merchantAccountId, externalIdentifier);
      throw holder !== null && holder !== id ? duplicate(externalIdentifier, holder) : error;
    }
    await this.context.catchUp();
    return this.get({ merchant_account_id: merchantAccountId, buyer_id: id });
  }

  /** The merchant account's live buyers, newest first, filtered by exact external identifier and/or a search text. */
  list(request: BuyerListRequest): Page<Buyer> {
    const filter = {
      ...(request.external_identifier !== undefined ? { externalIdentifier: request.external_identifier } : {}),
      ...(request.search !== undefined ? { search: request.search } : {}),
    };
    const page = this.readModel.page(request.merchant_account_id, filter, {
      limit: request.limit,
      ...(request.cursor ? { cursor: request.cursor } : {}),
    });
    return { ...page, items: page.items.map(toBuyer) };
  }

  get({ merchant_account_id: merchantAccountId, buyer_id: buyerId }: BuyerRef): Buyer {
    return toBuyer(this.required(merchantAccountId, buyerId));
  }

  /**
   * Changes the fields sent. A new external identifier is claimed before the change is appended, at the revision
   * read before claiming (a conflict: read, decide and claim again), and the old one is released after.
   */
  update(request: BuyerUpdateRequest): Promise<Buyer> {
    return this.writes.run(request.buyer_id, () => this.applyUpdate(request));
  }

  private async applyUpdate({
    merchant_account_id: merchantAccountId,
    buyer_id: id,
    body,
  }: BuyerUpdateRequest): Promise<Buyer> {
    const command: BuyerCommand = {
      type: 'UpdateBuyer',
      data: { merchantAccountId, changes: buyerChangesOf(body) },
      metadata: this.metadata(),
    };
    const stream = buyerStream(id);
    let claimed: string | null = null;
    let replaced: string | null = null;
    try {
      for (let round = 1; ; round += 1) {
        const recorded = await this.context.store.readStream(stream);
        const state = fold(recorded);
        const events = buyerDecider.decide(command, state);
        const update = events[0];
        if (update?.type !== 'BuyerUpdated') break;
        const next = update.data.externalIdentifier;
        if (next != null) {
          await this.claim(merchantAccountId, next, id);
          claimed = next;
        }
        try {
          await appendEvents(this.context.store, stream, events, { expectedRevision: recorded.length - 1 });
        } catch (error) {
          if (error instanceof WrongExpectedRevisionError && round < MAX_UPDATE_ROUNDS) continue;
          throw error;
        }
        if (next !== undefined) replaced = (state as PresentBuyer).details.externalIdentifier;
        claimed = null;
        break;
      }
    } catch (error) {
      throw toApiError(error);
    } finally {
      // A claim taken in a round whose change was not appended goes back (kept if the buyer uses it by now).
      if (claimed !== null) await this.claims.release(merchantAccountId, claimed, id);
    }
    if (replaced !== null) await asApiErrors(() => this.claims.release(merchantAccountId, replaced, id));
    await this.context.catchUp();
    return this.get({ merchant_account_id: merchantAccountId, buyer_id: id });
  }

  /**
   * `onDelete` first (payment methods, card data key): when it fails, the buyer stays. Then `BuyerDeleted`, then the
   * external identifier's claim is released, so another buyer may take it.
   */
  delete(ref: BuyerRef): Promise<void> {
    return this.writes.run(ref.buyer_id, () => this.applyDelete(ref));
  }

  private async applyDelete({ merchant_account_id: merchantAccountId, buyer_id: id }: BuyerRef): Promise<void> {
    const state = fold(await this.context.store.readStream(buyerStream(id)));
    if (state.status !== 'present' || state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    try {
      await this.deps.onDelete(merchantAccountId, id);
    } catch (error) {
      throw error instanceof ApiError && error.status >= 500 ? error : ApiError.serverError(error);
    }
    const { events } = await this.handle(id, {
      type: 'DeleteBuyer',
      data: { merchantAccountId },
      metadata: this.metadata(),
    });
    const deleted = events[0];
    const externalIdentifier = deleted?.type === 'BuyerDeleted' ? deleted.data.externalIdentifier : null;
    if (externalIdentifier !== null)
      await asApiErrors(() => this.claims.release(merchantAccountId, externalIdentifier, id));
    await this.context.catchUp();
  }

  /** A live buyer's shipping details, oldest first. */
  listShippingDetails({ merchant_account_id: merchantAccountId, buyer_id: buyerId }: BuyerRef): {
    items: ShippingDetails[];
  } {
    const buyer = this.required(merchantAccountId, buyerId);
    return { items: this.readModel.shippingDetailsOf(buyer.id).map(toShippingDetails) };
  }

  async createShippingDetails({
    merchant_account_id: merchantAccountId,
    buyer_id: buyerId,
    body,
  }: ShippingDetailsCreateRequest): Promise<ShippingDetails> {
    const shippingDetailsId = this.context.newId();
    await this.queued(buyerId, {
      type: 'AddShippingDetails',
      data: { merchantAccountId, shippingDetailsId, details: shippingDetailsOf(body) },
      metadata: this.metadata(),
    });
    await this.context.catchUp();
    return this.getShippingDetails({
      merchant_account_id: merchantAccountId,
      buyer_id: buyerId,
      shipping_details_id: shippingDetailsId,
    });
  }

  getShippingDetails({
    merchant_account_id: merchantAccountId,
    buyer_id: buyerId,
    shipping_details_id: id,
  }: ShippingDetailsRef): ShippingDetails {
    const details = this.readModel.findShippingDetails(id);
    if (!details || details.buyerId !== buyerId || details.merchantAccountId !== merchantAccountId)
      throw ApiError.notFound();
    return toShippingDetails(details);
  }

  async updateShippingDetails({
    merchant_account_id: merchantAccountId,
    buyer_id: buyerId,
    shipping_details_id: id,
    body,
  }: ShippingDetailsUpdateRequest): Promise<ShippingDetails> {
    await this.queued(buyerId, {
      type: 'UpdateShippingDetails',
      data: { merchantAccountId, shippingDetailsId: id, changes: shippingDetailsChangesOf(body) },
      metadata: this.metadata(),
    });
    await this.context.catchUp();
    return this.getShippingDetails({
      merchant_account_id: merchantAccountId,
      buyer_id: buyerId,
      shipping_details_id: id,
    });
  }

  async deleteShippingDetails({
    merchant_account_id: merchantAccountId,
    buyer_id: buyerId,
    shipping_details_id: id,
  }: ShippingDetailsRef): Promise<void> {
    await this.queued(buyerId, {
      type: 'RemoveShippingDetails',
      data: { merchantAccountId, shippingDetailsId: id },
      metadata: this.metadata(),
    });
    await this.context.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    const done =
      <T>(action: (payload: T) => Promise<void>) =>
      async (payload: unknown) => {
        await action(payload as T);
        return null;
      };
    return {
      [buyerPatterns.list]: async (payload) => this.list(payload as BuyerListRequest),
      [buyerPatterns.create]: async (payload) => this.create(payload as BuyerCreateRequest),
      [buyerPatterns.get]: async (payload) => this.get(payload as BuyerRef),
      [buyerPatterns.update]: async (payload) => this.update(payload as BuyerUpdateRequest),
      [buyerPatterns.delete]: done<BuyerRef>((ref) => this.delete(ref)),
      [buyerPatterns.shippingDetailsList]: async (payload) => this.listShippingDetails(payload as BuyerRef),
      [buyerPatterns.shippingDetailsCreate]: async (payload) =>
        this.createShippingDetails(payload as ShippingDetailsCreateRequest),
      [buyerPatterns.shippingDetailsGet]: async (payload) => this.getShippingDetails(payload as ShippingDetailsRef),
      [buyerPatterns.shippingDetailsUpdate]: async (payload) =>
        this.updateShippingDetails(payload as ShippingDetailsUpdateRequest),
      [buyerPatterns.shippingDetailsDelete]: done<ShippingDetailsRef>((ref) => this.deleteShippingDetails(ref)),
    };
  }

  private required(merchantAccountId: string, buyerId: string): BuyerView {
    const buyer = this.find(merchantAccountId, buyerId);
    if (!buyer) throw ApiError.notFound();
    return buyer;
  }

  /** Claims the identifier for the buyer; another buyer using it is a 409 naming that buyer. */
  private async claim(merchantAccountId: string, externalIdentifier: string, buyerId: string): Promise<void> {
    try {
      await this.claims.claim(merchantAccountId, externalIdentifier, buyerId);
    } catch (error) {
      if (error instanceof ExternalIdentifierTaken) throw duplicate(externalIdentifier, error.holderId);
      throw error;
    }
  }

  /** Runs the command on the buyer's stream (a conflict: read and decide again); not queued (callers are). */
  private handle(id: string, command: BuyerCommand): Promise<HandledCommand<BuyerEvent, BuyerState>> {
    return asApiErrors(() => handleCommand(this.context.store, buyerStream(id), buyerDecider, command));
  }

  private queued(id: string, command: BuyerCommand): Promise<HandledCommand<BuyerEvent, BuyerState>> {
    return this.writes.run(id, () => this.handle(id, command));
  }

  private metadata() {
    return { now: this.context.now().toISOString() };
  }
}

const fold = (recorded: Parameters<typeof asDomainEvent>[0][]): BuyerState =>
  recorded.reduce(
    (state, event) => buyerDecider.evolve(state, asDomainEvent<BuyerEvent>(event)),
    buyerDecider.initialState(),
  );

function duplicate(externalIdentifier: string, holderId: string): ApiError {
  const message = `A buyer with external_identifier ${JSON.stringify(externalIdentifier)} already exists in this merchant account`;
  const detail: ErrorDetail = {
    location: 'body',
    pointer: '/external_identifier',
    message: 'is already used by another buyer',
    type: 'duplicate_record',
  };
  return new ApiError(409, message, [detail], { resourceId: holderId });
}

function throwing(error: ApiError): never {
  throw error;
}
