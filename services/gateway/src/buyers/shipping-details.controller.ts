/** A buyer's shipping details (`/buyers/{buyer_id}/shipping-details…`); under an unknown or deleted buyer, none exist (404). */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  buyerPatterns,
  shippingDetailsCreateSchema,
  shippingDetailsListSchema,
  shippingDetailsSchema,
  shippingDetailsUpdateSchema,
  type ShippingDetails,
  type ShippingDetailsCreateInput,
  type ShippingDetailsCreateRequest,
  type ShippingDetailsRef,
  type ShippingDetailsUpdateInput,
  type ShippingDetailsUpdateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { buyerRefOf, buyersRead, buyersWrite, buyerTags, byBuyer, type ByBuyer } from './buyers.controller';

const byShippingDetails = byBuyer.extend({ shipping_details_id: z.uuid() });
type ByShippingDetails = z.infer<typeof byShippingDetails>;

const refOf = (caller: Caller, params: ByShippingDetails): ShippingDetailsRef => ({
  ...buyerRefOf(caller, params),
  shipping_details_id: params.shipping_details_id,
});

@Controller()
export class ShippingDetailsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_buyer_shipping_details',
    method: 'GET',
    path: '/buyers/{buyer_id}/shipping-details',
    summary: "List a buyer's shipping details, oldest first",
    tags: buyerTags,
    auth: buyersRead,
    params: byBuyer,
    status: 200,
    response: { description: "The buyer's shipping details", schema: shippingDetailsListSchema },
  })
  list(
    @Input() input: EndpointInput<unknown, unknown, ByBuyer>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: ShippingDetails[] }> {
    return this.rpc.call(buyerPatterns.shippingDetailsList, buyerRefOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'create_buyer_shipping_details',
    method: 'POST',
    path: '/buyers/{buyer_id}/shipping-details',
    summary: 'Add shipping details (a delivery address) to a buyer',
    tags: buyerTags,
    auth: buyersWrite,
    params: byBuyer,
    body: shippingDetailsCreateSchema,
    status: 201,
    response: { description: 'The new shipping details', schema: shippingDetailsSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, ShippingDetailsCreateInput, ByBuyer>,
    @CallerOf() caller: Caller,
  ): Promise<ShippingDetails> {
    const request: ShippingDetailsCreateRequest = { ...buyerRefOf(caller, input.params), body: input.body };
    return this.rpc.call(buyerPatterns.shippingDetailsCreate, request);
  }

  @Endpoint({
    operationId: 'get_buyer_shipping_details',
    method: 'GET',
    path: '/buyers/{buyer_id}/shipping-details/{shipping_details_id}',
    summary: "Get one of a buyer's shipping details",
    tags: buyerTags,
    auth: buyersRead,
    params: byShippingDetails,
    status: 200,
    response: { description: 'The shipping details', schema: shippingDetailsSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, ByShippingDetails>,
    @CallerOf() caller: Caller,
  ): Promise<ShippingDetails> {
    return this.rpc.call(buyerPatterns.shippingDetailsGet, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'update_buyer_shipping_details',
    method: 'PUT',
    path: '/buyers/{buyer_id}/shipping-details/{shipping_details_id}',
    summary:
      'Change shipping details: only the fields sent change, `null` clears one; `address` is replaced as a whole',
    tags: buyerTags,
    auth: buyersWrite,
    params: byShippingDetails,
    body: shippingDetailsUpdateSchema,
    status: 200,
    response: { description: 'The shipping details after the change', schema: shippingDetailsSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, ShippingDetailsUpdateInput, ByShippingDetails>,
    @CallerOf() caller: Caller,
  ): Promise<ShippingDetails> {
    const request: ShippingDetailsUpdateRequest = { ...refOf(caller, input.params), body: input.body };
    return this.rpc.call(buyerPatterns.shippingDetailsUpdate, request);
  }

  @Endpoint({
    operationId: 'delete_buyer_shipping_details',
    method: 'DELETE',
    path: '/buyers/{buyer_id}/shipping-details/{shipping_details_id}',
    summary: "Delete one of a buyer's shipping details",
    tags: buyerTags,
    auth: buyersWrite,
    params: byShippingDetails,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(
    @Input() input: EndpointInput<unknown, unknown, ByShippingDetails>,
    @CallerOf() caller: Caller,
  ): Promise<void> {
    await this.rpc.call(buyerPatterns.shippingDetailsDelete, refOf(caller, input.params));
  }
}
