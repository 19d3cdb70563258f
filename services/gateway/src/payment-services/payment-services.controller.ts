import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  paymentServiceCreateSchema,
  paymentServiceListQuerySchema,
  paymentServicePatterns,
  paymentServiceSchema,
  paymentServicesSchema,
  paymentServiceUpdateSchema,
  type PaymentService,
  type PaymentServiceCreateInput,
  type PaymentServiceListRequest,
  type PaymentServiceUpdateInput,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';

const byId = z.object({ payment_service_id: z.uuid() });
type ById = z.infer<typeof byId>;
const listQuery = pageQuery({ maxLimit: 100 }).extend(paymentServiceListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;
const tags = ['Payment services'];
const read = { anyOf: ['payment-services.read'] };
const write = { anyOf: ['payment-services.write'] };

/** The merchant account of the request (header `x-service-merchant-account-id`, default `default`). */
const accountOf = (caller: Caller): string => caller.merchantAccountId ?? DEFAULT_MERCHANT_ACCOUNT_ID;

/**
 * Payment services: the connections of the request's merchant account to providers, in routing order. A payment
 * service of another merchant account is not found; a key limited to other accounts gets 403 from the guard.
 */
@Controller()
export class PaymentServicesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_payment_services',
    method: 'GET',
    path: '/payment-services',
    summary: "List the merchant account's payment services in routing order (position, then oldest first)",
    tags,
    auth: read,
    query: listQuery,
    status: 200,
    response: { description: 'A page of payment services', schema: paymentServicesSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<PaymentService>> {
    const request: PaymentServiceListRequest = {
      merchant_account_id: accountOf(caller),
      limit: input.query.limit,
      ...(input.query.cursor ? { cursor: input.query.cursor } : {}),
      ...(input.query.deleted !== undefined ? { deleted: input.query.deleted } : {}),
      ...(input.query.method !== undefined ? { method: input.query.method } : {}),
    };
    return this.rpc.call(paymentServicePatterns.list, request);
  }

  @Endpoint({
    operationId: 'create_payment_service',
    method: 'POST',
    path: '/payment-services',
    summary: 'Create a payment service (a connection to a provider) for the merchant account',
    tags,
    auth: write,
    body: paymentServiceCreateSchema,
    status: 201,
    response: { description: 'The payment service', schema: paymentServiceSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, PaymentServiceCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<PaymentService> {
    return this.rpc.call(paymentServicePatterns.create, { merchant_account_id: accountOf(caller), body: input.body });
  }

  @Endpoint({
    operationId: 'get_payment_service',
    method: 'GET',
    path: '/payment-services/{payment_service_id}',
    summary: 'Get a payment service',
    tags,
    auth: read,
    params: byId,
    status: 200,
    response: { description: 'The payment service', schema: paymentServiceSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<PaymentService> {
    return this.rpc.call(paymentServicePatterns.get, {
      merchant_account_id: accountOf(caller),
      id: input.params.payment_service_id,
    });
  }

  @Endpoint({
    operationId: 'update_payment_service',
    method: 'PUT',
    path: '/payment-services/{payment_service_id}',
    summary: 'Update a payment service: only the fields sent change; `capabilities` can only turn capabilities off',
    tags,
    auth: write,
    params: byId,
    body: paymentServiceUpdateSchema,
    status: 200,
    response: { description: 'The payment service', schema: paymentServiceSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, PaymentServiceUpdateInput, ById>,
    @CallerOf() caller: Caller,
  ): Promise<PaymentService> {
    return this.rpc.call(paymentServicePatterns.update, {
      merchant_account_id: accountOf(caller),
      id: input.params.payment_service_id,
      body: input.body,
    });
  }

  @Endpoint({
    operationId: 'delete_payment_service',
    method: 'DELETE',
    path: '/payment-services/{payment_service_id}',
    summary: 'Delete a payment service; it is not found afterwards (listed with `deleted=true`)',
    tags,
    auth: write,
    params: byId,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(paymentServicePatterns.delete, {
      merchant_account_id: accountOf(caller),
      id: input.params.payment_service_id,
    });
  }
}
