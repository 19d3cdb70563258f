/** The flow rule endpoints (`/flows/{flow}/rules`): validated at the edge, served by the transactions service. */
import { Controller, Inject } from '@nestjs/common';
import { ApiError, Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  flowNames,
  flowRuleCreateSchema,
  flowRuleListQuerySchema,
  flowRulePatterns,
  flowRuleSchema,
  flowRulesSchema,
  flowRuleUpdateSchema,
  servedFlows,
  type FlowName,
  type FlowRule,
  type FlowRuleCreateInput,
  type FlowRuleListRequest,
  type FlowRuleScope,
  type FlowRuleUpdateInput,
  type ServedFlow,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';

const byFlow = z.object({
  flow: z.enum(flowNames).meta({ description: 'Only `card-transaction` has rules yet; the other flows are a 400.' }),
});
type ByFlow = z.infer<typeof byFlow>;
const byId = byFlow.extend({ rule_id: z.uuid() });
type ById = z.infer<typeof byId>;
const listQuery = pageQuery({ maxLimit: 100 }).extend(flowRuleListQuerySchema.shape);
type ListQuery = z.infer<typeof listQuery>;
const path = '/flows/{flow}/rules';
const tags = ['Flows'];
const read = { anyOf: ['flows.read'] };
const write = { anyOf: ['flows.write'] };

const isServed = (flow: FlowName): flow is ServedFlow => (servedFlows as readonly FlowName[]).includes(flow);

/** The merchant account of the request (header `x-service-merchant-account-id`, default `default`) and its flow. */
function scopeOf(caller: Caller, flow: FlowName): FlowRuleScope {
  if (!isServed(flow)) {
    const message = `The ${flow} flow is not supported yet: only ${servedFlows.join(', ')} has rules`;
    throw ApiError.badRequest(message, [{ location: 'path', pointer: '/flow', message, type: 'unsupported_flow' }]);
  }
  return { merchant_account_id: caller.merchantAccountId ?? DEFAULT_MERCHANT_ACCOUNT_ID, flow };
}

/**
 * Flow rules: per merchant account and flow, the rules that route a transaction, decline it early, or skip or
 * force 3-D Secure. A rule of another merchant account is not found; a key limited to other accounts gets 403.
 */
@Controller()
export class FlowRulesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_flow_rules',
    method: 'GET',
    path,
    summary: "List the merchant account's rules of a flow by action, then position, then oldest first",
    tags,
    auth: read,
    params: byFlow,
    query: listQuery,
    status: 200,
    response: { description: 'A page of flow rules', schema: flowRulesSchema },
  })
  list(@Input() input: EndpointInput<ListQuery, unknown, ByFlow>, @CallerOf() caller: Caller): Promise<Page<FlowRule>> {
    const request: FlowRuleListRequest = {
      ...scopeOf(caller, input.params.flow),
      limit: input.query.limit,
      ...(input.query.cursor ? { cursor: input.query.cursor } : {}),
      ...(input.query.action !== undefined ? { action: input.query.action } : {}),
    };
    return this.rpc.call(flowRulePatterns.list, request);
  }

  @Endpoint({
    operationId: 'create_flow_rule',
    method: 'POST',
    path,
    summary: 'Create a flow rule; without a position it goes after the last rule of its action',
    tags,
    auth: write,
    params: byFlow,
    body: flowRuleCreateSchema,
    status: 201,
    response: { description: 'The flow rule', schema: flowRuleSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, FlowRuleCreateInput, ByFlow>,
    @CallerOf() caller: Caller,
  ): Promise<FlowRule> {
    return this.rpc.call(flowRulePatterns.create, { ...scopeOf(caller, input.params.flow), body: input.body });
  }

  @Endpoint({
    operationId: 'get_flow_rule',
    method: 'GET',
    path: `${path}/{rule_id}`,
    summary: 'Get a flow rule',
    tags,
    auth: read,
    params: byId,
    status: 200,
    response: { description: 'The flow rule', schema: flowRuleSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<FlowRule> {
    return this.rpc.call(flowRulePatterns.get, { ...scopeOf(caller, input.params.flow), id: input.params.rule_id });
  }

  @Endpoint({
    operationId: 'update_flow_rule',
    method: 'PUT',
    path: `${path}/{rule_id}`,
    summary:
      'Update a flow rule: only the fields sent change; conditions and outcome are replaced whole; the action cannot change',
    tags,
    auth: write,
    params: byId,
    body: flowRuleUpdateSchema,
    status: 200,
    response: { description: 'The flow rule', schema: flowRuleSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, FlowRuleUpdateInput, ById>,
    @CallerOf() caller: Caller,
  ): Promise<FlowRule> {
    return this.rpc.call(flowRulePatterns.update, {
      ...scopeOf(caller, input.params.flow),
      id: input.params.rule_id,
      body: input.body,
    });
  }

  @Endpoint({
    operationId: 'delete_flow_rule',
    method: 'DELETE',
    path: `${path}/{rule_id}`,
    summary: 'Delete a flow rule',
    tags,
    auth: write,
    params: byId,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(flowRulePatterns.delete, { ...scopeOf(caller, input.params.flow), id: input.params.rule_id });
  }
}
