/**
 * Flow rules — a merchant account's rules for the card-transaction flow: list (evaluation order, paged), get,
 * create, update, delete; and `decide()`, which the transaction flow calls on every card transaction. Route
 * outcomes are checked against the payment services of the same account.
 */
import { ApiError, pageOf, type Page, type PageQuery } from '@switchyard/api';
import {
  flowRulePatterns,
  type FlowRule,
  type FlowRuleCreateInput,
  type FlowRuleListRequest,
  type FlowRuleScope,
  type FlowRuleUpdateInput,
  type ServedFlow,
} from '@switchyard/contracts';
import { handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import type { PaymentServices } from '../payment-services/payment-services.slice';
import { asApiErrors, type TransactionsContext, type TransactionsSlice } from '../transactions-context';
import { evaluateCardTransactionFlow, type CardTransactionFacts, type FlowDecision } from './card-transaction-flow';
import {
  flowRuleDecider,
  flowRuleStream,
  type FlowRuleChanges,
  type FlowRuleCommand,
  type FlowRuleView,
} from './flow-rule';
import { FlowRulesReadModel } from './flow-rules.read-model';

/**
 * The flow rule codes that are not a plain 400. They belong in the service's table (`../errors.ts`); kept here
 * until that file, being changed by other work, takes them — the rendering is the same.
 */

type ById = FlowRuleScope & { readonly id: string };

export class FlowRules implements TransactionsSlice {
  readonly readModel: FlowRulesReadModel;
  private readonly decider: ReturnType<typeof flowRuleDecider>;

  constructor(
    private readonly context: TransactionsContext,
    paymentServices: Pick<PaymentServices, 'connection'>,
  ) {
    this.readModel = new FlowRulesReadModel(context.db);
    this.decider = flowRuleDecider(
      (merchantAccountId, id) => paymentServices.connection(merchantAccountId, id) !== null,
    );
  }

  get projection() {
    return this.readModel.projection;
  }

  /** The card-transaction flow's decision for a transaction of the merchant account (synchronous: SQLite). */
  decide(merchantAccountId: string, facts: CardTransactionFacts): FlowDecision {
    return evaluateCardTransactionFlow(this.readModel.list(merchantAccountId, 'card-transaction'), facts);
  }

  /** A merchant account's rules of a flow, by action, then position, then oldest first. */
  list(request: FlowRuleListRequest): Page<FlowRule> {
    const rules = this.readModel.list(request.merchant_account_id, request.flow, request.action);
    const query: PageQuery = { limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) };
    const page = pageOf(rules, sortKey, query);
    return { ...page, items: page.items.map(toFlowRule) };
  }

  /** A rule of another merchant account or flow does not exist. */
  get({ merchant_account_id: merchantAccountId, flow, id }: ById): FlowRule {
    const rule = this.readModel.find(id);
    if (!rule || rule.merchantAccountId !== merchantAccountId || rule.flow !== flow) throw ApiError.notFound();
    return toFlowRule(rule);
  }

  async create(scope: FlowRuleScope, input: FlowRuleCreateInput): Promise<FlowRule> {
    const id = this.context.newId();
    const { merchant_account_id: merchantAccountId, flow } = scope;
    await this.handle(id, {
      type: 'CreateFlowRule',
      data: {
        id,
        merchantAccountId,
        flow,
        action: input.action,
        description: input.description ?? null,
        position: input.position ?? this.readModel.nextPosition(merchantAccountId, flow, input.action),
        conditions: input.conditions,
        ...(input.outcome ? { outcome: input.outcome } : {}),
      },
      metadata: { now: this.context.now().toISOString() },
    });
    return this.get({ ...scope, id });
  }

  async update(address: ById, input: FlowRuleUpdateInput): Promise<FlowRule> {
    const changes: FlowRuleChanges = {
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.position !== undefined ? { position: input.position } : {}),
      ...(input.conditions !== undefined ? { conditions: input.conditions } : {}),
      ...(input.outcome !== undefined ? { outcome: input.outcome } : {}),
    };
    await this.handle(address.id, {
      type: 'UpdateFlowRule',
      data: { ...addressOf(address), ...(input.action !== undefined ? { action: input.action } : {}), changes },
      metadata: { now: this.context.now().toISOString() },
    });
    return this.get(address);
  }

  async delete(address: ById): Promise<void> {
    await this.handle(address.id, {
      type: 'DeleteFlowRule',
      data: addressOf(address),
      metadata: { now: this.context.now().toISOString() },
    });
  }

  rpcHandlers(): RpcHandlers {
    return {
      [flowRulePatterns.list]: async (payload) => this.list(payload as FlowRuleListRequest),
      [flowRulePatterns.get]: async (payload) => this.get(payload as ById),
      [flowRulePatterns.create]: async (payload) => {
        const { body, ...scope } = payload as FlowRuleScope & { body: FlowRuleCreateInput };
        return this.create(scope, body);
      },
      [flowRulePatterns.update]: async (payload) => {
        const { body, ...address } = payload as ById & { body: FlowRuleUpdateInput };
        return this.update(address, body);
      },
      [flowRulePatterns.delete]: async (payload) => {
        await this.delete(payload as ById);
        return null;
      },
    };
  }

  /** Runs the command on the rule's stream, then waits for the read model (read-your-writes). */
  private async handle(id: string, command: FlowRuleCommand): Promise<void> {
    await asApiErrors(() => handleCommand(this.context.store, flowRuleStream(id), this.decider, command));
    await this.context.catchUp();
  }
}

const addressOf = (address: ById): { merchantAccountId: string; flow: ServedFlow } => ({
  merchantAccountId: address.merchant_account_id,
  flow: address.flow,
});

/** Listing order as a sortable unique key: action, position, creation, id. */
const sortKey = (rule: FlowRuleView): string =>
  `${rule.action}|${String(rule.position).padStart(10, '0')}|${rule.createdAt}|${rule.id}`;

function toFlowRule(rule: FlowRuleView): FlowRule {
  return {
    type: 'flow-rule',
    id: rule.id,
    merchant_account_id: rule.merchantAccountId,
    flow: rule.flow,
    action: rule.action,
    description: rule.description,
    position: rule.position,
    conditions: [...rule.conditions],
    outcome: rule.outcome,
    created_at: rule.createdAt,
    updated_at: rule.updatedAt,
  };
}
