/**
 * A merchant account's flow rule: stream `flow-rule-<uuid>`. It belongs to one merchant account, flow and action
 * for life; addressed under another account or flow it does not exist. Its outcome must fit its action (an ordered
 * list of the account's payment services for `route-transaction`, a boolean otherwise). Conditions arrive
 * validated by the contract's schema (`@switchyard/contracts`, 422 at the edge).
 */
import type { FlowAction, FlowRuleCondition, FlowRuleOutcome, ServedFlow } from '@switchyard/contracts';
import { DomainError, type Decider } from '@switchyard/decider';

export interface FlowRuleSettings {
  readonly description: string | null;
  readonly position: number;
  readonly conditions: readonly FlowRuleCondition[];
  readonly outcome: FlowRuleOutcome;
}

export type FlowRuleChanges = Partial<FlowRuleSettings>;

/** A flow rule as the read model holds it and the evaluator reads it. */
export interface FlowRuleView extends FlowRuleSettings {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly flow: ServedFlow;
  readonly action: FlowAction;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface Owner {
  readonly id: string;
  readonly merchantAccountId: string;
}

export type FlowRuleEvent =
  | {
      readonly type: 'FlowRuleCreated';
      readonly data: FlowRuleSettings &
        Owner & { readonly flow: ServedFlow; readonly action: FlowAction; readonly at: string };
    }
  | { readonly type: 'FlowRuleUpdated'; readonly data: FlowRuleChanges & Owner & { readonly at: string } }
  | { readonly type: 'FlowRuleDeleted'; readonly data: Owner & { readonly at: string } };

interface CommandMetadata {
  readonly now: string;
}

/** Where the request addressed the rule: under another account or flow, it does not exist. */
interface Address {
  readonly merchantAccountId: string;
  readonly flow: ServedFlow;
}

export type FlowRuleCommand =
  | {
      readonly type: 'CreateFlowRule';
      /** `outcome` absent: `{type: 'boolean', result: true}`, which only actions other than routing accept. */
      readonly data: Address &
        Omit<FlowRuleSettings, 'outcome'> & {
          readonly id: string;
          readonly action: FlowAction;
          readonly outcome?: FlowRuleOutcome;
        };
      readonly metadata: CommandMetadata;
    }
  /** `action`: the action the request names, if any; it must be the rule's own. */
  | {
      readonly type: 'UpdateFlowRule';
      readonly data: Address & { readonly action?: FlowAction; readonly changes: FlowRuleChanges };
      readonly metadata: CommandMetadata;
    }
  | { readonly type: 'DeleteFlowRule'; readonly data: Address; readonly metadata: CommandMetadata };

export type FlowRuleState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | {
      readonly status: 'present';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly flow: ServedFlow;
      readonly action: FlowAction;
    };

export const flowRuleStream = (id: string): string => `flow-rule-${id}`;

/** Whether a payment service exists (not deleted) under the merchant account. */
export type PaymentServiceExists = (merchantAccountId: string, paymentServiceId: string) => boolean;

const notFound = () => new DomainError('flow_rule_not_found', 'The resource could not be found');

const invalid = (field: string, message: string) =>
  new DomainError('invalid_flow_rule', 'invalid flow rule', [{ field, message }]);

/** The outcome fits the action, and a route names only payment services of the rule's account. */
function assertOutcome(
  outcome: FlowRuleOutcome,
  action: FlowAction,
  merchantAccountId: string,
  paymentServiceExists: PaymentServiceExists,
): void {
  const expected = action === 'route-transaction' ? 'list' : 'boolean';
  if (outcome.type !== expected) throw invalid('outcome/type', `a ${action} rule needs a ${expected} outcome`);
  if (outcome.type !== 'list') return;
  const details = outcome.result.flatMap((id, index) =>
    paymentServiceExists(merchantAccountId, id)
      ? []
      : [{ field: `outcome/result/${index}`, message: `no payment service ${id} exists in this merchant account` }],
  );
  if (details.length > 0)
    throw new DomainError('unknown_payment_service', 'the outcome names payment services that do not exist', details);
}

const addressedBy = (state: FlowRuleState, address: Address): state is Extract<FlowRuleState, { status: 'present' }> =>
  state.status === 'present' && state.merchantAccountId === address.merchantAccountId && state.flow === address.flow;

/** The rules, given which payment services exist. */
export function flowRuleDecider(
  paymentServiceExists: PaymentServiceExists,
): Decider<FlowRuleCommand, FlowRuleEvent, FlowRuleState> {
  return {
    initialState: () => ({ status: 'absent' }),
    decide(command, state) {
      switch (command.type) {
        case 'CreateFlowRule': {
          if (state.status !== 'absent')
            throw new DomainError('flow_rule_exists', `flow rule ${command.data.id} already exists`);
          const { outcome: given, ...data } = command.data;
          if (!given && data.action === 'route-transaction')
            throw invalid('outcome', 'a route-transaction rule needs a list of payment services');
          const outcome: FlowRuleOutcome = given ?? { type: 'boolean', result: true };
          assertOutcome(outcome, data.action, data.merchantAccountId, paymentServiceExists);
          return [{ type: 'FlowRuleCreated', data: { ...data, outcome, at: command.metadata.now } }];
        }
        case 'UpdateFlowRule': {
          if (!addressedBy(state, command.data)) throw notFound();
          if (command.data.action !== undefined && command.data.action !== state.action)
            throw invalid('action', `the action of a rule cannot change (it is ${state.action})`);
          const changes = Object.fromEntries(
            Object.entries(command.data.changes).filter(([, value]) => value !== undefined),
          ) as FlowRuleChanges;
          if (changes.outcome)
            assertOutcome(changes.outcome, state.action, state.merchantAccountId, paymentServiceExists);
          return [
            {
              type: 'FlowRuleUpdated',
              data: { ...changes, id: state.id, merchantAccountId: state.merchantAccountId, at: command.metadata.now },
            },
          ];
        }
        case 'DeleteFlowRule':
          if (!addressedBy(state, command.data)) throw notFound();
          return [
            {
              type: 'FlowRuleDeleted',
              data: { id: state.id, merchantAccountId: state.merchantAccountId, at: command.metadata.now },
            },
          ];
        default: {
          const unreachable: never = command;
          throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
        }
      }
    },
    evolve(state, event) {
      switch (event.type) {
        case 'FlowRuleCreated':
          return {
            status: 'present',
            id: event.data.id,
            merchantAccountId: event.data.merchantAccountId,
            flow: event.data.flow,
            action: event.data.action,
          };
        case 'FlowRuleUpdated':
          return state;
        case 'FlowRuleDeleted':
          return { status: 'deleted' };
      }
    },
  };
}
