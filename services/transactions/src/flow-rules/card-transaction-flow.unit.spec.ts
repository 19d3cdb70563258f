/** The card-transaction flow's evaluator: every condition and operator, unknown facts, precedence and AND. */
import type { FlowAction, FlowRuleCondition, FlowRuleOutcome } from '@switchyard/contracts';
import { evaluateCardTransactionFlow, type CardTransactionFacts } from './card-transaction-flow';
import type { FlowRuleView } from './flow-rule';

const facts: CardTransactionFacts = {
  amount: 1000,
  currency: 'EUR',
  country: 'NL',
  cardNumberPrefix: '41111111',
  cardScheme: 'visa',
  cardType: 'credit',
  metadata: { channel: 'web' },
  merchantInitiated: false,
};

let sequence = 0;
function rule(
  action: FlowAction,
  conditions: readonly FlowRuleCondition[],
  overrides: Partial<FlowRuleView> = {},
): FlowRuleView {
  sequence += 1;
  const outcome: FlowRuleOutcome =
    action === 'route-transaction' ? { type: 'list', result: [`ps-${sequence}`] } : { type: 'boolean', result: true };
  const at = `2026-01-01T00:00:${String(sequence).padStart(2, '0')}.000Z`;
  return {
    id: `rule-${sequence}`,
    merchantAccountId: 'shop-a',
    flow: 'card-transaction',
    action,
    description: null,
    position: 0,
    conditions,
    outcome,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** Whether a decline-early rule with only this condition declines a transaction with these facts. */
const holds = (condition: FlowRuleCondition, changed: Partial<CardTransactionFacts> = {}): boolean =>
  evaluateCardTransactionFlow([rule('decline-early', [condition])], { ...facts, ...changed }).declineEarly !== null;

describe('each condition and operator', () => {
  it.each<[string, FlowRuleCondition, boolean]>([
    ['amount equal', { name: 'amount', operator: 'equal', value: 1000 }, true],
    ['amount equal (other)', { name: 'amount', operator: 'equal', value: 999 }, false],
    ['amount not_equal', { name: 'amount', operator: 'not_equal', value: 999 }, true],
    ['amount not_equal (same)', { name: 'amount', operator: 'not_equal', value: 1000 }, false],
    ['amount greater_than', { name: 'amount', operator: 'greater_than', value: 999 }, true],
    ['amount greater_than (equal)', { name: 'amount', operator: 'greater_than', value: 1000 }, false],
    ['amount greater_than_or_equal', { name: 'amount', operator: 'greater_than_or_equal', value: 1000 }, true],
    ['amount greater_than_or_equal (above)', { name: 'amount', operator: 'greater_than_or_equal', value: 1001 }, false],
    ['amount less_than', { name: 'amount', operator: 'less_than', value: 1001 }, true],
    ['amount less_than (equal)', { name: 'amount', operator: 'less_than', value: 1000 }, false],
    ['amount less_than_or_equal', { name: 'amount', operator: 'less_than_or_equal', value: 1000 }, true],
    ['amount less_than_or_equal (below)', { name: 'amount', operator: 'less_than_or_equal', value: 999 }, false],
    ['currency one_of', { name: 'currency', operator: 'one_of', value: ['USD', 'EUR'] }, true],
    ['currency one_of (absent)', { name: 'currency', operator: 'one_of', value: ['USD'] }, false],
    ['currency not_one_of', { name: 'currency', operator: 'not_one_of', value: ['USD'] }, true],
    ['currency not_one_of (present)', { name: 'currency', operator: 'not_one_of', value: ['EUR'] }, false],
    ['country one_of', { name: 'country', operator: 'one_of', value: ['NL'] }, true],
    ['country not_one_of', { name: 'country', operator: 'not_one_of', value: ['NL'] }, false],
    [
      'bin_range in_range (8 digits)',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '41111100', to: '41111199' }] },
      true,
    ],
    [
      'bin_range in_range (6 digits, bounds included)',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '400000', to: '411111' }] },
      true,
    ],
    [
      'bin_range in_range (outside)',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '500000', to: '599999' }] },
      false,
    ],
    [
      'bin_range in_range (one of several)',
      {
        name: 'bin_range',
        operator: 'in_range',
        value: [
          { from: '500000', to: '599999' },
          { from: '411111', to: '411111' },
        ],
      },
      true,
    ],
    [
      'bin_range not_in_range',
      { name: 'bin_range', operator: 'not_in_range', value: [{ from: '500000', to: '599999' }] },
      true,
    ],
    [
      'bin_range not_in_range (inside)',
      { name: 'bin_range', operator: 'not_in_range', value: [{ from: '4111110', to: '4111112' }] },
      false,
    ],
    ['card_scheme one_of', { name: 'card_scheme', operator: 'one_of', value: ['visa', 'mastercard'] }, true],
    ['card_scheme not_one_of', { name: 'card_scheme', operator: 'not_one_of', value: ['visa'] }, false],
    ['card_type one_of', { name: 'card_type', operator: 'one_of', value: ['debit'] }, false],
    ['card_type not_one_of', { name: 'card_type', operator: 'not_one_of', value: ['debit', 'prepaid'] }, true],
    [
      'metadata one_of',
      { name: 'metadata', operator: 'one_of', value: { key: 'channel', values: ['web', 'app'] } },
      true,
    ],
    [
      'metadata one_of (other value)',
      { name: 'metadata', operator: 'one_of', value: { key: 'channel', values: ['pos'] } },
      false,
    ],
    [
      'metadata not_one_of',
      { name: 'metadata', operator: 'not_one_of', value: { key: 'channel', values: ['pos'] } },
      true,
    ],
    ['merchant_initiated equal false', { name: 'merchant_initiated', operator: 'equal', value: false }, true],
    ['merchant_initiated equal true', { name: 'merchant_initiated', operator: 'equal', value: true }, false],
  ])('%s', (_case, condition, expected) => expect(holds(condition)).toBe(expected));
});

describe('facts the transaction does not have', () => {
  it.each<[string, FlowRuleCondition, FlowRuleCondition, Partial<CardTransactionFacts>]>([
    [
      'no country',
      { name: 'country', operator: 'one_of', value: ['NL'] },
      { name: 'country', operator: 'not_one_of', value: ['NL'] },
      { country: null },
    ],
    [
      'an unknown scheme',
      { name: 'card_scheme', operator: 'one_of', value: ['visa'] },
      { name: 'card_scheme', operator: 'not_one_of', value: ['visa'] },
      { cardScheme: null },
    ],
    [
      'an unknown card type',
      { name: 'card_type', operator: 'one_of', value: ['credit'] },
      { name: 'card_type', operator: 'not_one_of', value: ['credit'] },
      { cardType: null },
    ],
    [
      'no card number',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '000000', to: '999999' }] },
      { name: 'bin_range', operator: 'not_in_range', value: [{ from: '000000', to: '999999' }] },
      { cardNumberPrefix: null },
    ],
    [
      'a prefix shorter than the range',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '41111100', to: '41111199' }] },
      { name: 'bin_range', operator: 'not_in_range', value: [{ from: '41111100', to: '41111199' }] },
      { cardNumberPrefix: '411111' },
    ],
    [
      'a missing metadata key',
      { name: 'metadata', operator: 'one_of', value: { key: 'tier', values: ['gold'] } },
      { name: 'metadata', operator: 'not_one_of', value: { key: 'tier', values: ['gold'] } },
      {},
    ],
  ])(
    '%s never matches the positive operator and always matches the negative one',
    (_case, positive, negative, changed) => {
      expect(holds(positive, changed)).toBe(false);
      expect(holds(negative, changed)).toBe(true);
    },
  );
});

describe('deciding', () => {
  const euros: FlowRuleCondition = { name: 'currency', operator: 'one_of', value: ['EUR'] };
  const dollars: FlowRuleCondition = { name: 'currency', operator: 'one_of', value: ['USD'] };

  it('decides nothing without rules', () =>
    expect(evaluateCardTransactionFlow([], facts)).toEqual({
      route: null,
      declineEarly: null,
      skip3ds: null,
      force3ds: null,
    }));

  it('applies a rule without conditions always', () =>
    expect(evaluateCardTransactionFlow([rule('skip-3ds', [], { id: 'always' })], facts).skip3ds).toEqual({
      ruleId: 'always',
      action: 'skip-3ds',
    }));

  it('needs every condition of a rule to hold', () => {
    const both = rule('decline-early', [euros, { name: 'amount', operator: 'greater_than', value: 5000 }]);
    expect(evaluateCardTransactionFlow([both], facts).declineEarly).toBeNull();
    expect(evaluateCardTransactionFlow([both], { ...facts, amount: 6000 }).declineEarly).toEqual({
      ruleId: both.id,
      action: 'decline-early',
    });
  });

  it('lets the first matching route by position decide, whatever the order given', () => {
    const later = rule('route-transaction', [], { position: 2, outcome: { type: 'list', result: ['c'] } });
    const first = rule('route-transaction', [euros], { position: 1, outcome: { type: 'list', result: ['a', 'b'] } });
    const notMatching = rule('route-transaction', [dollars], { position: 0 });
    expect(evaluateCardTransactionFlow([later, first, notMatching], facts).route).toEqual({
      ruleId: first.id,
      paymentServiceIds: ['a', 'b'],
    });
    expect(evaluateCardTransactionFlow([later, first, notMatching], { ...facts, currency: 'GBP' }).route).toEqual({
      ruleId: later.id,
      paymentServiceIds: ['c'],
    });
  });

  it('orders rules at the same position oldest first', () => {
    const older = rule('force-3ds', [], { position: 5 });
    const newer = rule('force-3ds', [], { position: 5 });
    expect(evaluateCardTransactionFlow([newer, older], facts).force3ds?.ruleId).toBe(older.id);
  });

  it('decides each action by its own rules', () => {
    const decline = rule('decline-early', [dollars]);
    const skip = rule('skip-3ds', [euros]);
    const route = rule('route-transaction', [euros]);
    expect(evaluateCardTransactionFlow([decline, skip, route], facts)).toEqual({
      route: { ruleId: route.id, paymentServiceIds: [expect.any(String)] },
      declineEarly: null,
      skip3ds: { ruleId: skip.id, action: 'skip-3ds' },
      force3ds: null,
    });
  });

  it('lets a first match with a false outcome decide "no" for its action', () => {
    const no = rule('decline-early', [euros], { position: 0, outcome: { type: 'boolean', result: false } });
    const yes = rule('decline-early', [], { position: 1 });
    expect(evaluateCardTransactionFlow([no, yes], facts).declineEarly).toBeNull();
    expect(evaluateCardTransactionFlow([no, yes], { ...facts, currency: 'USD' }).declineEarly).toEqual({
      ruleId: yes.id,
      action: 'decline-early',
    });
  });

  it('reports both 3-D Secure actions when both match (the 3-D Secure plan lets force win)', () => {
    const skip = rule('skip-3ds', []);
    const force = rule('force-3ds', [euros]);
    expect(evaluateCardTransactionFlow([skip, force], facts)).toMatchObject({
      skip3ds: { ruleId: skip.id },
      force3ds: { ruleId: force.id, action: 'force-3ds' },
    });
    expect(evaluateCardTransactionFlow([skip, force], { ...facts, currency: 'USD' })).toMatchObject({
      skip3ds: { ruleId: skip.id },
      force3ds: null,
    });
  });
});
