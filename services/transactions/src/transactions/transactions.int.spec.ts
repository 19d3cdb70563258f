/** The transactions slice over a real store, read model, vault and the mock-card simulator over HTTP (no gateway). */
import fs from 'node:fs';
import path from 'node:path';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import type { TransactionCreateInput } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { VaultService } from '@switchyard/vault';
import { TransactionsService } from '../transactions-service';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let vaultStorage: ServiceStorage;
let service: TransactionsService;
let simulator: RunningSimulator;
let paymentServiceId: string;
const account = 'shop-a';
const noSettings = { multiple_captures_enabled: false, over_capture_amount: null, over_capture_percentage: null };

beforeEach(async () => {
  dir = createTestDataDir('transactions');
  storage = openServiceStorage('transactions', { dataDir: dir });
  simulator = await startSimulator({ webhookSecret: 'whsec_test_0123456789' });
  vaultStorage = openServiceStorage('vault', { dataDir: dir });
  service = new TransactionsService({
    store: storage.store,
    db: storage.db,
    vault: new VaultService({ store: vaultStorage.store, db: vaultStorage.db }),
    providers: {
      publicBaseUrl: () => 'http://127.0.0.1:9',
      mockCard: { baseUrl: simulator.url, webhookSecret: 'whsec_test_0123456789' },
    },
  });
  await service.catchUp();
  const connection = await service.paymentServices.create(account, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  paymentServiceId = connection.id;
});
afterEach(async () => {
  await service.stop();
  await simulator.stop();
  await storage.close();
  await vaultStorage.close();
  removeTestDataDir(dir);
});

const card = { method: 'card' as const, number: '4111111111111111', expiration_date: '12/30', security_code: '123' };
const create = (overrides: Partial<TransactionCreateInput> = {}) =>
  service.transactions.create({
    merchant_account_id: account,
    body: {
      amount: 10_000,
      currency: 'USD',
      payment_method: card,
      intent: 'authorize',
      store: false,
      merchant_initiated: false,
      is_subsequent_payment: false,
      is_amount_estimated: false,
      ...overrides,
    },
  });

it("records a card payment's answer and the end of its create request in one append (one commit), after the one that created it", async () => {
  const appends: string[][] = [];
  const append = storage.store.append.bind(storage.store);
  vi.spyOn(storage.store, 'append').mockImplementation((streamId, events, options) => {
    if (streamId.startsWith('transaction-')) appends.push(events.map((event) => event.type));
    return append(streamId, events, options);
  });
  const authorized = await create();
  expect(authorized.status).toBe('authorization_succeeded');
  expect(appends).toEqual([
    ['TransactionCreated'],
    expect.arrayContaining(['AuthorizationSucceeded', 'CreateRequestCompleted']),
  ]);
  // A declined one too.
  appends.length = 0;
  expect((await create({ amount: 200_011 })).status).not.toBe('authorization_succeeded');
  expect(appends).toHaveLength(2);
});

it('authorizes, captures and refunds through the simulator', async () => {
  const authorized = await create({ buyer: { billing_details: { address: { postal_code: 'SW1A 1AA' } } } });
  expect(authorized).toMatchObject({
    status: 'authorization_succeeded',
    authorized_amount: 10_000,
    captured_amount: 0,
    payment_service: { id: paymentServiceId },
    avs_response_code: 'match',
    cvv_response_code: 'match',
  });
  expect(authorized.payment_method).toMatchObject({
    method: 'card',
    scheme: 'visa',
    label: '1111',
    details: { bin: '411111' },
  });
  const captured = await service.transactions.captureTransaction({
    merchant_account_id: account,
    transaction_id: authorized.id,
    body: {},
    settings: noSettings,
    prefer_capture: false,
  });
  expect(captured).toMatchObject({ status: 'capture_succeeded', captured_amount: 10_000 });
  const refund = await service.transactions.createRefund({
    merchant_account_id: account,
    transaction_id: authorized.id,
    body: { amount: 4_000 },
  });
  expect(refund).toMatchObject({ type: 'refund', status: 'succeeded', amount: 4_000, transaction_id: authorized.id });
  const all = await service.transactions.refundAll({
    merchant_account_id: account,
    transaction_id: authorized.id,
    body: {},
  });
  expect(all.items[0]).toMatchObject({ status: 'succeeded', amount: 6_000 });
  const after = await service.transactions.get(account, authorized.id);
  expect(after).toMatchObject({ status: 'refunded', refunded_amount: 10_000 });
  const history = service.transactions.history({
    merchant_account_id: account,
    transaction_id: authorized.id,
    limit: 100,
  });
  expect(history.items.map((item) => item.name)).toContain('payment-connector-response-transaction-capture-succeeded');
  expect(JSON.stringify(history)).not.toContain('4111111111111111');
});

it('never writes the card number into the data directory', async () => {
  await create();
  await service.stop();
  for (const file of fs.readdirSync(dir))
    expect(fs.readFileSync(path.join(dir, file)).includes('4111111111111111')).toBe(false);
});
