/** The flow rule decider: given its events, when a command, then the events it decides or the error it throws. */
import type { FlowRuleCondition } from '@switchyard/contracts';
import { flowRuleDecider, type FlowRuleCommand, type FlowRuleEvent } from './flow-rule';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';
const cards = '11111111-1111-4111-8111-111111111111';
const backup = '22222222-2222-4222-8222-222222222222';
const elsewhere = '33333333-3333-4333-8333-333333333333';

/** shop-a has the payment services `cards` and `backup`; `elsewhere` belongs to shop-b. */
const decider = flowRuleDecider((merchantAccountId, paymentServiceId) =>
  merchantAccountId === 'shop-a' ? [cards, backup].includes(paymentServiceId) : paymentServiceId === elsewhere,
);

const euros: FlowRuleCondition = { name: 'currency', operator: 'one_of', value: ['EUR'] };
const route = (...result: string[]) => ({ type: 'list' as const, result });

type Create = Extract<FlowRuleCommand, { type: 'CreateFlowRule' }>['data'];
const create = (overrides: Partial<Create> = {}): FlowRuleCommand => ({
  type: 'CreateFlowRule',
  data: {
    id,
    merchantAccountId: 'shop-a',
    flow: 'card-transaction',
    action: 'route-transaction',
    description: null,
    position: 0,
    conditions: [euros],
    outcome: route(cards, backup),
    ...overrides,
  },
  metadata: { now },
});
const update = (data: Partial<Extract<FlowRuleCommand, { type: 'UpdateFlowRule' }>['data']>): FlowRuleCommand => ({
  type: 'UpdateFlowRule',
  data: { merchantAccountId: 'shop-a', flow: 'card-transaction', changes: {}, ...data },
  metadata: { now: later },
});
const remove = (merchantAccountId = 'shop-a'): FlowRuleCommand => ({
  type: 'DeleteFlowRule',
  data: { merchantAccountId, flow: 'card-transaction' },
  metadata: { now: later },
});

const given = (events: readonly FlowRuleEvent[]) => ({
  when: (command: FlowRuleCommand) => decider.decide(command, events.reduce(decider.evolve, decider.initialState())),
});

const refusal = (code: string, field: string) =>
  expect.objectContaining({ code, details: [expect.objectContaining({ field })] });

describe('when no flow rule exists', () => {
  it('creates a route with its ordered payment services', () =>
    expect(given([]).when(create())).toEqual([
      {
        type: 'FlowRuleCreated',
        data: {
          id,
          merchantAccountId: 'shop-a',
          flow: 'card-transaction',
          action: 'route-transaction',
          description: null,
          position: 0,
          conditions: [euros],
          outcome: route(cards, backup),
          at: now,
        },
      },
    ]));

  it('gives the other actions a true outcome by default', () =>
    expect(given([]).when(create({ action: 'skip-3ds', outcome: undefined }))[0]?.data).toMatchObject({
      action: 'skip-3ds',
      outcome: { type: 'boolean', result: true },
    }));

  it('refuses a route without an outcome, and outcomes that do not fit the action', () => {
    expect(() => given([]).when(create({ outcome: undefined }))).toThrow(refusal('invalid_flow_rule', 'outcome'));
    expect(() => given([]).when(create({ outcome: { type: 'boolean', result: true } }))).toThrow(
      refusal('invalid_flow_rule', 'outcome/type'),
    );
    expect(() => given([]).when(create({ action: 'decline-early', outcome: route(cards) }))).toThrow(
      refusal('invalid_flow_rule', 'outcome/type'),
    );
  });

  it('refuses payment services that are not of the merchant account, naming each', () =>
    expect(() => given([]).when(create({ outcome: route(cards, elsewhere) }))).toThrow(
      refusal('unknown_payment_service', 'outcome/result/1'),
    ));

  it('is not found for updates and deletes', () => {
    expect(() => given([]).when(update({}))).toThrow(expect.objectContaining({ code: 'flow_rule_not_found' }));
    expect(() => given([]).when(remove())).toThrow(expect.objectContaining({ code: 'flow_rule_not_found' }));
  });
});

describe('when the flow rule exists', () => {
  const created = given([]).when(create());

  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(expect.objectContaining({ code: 'flow_rule_exists' })));

  it('records only the fields that change, conditions and outcome whole', () =>
    expect(
      given(created).when(
        update({
          action: 'route-transaction',
          changes: { position: 3, conditions: [], outcome: route(backup), description: undefined },
        }),
      ),
    ).toEqual([
      {
        type: 'FlowRuleUpdated',
        data: { id, merchantAccountId: 'shop-a', position: 3, conditions: [], outcome: route(backup), at: later },
      },
    ]));

  it('clears the description with null', () =>
    expect(given(created).when(update({ changes: { description: null } }))[0]?.data).toEqual({
      id,
      merchantAccountId: 'shop-a',
      description: null,
      at: later,
    }));

  it('refuses another action, an outcome that does not fit, and unknown payment services', () => {
    expect(() => given(created).when(update({ action: 'force-3ds' }))).toThrow(refusal('invalid_flow_rule', 'action'));
    expect(() => given(created).when(update({ changes: { outcome: { type: 'boolean', result: false } } }))).toThrow(
      refusal('invalid_flow_rule', 'outcome/type'),
    );
    expect(() => given(created).when(update({ changes: { outcome: route(elsewhere) } }))).toThrow(
      refusal('unknown_payment_service', 'outcome/result/0'),
    );
  });

  it('deletes it', () =>
    expect(given(created).when(remove())).toEqual([
      { type: 'FlowRuleDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
    ]));

  it('does not exist under another merchant account', () => {
    expect(() => given(created).when(update({ merchantAccountId: 'shop-b' }))).toThrow(
      expect.objectContaining({ code: 'flow_rule_not_found' }),
    );
    expect(() => given(created).when(remove('shop-b'))).toThrow(
      expect.objectContaining({ code: 'flow_rule_not_found' }),
    );
  });
});

describe('when the flow rule was deleted', () => {
  const deleted: FlowRuleEvent[] = [
    ...given([]).when(create()),
    { type: 'FlowRuleDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
  ];

  it('is not found for updates and deletes, and cannot be created again', () => {
    expect(() => given(deleted).when(update({}))).toThrow(expect.objectContaining({ code: 'flow_rule_not_found' }));
    expect(() => given(deleted).when(remove())).toThrow(expect.objectContaining({ code: 'flow_rule_not_found' }));
    expect(() => given(deleted).when(create())).toThrow(expect.objectContaining({ code: 'flow_rule_exists' }));
  });
});
