/**
 * The buyer endpoints (`/buyers…`): validated at the edge, served by the transactions service. A buyer of another
 * merchant account, or a deleted one, does not exist (404).
 */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  buyerCreateSchema,
  buyerListQuerySchema,
  buyerPatterns,
  buyerSchema,
  buyersSchema,
  buyerUpdateSchema,
  type Buyer,
  type BuyerCreateInput,
  type BuyerCreateRequest,
  type BuyerListRequest,
  type BuyerRef,
  type BuyerUpdateInput,
  type BuyerUpdateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

export const buyerTags = ['Buyers'];
export const buyersRead = { anyOf: ['buyers.read'] };
export const buyersWrite = { anyOf: ['buyers.write'] };

export const byBuyer = z.object({ buyer_id: z.uuid() });
export type ByBuyer = z.infer<typeof byBuyer>;
const listQuery = pageQuery({ maxLimit: 100 }).extend(buyerListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;

export const buyerRefOf = (caller: Caller, params: ByBuyer): BuyerRef => ({
  merchant_account_id: accountOf(caller),
  buyer_id: params.buyer_id,
});

@Controller()
export class BuyersController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_buyers',
    method: 'GET',
    path: '/buyers',
    summary:
      "List the merchant account's buyers, newest first: `external_identifier` keeps the one buyer with exactly that identifier, " +
      '`search` the buyers whose display name or external identifier contains the text (case-insensitive)',
    tags: buyerTags,
    auth: buyersRead,
    query: listQuery,
    status: 200,
    response: { description: 'A page of buyers', schema: buyersSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<Buyer>> {
    const { cursor, limit, external_identifier: externalIdentifier, search } = input.query;
    const request: BuyerListRequest = {
      merchant_account_id: accountOf(caller),
      limit,
      ...(cursor ? { cursor } : {}),
      ...(externalIdentifier !== undefined ? { external_identifier: externalIdentifier } : {}),
      ...(search !== undefined ? { search } : {}),
    };
    return this.rpc.call(buyerPatterns.list, request);
  }

  @Endpoint({
    operationId: 'create_buyer',
    method: 'POST',
    path: '/buyers',
    summary:
      'Add a buyer. `external_identifier` is unique among the buyers of the merchant account: a second one is a 409 `duplicate_record` whose `resource_id` is the buyer holding it',
    tags: buyerTags,
    auth: buyersWrite,
    body: buyerCreateSchema,
    status: 201,
    response: { description: 'The new buyer', schema: buyerSchema },
  })
  create(@Input() input: EndpointInput<unknown, BuyerCreateInput>, @CallerOf() caller: Caller): Promise<Buyer> {
    const request: BuyerCreateRequest = { merchant_account_id: accountOf(caller), body: input.body };
    return this.rpc.call(buyerPatterns.create, request);
  }

  @Endpoint({
    operationId: 'get_buyer',
    method: 'GET',
    path: '/buyers/{buyer_id}',
    summary: 'Get a buyer',
    tags: buyerTags,
    auth: buyersRead,
    params: byBuyer,
    status: 200,
    response: { description: 'The buyer', schema: buyerSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ByBuyer>, @CallerOf() caller: Caller): Promise<Buyer> {
    return this.rpc.call(buyerPatterns.get, buyerRefOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'update_buyer',
    method: 'PUT',
    path: '/buyers/{buyer_id}',
    summary:
      'Change a buyer: only the fields sent change, `null` clears one; `billing_details` is replaced as a whole. A new `external_identifier` ' +
      'used by another buyer is a 409 `duplicate_record`; the old one is free for other buyers afterwards',
    tags: buyerTags,
    auth: buyersWrite,
    params: byBuyer,
    body: buyerUpdateSchema,
    status: 200,
    response: { description: 'The buyer after the change', schema: buyerSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, BuyerUpdateInput, ByBuyer>,
    @CallerOf() caller: Caller,
  ): Promise<Buyer> {
    const request: BuyerUpdateRequest = { ...buyerRefOf(caller, input.params), body: input.body };
    return this.rpc.call(buyerPatterns.update, request);
  }

  @Endpoint({
    operationId: 'delete_buyer',
    method: 'DELETE',
    path: '/buyers/{buyer_id}',
    summary:
      "Delete a buyer with their shipping details and stored payment methods; the buyer's card data is shredded. " +
      'The external identifier is free for another buyer afterwards',
    tags: buyerTags,
    auth: buyersWrite,
    params: byBuyer,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ByBuyer>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(buyerPatterns.delete, buyerRefOf(caller, input.params));
  }
}
