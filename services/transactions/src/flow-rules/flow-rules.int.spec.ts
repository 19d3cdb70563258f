/**
 * The flow rules slice over a real store and read model, beside the payment services it routes to: positions and
 * order, paging, updates, deletes, scoping by merchant account, route outcomes checked, and `decide()`.
 */
import type { FlowRuleCreateInput, FlowRuleScope } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import { PaymentServices } from '../payment-services/payment-services.slice';
import type { CardTransactionFacts } from './card-transaction-flow';
import { FlowRules } from './flow-rules.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let paymentServices: PaymentServices;
let flowRules: FlowRules;
let clock = Date.parse('2026-01-01T00:00:00.000Z');

beforeEach(async () => {
  dir = createTestDataDir('flow-rules');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date((clock += 1000)) });
  paymentServices = new PaymentServices(host.context);
  flowRules = new FlowRules(host.context, paymentServices);
  host.add(paymentServices, flowRules);
  await host.catchUp();
});
afterEach(async () => {
  await host.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const shopA: FlowRuleScope = { merchant_account_id: 'shop-a', flow: 'card-transaction' };
const shopB: FlowRuleScope = { merchant_account_id: 'shop-b', flow: 'card-transaction' };

const connection = async (merchantAccountId: string) =>
  (
    await paymentServices.create(merchantAccountId, {
      display_name: 'Cards',
      payment_service_definition_id: 'mock-card',
      fields: [{ key: 'merchant_id', value: 'm-1' }],
      accepted_currencies: ['EUR'],
      accepted_countries: ['NL'],
    })
  ).id;

const skip3ds = (overrides: Partial<FlowRuleCreateInput> = {}): FlowRuleCreateInput => ({
  action: 'skip-3ds',
  conditions: [],
  ...overrides,
});

const facts: CardTransactionFacts = {
  amount: 1000,
  currency: 'EUR',
  country: 'NL',
  cardNumberPrefix: '41111111',
  cardScheme: 'visa',
  cardType: 'credit',
  metadata: {},
  merchantInitiated: false,
};

it('creates with defaults, appends to its action, lists by action then position then age, pages', async () => {
  const first = await flowRules.create(shopA, skip3ds({ description: 'Low value' }));
  expect(first).toMatchObject({
    type: 'flow-rule',
    merchant_account_id: 'shop-a',
    flow: 'card-transaction',
    action: 'skip-3ds',
    description: 'Low value',
    position: 0,
    conditions: [],
    outcome: { type: 'boolean', result: true },
    created_at: first.updated_at,
  });
  const second = await flowRules.create(shopA, skip3ds());
  const front = await flowRules.create(shopA, skip3ds({ position: 0 }));
  const decline = await flowRules.create(shopA, {
    action: 'decline-early',
    conditions: [{ name: 'country', operator: 'one_of', value: ['KP'] }],
  });
  await flowRules.create(shopB, skip3ds());
  expect([second.position, front.position, decline.position]).toEqual([1, 0, 0]);

  const ids = (page: { items: readonly { id: string }[] }) => page.items.map((item) => item.id);
  expect(ids(flowRules.list({ ...shopA, limit: 20 }))).toEqual([decline.id, first.id, front.id, second.id]);
  expect(ids(flowRules.list({ ...shopA, limit: 20, action: 'skip-3ds' }))).toEqual([first.id, front.id, second.id]);

  const firstPage = flowRules.list({ ...shopA, limit: 3 });
  expect(firstPage).toMatchObject({ limit: 3, previous_cursor: null, next_cursor: expect.any(String) });
  const secondPage = flowRules.list({ ...shopA, limit: 3, cursor: firstPage.next_cursor });
  expect(ids(secondPage)).toEqual([second.id]);
  expect(secondPage.next_cursor).toBeNull();
});

it('updates only what is sent, replaces conditions and outcome, and refuses another action', async () => {
  const [cards, backup] = [await connection('shop-a'), await connection('shop-a')];
  const created = await flowRules.create(shopA, {
    action: 'route-transaction',
    description: 'Euros',
    conditions: [{ name: 'currency', operator: 'one_of', value: ['EUR'] }],
    outcome: { type: 'list', result: [cards] },
  });
  const address = { ...shopA, id: created.id };
  const updated = await flowRules.update(address, {
    position: 4,
    conditions: [],
    outcome: { type: 'list', result: [backup, cards] },
  });
  expect(updated).toEqual({
    ...created,
    position: 4,
    conditions: [],
    outcome: { type: 'list', result: [backup, cards] },
    updated_at: expect.any(String),
  });
  expect(updated.updated_at > created.updated_at).toBe(true);
  expect(await flowRules.update(address, { description: null, action: 'route-transaction' })).toMatchObject({
    description: null,
    position: 4,
  });

  await expect(flowRules.update(address, { action: 'skip-3ds' })).rejects.toMatchObject({
    status: 400,
    details: [{ location: 'body', pointer: '/action', message: expect.any(String), type: 'invalid_flow_rule' }],
  });
  await expect(flowRules.update(address, { outcome: { type: 'boolean', result: true } })).rejects.toMatchObject({
    status: 400,
    details: [expect.objectContaining({ pointer: '/outcome/type' })],
  });
});

it('routes only to existing payment services of the same merchant account', async () => {
  const cards = await connection('shop-a');
  const foreign = await connection('shop-b');
  const removed = await connection('shop-a');
  await paymentServices.delete('shop-a', removed);

  const route = (...result: string[]): FlowRuleCreateInput => ({
    action: 'route-transaction',
    conditions: [],
    outcome: { type: 'list', result },
  });
  await expect(flowRules.create(shopA, route(cards, foreign, removed))).rejects.toMatchObject({
    status: 400,
    details: [
      { location: 'body', pointer: '/outcome/result/1', message: expect.any(String), type: 'unknown_payment_service' },
      { location: 'body', pointer: '/outcome/result/2', message: expect.any(String), type: 'unknown_payment_service' },
    ],
  });
  await expect(flowRules.create(shopA, { action: 'route-transaction', conditions: [] })).rejects.toMatchObject({
    status: 400,
    details: [expect.objectContaining({ pointer: '/outcome' })],
  });
  await expect(flowRules.create(shopA, skip3ds({ outcome: { type: 'list', result: [cards] } }))).rejects.toMatchObject({
    status: 400,
  });
  expect(flowRules.list({ ...shopA, limit: 20 }).items).toEqual([]);
  expect(await flowRules.create(shopA, route(cards))).toMatchObject({ outcome: { type: 'list', result: [cards] } });
});

it('is 404 under another merchant account and after delete', async () => {
  const created = await flowRules.create(shopA, skip3ds());
  const elsewhere = { ...shopB, id: created.id };
  expect(() => flowRules.get(elsewhere)).toThrow(expect.objectContaining({ status: 404 }));
  await expect(flowRules.update(elsewhere, { position: 1 })).rejects.toMatchObject({ status: 404 });
  await expect(flowRules.delete(elsewhere)).rejects.toMatchObject({ status: 404 });
  expect(flowRules.list({ ...shopB, limit: 20 }).items).toEqual([]);

  const address = { ...shopA, id: created.id };
  await flowRules.delete(address);
  expect(() => flowRules.get(address)).toThrow(expect.objectContaining({ status: 404 }));
  await expect(flowRules.delete(address)).rejects.toMatchObject({ status: 404 });
  expect(flowRules.list({ ...shopA, limit: 20 }).items).toEqual([]);
});

it('decides a card transaction from the merchant account rules as they are now', async () => {
  const [cards, backup] = [await connection('shop-a'), await connection('shop-a')];
  const route = await flowRules.create(shopA, {
    action: 'route-transaction',
    conditions: [{ name: 'amount', operator: 'less_than', value: 5000 }],
    outcome: { type: 'list', result: [cards, backup] },
  });
  const skip = await flowRules.create(
    shopA,
    skip3ds({ conditions: [{ name: 'card_scheme', operator: 'one_of', value: ['visa'] }] }),
  );
  await flowRules.create(shopB, { action: 'decline-early', conditions: [] });

  expect(flowRules.decide('shop-a', facts)).toEqual({
    route: { ruleId: route.id, paymentServiceIds: [cards, backup] },
    declineEarly: null,
    skip3ds: { ruleId: skip.id, action: 'skip-3ds' },
    force3ds: null,
  });
  await flowRules.delete({ ...shopA, id: skip.id });
  expect(flowRules.decide('shop-a', { ...facts, amount: 9000 })).toEqual({
    route: null,
    declineEarly: null,
    skip3ds: null,
    force3ds: null,
  });
  expect(flowRules.decide('shop-b', facts).declineEarly).not.toBeNull();
});

it('serves its RPC patterns', async () => {
  const handlers = flowRules.rpcHandlers();
  const created = (await handlers['transactions.flow-rules.create']!({ ...shopA, body: skip3ds() }, EMBEDDED_CALL)) as {
    id: string;
  };
  expect(await handlers['transactions.flow-rules.get']!({ ...shopA, id: created.id }, EMBEDDED_CALL)).toMatchObject({
    id: created.id,
  });
  expect(
    await handlers['transactions.flow-rules.update']!(
      { ...shopA, id: created.id, body: { position: 7 } },
      EMBEDDED_CALL,
    ),
  ).toMatchObject({ position: 7 });
  expect(await handlers['transactions.flow-rules.list']!({ ...shopA, limit: 20 }, EMBEDDED_CALL)).toMatchObject({
    items: [{ id: created.id }],
  });
  expect(await handlers['transactions.flow-rules.delete']!({ ...shopA, id: created.id }, EMBEDDED_CALL)).toBeNull();
});
