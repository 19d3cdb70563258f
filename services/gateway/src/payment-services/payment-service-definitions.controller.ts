import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page, type PageQuery } from '@switchyard/api';
import {
  paymentServiceDefinitionPatterns,
  paymentServiceDefinitionSchema,
  paymentServiceDefinitionsSchema,
  type PaymentServiceDefinition,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';

const byId = z.object({ payment_service_definition_id: z.string().min(1).max(100) });
type ById = z.infer<typeof byId>;
const tags = ['Payment service definitions'];
const read = { anyOf: ['payment-service-definitions.read'] };

/** The providers a payment service can connect to (`mock-card` first); the same for every merchant account. */
@Controller()
export class PaymentServiceDefinitionsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_payment_service_definitions',
    method: 'GET',
    path: '/payment-service-definitions',
    summary: 'List the payment service definitions, by id',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    query: pageQuery({ maxLimit: 100 }),
    status: 200,
    response: { description: 'A page of payment service definitions', schema: paymentServiceDefinitionsSchema },
  })
  list(@Input() input: EndpointInput<PageQuery>): Promise<Page<PaymentServiceDefinition>> {
    return this.rpc.call(paymentServiceDefinitionPatterns.list, input.query);
  }

  @Endpoint({
    operationId: 'get_payment_service_definition',
    method: 'GET',
    path: '/payment-service-definitions/{payment_service_definition_id}',
    summary: 'Get a payment service definition',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    params: byId,
    status: 200,
    response: { description: 'The payment service definition', schema: paymentServiceDefinitionSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ById>): Promise<PaymentServiceDefinition> {
    return this.rpc.call(paymentServiceDefinitionPatterns.get, { id: input.params.payment_service_definition_id });
  }
}
