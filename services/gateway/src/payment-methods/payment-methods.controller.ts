/**
 * Stored payment methods (`/payment-methods`, `/buyers/payment-methods`): validated at the edge, served by the
 * transactions service's vault slices. A card number never comes back: BIN, last four, scheme and expiry only.
 */
import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  buyerPaymentMethodListQuerySchema,
  paymentMethodCreateSchema,
  paymentMethodListQuerySchema,
  paymentMethodPatterns,
  paymentMethodSchema,
  paymentMethodsSchema,
  paymentMethodSummariesSchema,
  type BuyerPaymentMethodListQuery,
  type PaymentMethod,
  type PaymentMethodCreateInput,
  type PaymentMethodListRequest,
  type PaymentMethodRef,
  type PaymentMethodSummary,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { accountOf } from '../transactions/transaction-http';

export const paymentMethodTags = ['Payment methods'];
export const paymentMethodsRead = { anyOf: ['payment-methods.read'] };
export const paymentMethodsWrite = { anyOf: ['payment-methods.write'] };

export const byPaymentMethod = z.object({ payment_method_id: z.uuid() });
type ByPaymentMethod = z.infer<typeof byPaymentMethod>;
const listQuery = pageQuery({ maxLimit: 100 }).extend(paymentMethodListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;

const refOf = (caller: Caller, params: ByPaymentMethod): PaymentMethodRef => ({
  merchant_account_id: accountOf(caller),
  payment_method_id: params.payment_method_id,
});

@Controller()
export class PaymentMethodsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'create_payment_method',
    method: 'POST',
    path: '/payment-methods',
    summary:
      'Store a card in the vault (`method: "card"`), or the card of a checkout session whose fields were filled in (`method: "checkout-session"`: ' +
      'the session is used). Stored for a buyer with `buyer_id` or `buyer_external_identifier`. The security code is never stored',
    tags: paymentMethodTags,
    auth: paymentMethodsWrite,
    body: paymentMethodCreateSchema,
    status: 201,
    response: { description: 'The stored payment method (`succeeded`)', schema: paymentMethodSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, PaymentMethodCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<PaymentMethod> {
    return this.rpc.call(paymentMethodPatterns.create, { merchant_account_id: accountOf(caller), body: input.body });
  }

  @Endpoint({
    operationId: 'list_payment_methods',
    method: 'GET',
    path: '/payment-methods',
    summary:
      "List the merchant account's stored payment methods, newest first; filters: buyer, external identifier, status (repeatable)",
    tags: paymentMethodTags,
    auth: paymentMethodsRead,
    query: listQuery,
    status: 200,
    response: { description: 'A page of payment methods', schema: paymentMethodsSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<PaymentMethod>> {
    const { cursor, ...query } = input.query;
    const request: PaymentMethodListRequest = {
      merchant_account_id: accountOf(caller),
      ...query,
      ...(cursor ? { cursor } : {}),
    };
    return this.rpc.call(paymentMethodPatterns.list, request);
  }

  @Endpoint({
    operationId: 'list_buyer_payment_methods',
    method: 'GET',
    path: '/buyers/payment-methods',
    summary:
      "List one buyer's usable (`succeeded`) payment methods (`buyer_id` or `buyer_external_identifier`, one of them) by `last_used_at`, " +
      '`desc` by default, methods never used last',
    tags: paymentMethodTags,
    auth: paymentMethodsRead,
    query: buyerPaymentMethodListQuerySchema,
    status: 200,
    response: { description: "The buyer's payment methods", schema: paymentMethodSummariesSchema },
  })
  buyerList(
    @Input() input: EndpointInput<BuyerPaymentMethodListQuery>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: PaymentMethodSummary[] }> {
    return this.rpc.call(paymentMethodPatterns.buyerList, { merchant_account_id: accountOf(caller), ...input.query });
  }

  @Endpoint({
    operationId: 'get_payment_method',
    method: 'GET',
    path: '/payment-methods/{payment_method_id}',
    summary: 'Get a stored payment method',
    tags: paymentMethodTags,
    auth: paymentMethodsRead,
    params: byPaymentMethod,
    status: 200,
    response: { description: 'The payment method', schema: paymentMethodSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, ByPaymentMethod>,
    @CallerOf() caller: Caller,
  ): Promise<PaymentMethod> {
    return this.rpc.call(paymentMethodPatterns.get, refOf(caller, input.params));
  }

  @Endpoint({
    operationId: 'delete_payment_method',
    method: 'DELETE',
    path: '/payment-methods/{payment_method_id}',
    summary:
      'Delete a stored payment method: its card number is erased from the vault and cannot be recovered; its network tokens are deleted too',
    tags: paymentMethodTags,
    auth: paymentMethodsWrite,
    params: byPaymentMethod,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(
    @Input() input: EndpointInput<unknown, unknown, ByPaymentMethod>,
    @CallerOf() caller: Caller,
  ): Promise<void> {
    await this.rpc.call(paymentMethodPatterns.delete, refOf(caller, input.params));
  }
}
