/** `GET /buyers/gift-cards`: one buyer's stored gift cards by last use (spec: scope `gift-cards.read` or `embed`). */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  buyerGiftCardListQuerySchema,
  giftCardPatterns,
  giftCardSummariesSchema,
  type BuyerGiftCardListQuery,
  type BuyerGiftCardListRequest,
  type GiftCardSummary,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { CallerOf, type Caller } from '../auth/caller';
import { buyerQueryFor } from '../auth/embed-claims';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';
import { giftCardTags, readOrEmbed } from './gift-cards.controller';

@Controller()
export class BuyerGiftCardsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_buyer_gift_cards',
    method: 'GET',
    path: '/buyers/gift-cards',
    summary:
      "List one buyer's stored gift cards (`buyer_id` or `buyer_external_identifier`, one of them) by `last_used_at`, `desc` by default, " +
      'cards never used last. Balances are not asked of the gift card service here (`balance` null): use `POST /gift-cards/balances`',
    tags: giftCardTags,
    auth: readOrEmbed,
    query: buyerGiftCardListQuerySchema,
    status: 200,
    response: { description: "The buyer's stored gift cards", schema: giftCardSummariesSchema },
  })
  list(
    @Input() input: EndpointInput<BuyerGiftCardListQuery>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: GiftCardSummary[] }> {
    const request: BuyerGiftCardListRequest = {
      merchant_account_id: accountOf(caller),
      ...buyerQueryFor(caller, input.query),
    };
    return this.rpc.call(giftCardPatterns.buyerList, request);
  }
}
