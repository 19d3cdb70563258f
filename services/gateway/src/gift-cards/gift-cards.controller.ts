/**
 * The gift card endpoints (`/gift-cards…`): validated at the edge, served by the transactions service through the
 * merchant account's gift card service. docs/gift-cards.md describes them.
 */
import { Controller, Header, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  giftCardActivateSchema,
  giftCardBalanceRequestSchema,
  giftCardCreateSchema,
  giftCardIssuedSchema,
  giftCardIssueSchema,
  giftCardListQuerySchema,
  giftCardPatterns,
  giftCardSchema,
  giftCardsSchema,
  giftCardSummariesSchema,
  giftCardSummarySchema,
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
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { embedBuyerOf, giftCardBalancesFor, giftCardBodyFor } from '../auth/embed-claims';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf, IdempotencyKey, withIdempotencyKey } from '../transactions/transaction-http';

export const giftCardTags = ['Gift cards'];
const read = { anyOf: ['gift-cards.read'] };
const write = { anyOf: ['gift-cards.write'] };
/** Spec: browser and app integrations (embed tokens) check balances, store cards and list a buyer's cards too. */
export const readOrEmbed = { anyOf: ['gift-cards.read', 'embed'] };
const writeOrEmbed = { anyOf: ['gift-cards.write', 'embed'] };

const byGiftCard = z.object({ gift_card_id: z.uuid() });
type ByGiftCard = z.infer<typeof byGiftCard>;
const listQuery = pageQuery({ maxLimit: 100 }).extend(giftCardListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;

const writeRequest = <Body>(caller: Caller, body: Body, idempotencyKey?: string): GiftCardWriteRequest<Body> => ({
  merchant_account_id: accountOf(caller),
  body,
  ...withIdempotencyKey(idempotencyKey),
});

const refOf = (caller: Caller, params: ByGiftCard): GiftCardRef => ({
  merchant_account_id: accountOf(caller),
  gift_card_id: params.gift_card_id,
});

/**
 * Gift cards of the request's merchant account. Issue, activate, balances and store call its gift card service
 * (a payment service of method `gift-card`): without one they are a 400 (`no_gift_card_service`), with the service
 * unreachable a 502, without an answer in time a 504. A stored card of another merchant account does not exist (404).
 */
@Controller()
export class GiftCardsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'issue_gift_card',
    method: 'POST',
    path: '/gift-cards/issue',
    summary:
      'Issue a new virtual gift card loaded with `amount`. The answer carries its `number` and `pin` once: they are never stored ' +
      '(replayed only to a retry with the same `Idempotency-Key`). Honours `Idempotency-Key`',
    tags: giftCardTags,
    idempotencyKey: true,
    auth: write,
    body: giftCardIssueSchema,
    status: 201,
    response: { description: 'The new card: its summary, number and PIN', schema: giftCardIssuedSchema },
  })
  @Header('Cache-Control', 'no-store')
  issue(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, GiftCardIssueInput>,
    @CallerOf() caller: Caller,
  ): Promise<GiftCardIssued> {
    return this.rpc.call(giftCardPatterns.issue, writeRequest(caller, input.body, idempotencyKey));
  }

  @Endpoint({
    operationId: 'activate_gift_card',
    method: 'POST',
    path: '/gift-cards/activate',
    summary:
      'Activate a physical gift card, loading it with `amount` when given; answers its summary with the balance. Honours `Idempotency-Key`',
    tags: giftCardTags,
    idempotencyKey: true,
    auth: write,
    body: giftCardActivateSchema,
    status: 200,
    response: { description: 'The activated card', schema: giftCardSummarySchema },
  })
  activate(
    @IdempotencyKey() idempotencyKey: string | undefined,
    @Input() input: EndpointInput<unknown, GiftCardActivateInput>,
    @CallerOf() caller: Caller,
  ): Promise<GiftCardSummary> {
    return this.rpc.call(giftCardPatterns.activate, writeRequest(caller, input.body, idempotencyKey));
  }

  @Endpoint({
    operationId: 'list_gift_card_balances',
    method: 'POST',
    path: '/gift-cards/balances',
    summary:
      'Check the balances of 1 to 10 gift cards, given by number and PIN or stored (`{id}`): one summary per card in the same order, ' +
      'with `balance` and `currency`, or `balance_error_code` and the service’s raw code and message. A stored id unknown to the merchant account is a 404',
    tags: giftCardTags,
    auth: readOrEmbed,
    body: giftCardBalanceRequestSchema,
    status: 200,
    enumerationLimit: 'embed-token',
    response: { description: 'One summary per card, in order', schema: giftCardSummariesSchema },
  })
  balances(
    @Input() input: EndpointInput<unknown, GiftCardBalanceInput>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: GiftCardSummary[] }> {
    return this.rpc.call(giftCardPatterns.balances, {
      ...writeRequest(caller, giftCardBalancesFor(caller, input.body)),
      ...embedBuyerOf(caller),
    });
  }

  @Endpoint({
    operationId: 'create_gift_card',
    method: 'POST',
    path: '/gift-cards',
    summary:
      'Store a gift card for a buyer after checking it with the gift card service (a card it refuses is a 400 naming its error code, and is not stored)',
    tags: giftCardTags,
    auth: writeOrEmbed,
    body: giftCardCreateSchema,
    status: 201,
    enumerationLimit: 'embed-token',
    response: { description: 'The stored gift card', schema: giftCardSchema },
  })
  create(@Input() input: EndpointInput<unknown, GiftCardCreateInput>, @CallerOf() caller: Caller): Promise<GiftCard> {
    return this.rpc.call(giftCardPatterns.create, writeRequest(caller, giftCardBodyFor(caller, input.body)));
  }

  @Endpoint({
    operationId: 'list_gift_cards',
    method: 'GET',
    path: '/gift-cards',
    summary:
      "List the merchant account's stored gift cards, newest first, of one buyer when `buyer_id` or `buyer_external_identifier` is given",
    tags: giftCardTags,
    auth: read,
    query: listQuery,
    status: 200,
    response: { description: 'A page of stored gift cards', schema: giftCardsSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<GiftCard>> {
    const { cursor, limit, buyer_id: buyerId, buyer_external_identifier: buyerExternalIdentifier } = input.query;
    const request: GiftCardListRequest = {
      merchant_account_id: accountOf(caller),
      limit,
      ...(cursor ? { cursor } : {}),
      ...(buyerId !== undefined ? { buyer_id: buyerId } : {}),
      ...(buyerExternalIdentifier !== undefined ? { buyer_external_identifier: buyerExternalIdentifier } : {}),
    };
    return this.rpc.call(giftCardPatterns.list, request);
  }

  @Endpoint({
    operationId: 'get_gift_card',
    method: 'GET',
    path: '/gift-cards/{gift_card_id}',
    summary: 'Get a stored gift card',
    tags: giftCardTags,
    auth: read,
    params: byGiftCard,
    status: 200,
    response: { description: 'The stored gift card', schema: giftCardSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ByGiftCard>, @CallerOf() caller: Caller): Promise<GiftCard> {
    return this.rpc.call(giftCardPatterns.get, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'delete_gift_card',
    method: 'DELETE',
    path: '/gift-cards/{gift_card_id}',
    summary: 'Delete a stored gift card: its number and PIN are erased and cannot be recovered',
    tags: giftCardTags,
    auth: write,
    params: byGiftCard,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ByGiftCard>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(giftCardPatterns.delete, refOf(caller, input.params));
  }
}
