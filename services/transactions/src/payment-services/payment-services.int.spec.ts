/** The payment services slice over a real store and read model: routing order, paging, scoping, capabilities. */
import { ApiError } from '@switchyard/api';
import type { PaymentServiceCreateInput } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { VaultService } from '@switchyard/vault';
import { TransactionsService } from '../transactions-service';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let vaultStorage: ServiceStorage;
let service: TransactionsService;
let clock = Date.parse('2026-01-01T00:00:00.000Z');

beforeEach(async () => {
  dir = createTestDataDir('payment-services');
  storage = openServiceStorage('transactions', { dataDir: dir });
  vaultStorage = openServiceStorage('vault', { dataDir: dir });
  service = new TransactionsService({
    store: storage.store,
    db: storage.db,
    vault: new VaultService({ store: vaultStorage.store, db: vaultStorage.db }),
    now: () => new Date((clock += 1000)),
  });
  await service.catchUp();
});
afterEach(async () => {
  await service.stop();
  await storage.close();
  await vaultStorage.close();
  removeTestDataDir(dir);
});

const body = (overrides: Partial<PaymentServiceCreateInput> = {}): PaymentServiceCreateInput => ({
  display_name: 'Cards',
  payment_service_definition_id: 'mock-card',
  fields: [{ key: 'merchant_id', value: 'm-1' }],
  accepted_currencies: ['USD'],
  accepted_countries: ['US'],
  ...overrides,
});

it('creates with defaults, positions after the last one, lists by position then age', async () => {
  const first = await service.paymentServices.create('shop-a', body({ display_name: 'First' }));
  expect(first).toMatchObject({
    type: 'payment-service',
    merchant_account_id: 'shop-a',
    payment_service_definition_id: 'mock-card',
    method: 'card',
    position: 1,
    active: true,
    status: 'created',
    three_d_secure_enabled: false,
    network_tokens_enabled: false,
    is_deleted: false,
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    capabilities: { multiple_captures: true, three_d_secure: true, delayed_capture: true },
  });
  const second = await service.paymentServices.create('shop-a', body({ display_name: 'Second' }));
  expect(second.position).toBe(2);
  const front = await service.paymentServices.create('shop-a', body({ display_name: 'Front', position: 0 }));
  await service.paymentServices.create('shop-b', body({ display_name: 'Other account' }));

  const page = service.paymentServices.list({ merchant_account_id: 'shop-a', limit: 20 });
  expect(page.items.map((item) => item.display_name)).toEqual(['Front', 'First', 'Second']);
  expect(page).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });

  const firstPage = service.paymentServices.list({ merchant_account_id: 'shop-a', limit: 2 });
  expect(firstPage.items.map((item) => item.id)).toEqual([front.id, first.id]);
  const secondPage = service.paymentServices.list({
    merchant_account_id: 'shop-a',
    limit: 2,
    cursor: firstPage.next_cursor,
  });
  expect(secondPage.items.map((item) => item.id)).toEqual([second.id]);
  expect(secondPage.next_cursor).toBeNull();
});

it('turns capabilities off per connection and back on; the connection shows its effective capabilities', async () => {
  const created = await service.paymentServices.create('shop-a', body({ capabilities: { multiple_captures: false } }));
  expect(created.capabilities.multiple_captures).toBe(false);
  expect(service.paymentServices.connection('shop-a', created.id)?.effectiveCapabilities).toMatchObject({
    multipleCaptures: false,
    delayedCapture: true,
  });

  const updated = await service.paymentServices.update('shop-a', created.id, {
    capabilities: { delayed_capture: false },
  });
  expect(updated.capabilities).toMatchObject({
    multiple_captures: false,
    delayed_capture: false,
    three_d_secure: true,
  });
  const restored = await service.paymentServices.update('shop-a', created.id, {
    capabilities: { multiple_captures: true },
  });
  expect(restored.capabilities).toMatchObject({ multiple_captures: true, delayed_capture: false });
  expect(service.paymentServices.connection('shop-b', created.id)).toBeNull();
});

it('updates only what is sent: fields by key, merchant profile with its time', async () => {
  const created = await service.paymentServices.create('shop-a', body());
  const updated = await service.paymentServices.update('shop-a', created.id, {
    accepted_currencies: ['EUR', 'GBP'],
    three_d_secure_enabled: true,
    merchant_profile: {
      visa: {
        merchant_acquirer_bin: '516327',
        merchant_acquirer_id: '123',
        merchant_name: 'Shop',
        merchant_country_code: '840',
        merchant_category_code: '5411',
        merchant_url: 'https://shop.example',
      },
    },
    fields: [{ key: 'merchant_id', value: '' }],
  });
  expect(updated).toMatchObject({
    ...created,
    merchant_profile: expect.any(Object),
    accepted_currencies: ['EUR', 'GBP'],
    three_d_secure_enabled: true,
    fields: [],
    updated_at: expect.any(String),
  });
  expect(updated.merchant_profile?.visa).toMatchObject({ merchant_name: 'Shop', created_at: updated.updated_at });
});

it('is 404 under another merchant account and after delete; deleted ones list only with deleted=true', async () => {
  const created = await service.paymentServices.create('shop-a', body());
  expect(() => service.paymentServices.get('shop-b', created.id)).toThrow(ApiError);
  await expect(service.paymentServices.update('shop-b', created.id, { display_name: 'x' })).rejects.toMatchObject({
    status: 404,
  });
  await expect(service.paymentServices.delete('shop-b', created.id)).rejects.toMatchObject({ status: 404 });

  await service.paymentServices.delete('shop-a', created.id);
  expect(() => service.paymentServices.get('shop-a', created.id)).toThrow(expect.objectContaining({ status: 404 }));
  await expect(service.paymentServices.delete('shop-a', created.id)).rejects.toMatchObject({ status: 404 });
  expect(service.paymentServices.list({ merchant_account_id: 'shop-a', limit: 20 }).items).toEqual([]);
  expect(service.paymentServices.list({ merchant_account_id: 'shop-a', limit: 20, deleted: true }).items).toEqual([
    expect.objectContaining({ id: created.id, is_deleted: true, active: false }),
  ]);
});

it('refuses an unknown definition with 400 and details', async () => {
  await expect(
    service.paymentServices.create('shop-a', body({ payment_service_definition_id: 'nope' })),
  ).rejects.toMatchObject({
    status: 400,
    details: [
      {
        location: 'body',
        pointer: '/payment_service_definition_id',
        message: expect.any(String),
        type: 'unknown_payment_service_definition',
      },
    ],
  });
});

it('lists the definitions, mock-card included', () => {
  const page = service.paymentServices.listDefinitions({ limit: 20 });
  expect(page.items.map((definition) => definition.id)).toContain('mock-card');
  expect(service.paymentServices.getDefinition('mock-card')).toMatchObject({
    type: 'payment-service-definition',
    method: 'card',
    mode: 'card',
  });
  expect(() => service.paymentServices.getDefinition('nope')).toThrow(expect.objectContaining({ status: 404 }));
});

it('answers a list kept in memory only until it changes: by this service, or by another process on the same file', async () => {
  const listed = () =>
    service.paymentServices.list({ merchant_account_id: 'shop-a', limit: 20 }).items.map((item) => item.display_name);
  const created = await service.paymentServices.create('shop-a', body({ display_name: 'First' }));
  expect(listed()).toEqual(['First']);
  expect(listed()).toEqual(['First']);

  await service.paymentServices.update('shop-a', created.id, { display_name: 'Renamed' });
  expect(listed()).toEqual(['Renamed']);

  // Another process (the CLI's `read-models rebuild` swaps rows in through a connection of its own).
  const elsewhere = openServiceStorage('transactions', { dataDir: dir });
  try {
    elsewhere.db.prepare("UPDATE payment_services SET display_name = 'Rebuilt' WHERE id = ?").run(created.id);
  } finally {
    await elsewhere.close();
  }
  expect(listed()).toEqual(['Rebuilt']);
});
