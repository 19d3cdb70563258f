/**
 * The card-transaction flow's decision: for each action, the first rule by (position, created_at) whose conditions
 * all hold decides. Pure: the transaction flow calls it on every card transaction with the account's rules.
 *
 * A fact the transaction does not have (no country, unknown card scheme or type, no card number prefix, a missing
 * metadata key) is in no set and no range: `one_of`/`in_range` never match it, `not_one_of`/`not_in_range` always do.
 */
import type { FlowAction, FlowRuleCondition } from '@switchyard/contracts';
import type { FlowRuleView } from './flow-rule';

export interface CardTransactionFacts {
  /** Minor units. */
  readonly amount: number;
  readonly currency: string;
  readonly country: string | null;
  /** Up to the first 8 digits of the card number, never more. */
  readonly cardNumberPrefix: string | null;
  /** The wire scheme (`visa`, `mastercard`, …). */
  readonly cardScheme: string | null;
  readonly cardType: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly merchantInitiated: boolean;
}

export interface MatchedRule {
  readonly ruleId: string;
  readonly action: FlowAction;
}

/**
 * Per action, the rule that decided, or null: no rule matched, or the first match's outcome is `result: false`
 * (it decides "no": later rules of that action are not consulted). Both 3-D Secure actions are reported when
 * both match: the transaction records every matched rule, and its 3-D Secure plan lets force win
 * (`planThreeDSecure` in transactions/authorization-policy.ts).
 */
export interface FlowDecision {
  /** The payment services to try in this order; ids that no longer resolve are the caller's to skip. */
  readonly route: { readonly ruleId: string; readonly paymentServiceIds: readonly string[] } | null;
  readonly declineEarly: MatchedRule | null;
  readonly skip3ds: MatchedRule | null;
  readonly force3ds: MatchedRule | null;
}

export function evaluateCardTransactionFlow(rules: readonly FlowRuleView[], facts: CardTransactionFacts): FlowDecision {
  const ordered = [...rules].sort(
    (a, b) => a.position - b.position || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
  );
  const decidingRule = (action: FlowAction) =>
    ordered.find((rule) => rule.action === action && rule.conditions.every((condition) => holds(condition, facts)));
  const yes = (action: FlowAction): MatchedRule | null => {
    const rule = decidingRule(action);
    return rule?.outcome.type === 'boolean' && rule.outcome.result ? { ruleId: rule.id, action } : null;
  };

  const routing = decidingRule('route-transaction');
  return {
    route: routing?.outcome.type === 'list' ? { ruleId: routing.id, paymentServiceIds: routing.outcome.result } : null,
    declineEarly: yes('decline-early'),
    skip3ds: yes('skip-3ds'),
    force3ds: yes('force-3ds'),
  };
}

function holds(condition: FlowRuleCondition, facts: CardTransactionFacts): boolean {
  switch (condition.name) {
    case 'amount':
      return compare(facts.amount, condition.operator, condition.value);
    case 'currency':
      return inSet(facts.currency, condition.value, condition.operator);
    case 'country':
      return inSet(facts.country, condition.value, condition.operator);
    case 'card_scheme':
      return inSet(facts.cardScheme, condition.value, condition.operator);
    case 'card_type':
      return inSet(facts.cardType, condition.value, condition.operator);
    case 'metadata':
      return inSet(facts.metadata[condition.value.key] ?? null, condition.value.values, condition.operator);
    case 'bin_range':
      return (
        condition.value.some((range) => isInRange(facts.cardNumberPrefix, range)) ===
        (condition.operator === 'in_range')
      );
    case 'merchant_initiated':
      return facts.merchantInitiated === condition.value;
    default: {
      const unreachable: never = condition;
      throw new Error(`unknown condition ${JSON.stringify(unreachable)}`);
    }
  }
}

const inSet = (fact: string | null, values: readonly string[], operator: 'one_of' | 'not_one_of'): boolean =>
  (fact !== null && values.includes(fact)) === (operator === 'one_of');

/** Bounds of equal length, so comparing digit strings is comparing numbers. */
function isInRange(prefix: string | null, range: { readonly from: string; readonly to: string }): boolean {
  if (prefix === null || prefix.length < range.from.length) return false;
  const digits = prefix.slice(0, range.from.length);
  return digits >= range.from && digits <= range.to;
}

type AmountOperator = Extract<FlowRuleCondition, { name: 'amount' }>['operator'];

function compare(amount: number, operator: AmountOperator, value: number): boolean {
  switch (operator) {
    case 'equal':
      return amount === value;
    case 'not_equal':
      return amount !== value;
    case 'greater_than':
      return amount > value;
    case 'greater_than_or_equal':
      return amount >= value;
    case 'less_than':
      return amount < value;
    case 'less_than_or_equal':
      return amount <= value;
  }
}
