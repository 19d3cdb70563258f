/**
 * Issue 22, items 8 and 11: an Idempotency-Key whose request may have reached the provider stays bound to what it
 * did. The event store is a real SQLite store behind a wrapper that fails (or never finishes) the append recording
 * the provider's answer; the provider is the simulator over HTTP. A retry with the same key must never call the
 * provider again: it answers the transaction's current state, and once reconciliation has synced it, that state.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import type { TransactionCreateInput } from '@switchyard/contracts';
import { EventStoreUnavailableError, SqliteEventStore, type EventStore, type NewEvent } from '@switchyard/eventstore';
import { VaultService } from '@switchyard/vault';
import { TransactionsService } from '../transactions-service';

/** What the wrapper does with an append of one of the watched event types. */
type AppendFault = (events: readonly NewEvent[], append: () => Promise<unknown>) => Promise<unknown> | null;

/** The SQLite store with a fault on the appends `fault` picks (it returns null for the ones it lets through). */
function withFault(inner: EventStore, fault: { current: AppendFault | null }): EventStore {
  return {
    append: (streamId, events, options) => {
      const append = () => inner.append(streamId, events, options);
      const faulty = fault.current?.(events, append);
      return (faulty ?? append()) as ReturnType<EventStore['append']>;
    },
    readStream: (streamId, options) => inner.readStream(streamId, options),
    readAll: (options) => inner.readAll(options),
    subscribe: (options) => inner.subscribe(options),
    onAppended: (listener) => inner.onAppended(listener),
    appendNotifications: inner.appendNotifications,
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

/** Once: the first append holding an event of `type`. */
const once = (type: string, then: (append: () => Promise<unknown>) => Promise<unknown>): AppendFault => {
  let done = false;
  return (events, append) => {
    if (done || !events.some((event) => event.type === type)) return null;
    done = true;
    return then(append);
  };
};

let dir: string;
let file: string;
let sqlite: SqliteEventStore;
/** The vault's own store: kept across restarts, as its root key (the fingerprint key comes from it). */
let vaultStore: SqliteEventStore;
let simulator: RunningSimulator;
const fault: { current: AppendFault | null } = { current: null };
const services: TransactionsService[] = [];
const account = 'shop-idempotency';
const webhookSecret = 'whsec_test_0123456789';
const multipleCaptures = { multiple_captures_enabled: true, over_capture_amount: null, over_capture_percentage: null };
const vaultKey = Buffer.alloc(32, 7);
const card = { method: 'card' as const, number: '4111111111111111', expiration_date: '12/30', security_code: '123' };
const body = (overrides: Partial<TransactionCreateInput> = {}): TransactionCreateInput => ({
  amount: 10_000,
  currency: 'USD',
  payment_method: card,
  intent: 'authorize',
  store: false,
  merchant_initiated: false,
  is_subsequent_payment: false,
  is_amount_estimated: false,
  ...overrides,
});

async function startService(options: { now?: () => Date } = {}): Promise<TransactionsService> {
  const service = new TransactionsService({
    store: withFault(sqlite, fault),
    db: sqlite.database,
    vault: new VaultService({ store: vaultStore, db: vaultStore.database, vaultKey }),
    providers: { publicBaseUrl: () => 'http://127.0.0.1:9', mockCard: { baseUrl: simulator.url, webhookSecret } },
    ...options,
  });
  services.push(service);
  await service.catchUp();
  return service;
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-idempotency-'));
  file = path.join(dir, 'transactions.db');
  // A short busy timeout: the busy case below holds the write lock from another connection.
  sqlite = new SqliteEventStore(file, { busyTimeoutMs: 50 });
  vaultStore = new SqliteEventStore(path.join(dir, 'vault.db'));
  simulator = await startSimulator({ webhookSecret });
  fault.current = null;
});
afterEach(async () => {
  for (const service of services.splice(0)) await service.stop();
  await simulator.stop();
  await sqlite.close();
  await vaultStore.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function connection(service: TransactionsService): Promise<void> {
  await service.paymentServices.create(account, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
}

const authorizationsAtProvider = () => simulator.ledger.all().length;

describe('POST /transactions with an Idempotency-Key, the answer lost after the provider authorized', () => {
  const appendFailures: [string, (append: () => Promise<unknown>) => Promise<unknown>][] = [
    [
      'the event store is unavailable',
      async () => Promise.reject(new EventStoreUnavailableError('EventStoreDB: connection refused', true)),
    ],
    [
      'SQLite is busy (another connection holds the write lock)',
      async (append) => {
        const blocker = new Database(file);
        blocker.exec('BEGIN IMMEDIATE');
        try {
          return await append();
        } finally {
          blocker.exec('ROLLBACK');
          blocker.close();
        }
      },
    ],
  ];

  it.each(appendFailures)(
    '%s: a retry answers the same transaction and never authorizes again',
    async (_case, failure) => {
      const service = await startService();
      await connection(service);
      fault.current = once('AuthorizationSucceeded', failure);
      const request = { merchant_account_id: account, body: body(), idempotency_key: 'order-1001' };

      await expect(service.transactions.create(request)).rejects.toBeDefined();
      expect(authorizationsAtProvider()).toBe(1);

      const retried = await service.transactions.create(request);
      expect(authorizationsAtProvider()).toBe(1);
      const reference = simulator.ledger.all()[0]?.reference;
      expect(retried.id).toBe(reference);
      expect(retried.status).toBe('processing');

      // Reconciliation syncs the authorization the provider holds; the key then answers that.
      await service.transactions.reconcile(0);
      expect(await service.transactions.create(request)).toMatchObject({
        id: reference,
        status: 'authorization_succeeded',
        authorized_amount: 10_000,
      });
      expect(authorizationsAtProvider()).toBe(1);
    },
  );
});

it('a capture retried after its answer was lost answers that capture and never captures again', async () => {
  const service = await startService();
  await connection(service);
  const authorized = await service.transactions.create({ merchant_account_id: account, body: body() });
  fault.current = once('CaptureSucceeded', async () =>
    Promise.reject(new EventStoreUnavailableError('EventStoreDB: connection refused', true)),
  );
  const capture = {
    merchant_account_id: account,
    transaction_id: authorized.id,
    body: { amount: 4_000, final: false },
    settings: multipleCaptures,
    prefer_capture: false,
    idempotency_key: 'capture-1',
  };

  await expect(service.transactions.captureTransaction(capture)).rejects.toBeDefined();
  const retried = await service.transactions.captureTransaction(capture);
  expect(retried).toMatchObject({ id: authorized.id, status: 'capture_pending' });
  expect(simulator.ledger.counts(authorized.id).captures).toBe(1);

  await service.transactions.reconcile(0);
  expect(await service.transactions.captureTransaction(capture)).toMatchObject({
    status: 'capture_succeeded',
    captured_amount: 4_000,
  });
  expect(simulator.ledger.counts(authorized.id).captures).toBe(1);
});

it('a key whose request died mid-way (after the provider authorized) answers the reconciled transaction', async () => {
  const before = await startService();
  await connection(before);
  // The process "dies" while recording the provider's answer: the append never finishes, nothing after it runs.
  fault.current = once('AuthorizationSucceeded', () => new Promise<never>(() => {}));
  const request = { merchant_account_id: account, body: body(), idempotency_key: 'order-2002' };
  void before.transactions.create(request);
  await vi.waitFor(() => expect(authorizationsAtProvider()).toBe(1));
  await before.stop();

  // Restarted three minutes later (default settings: a 10-minute hold window): the key's lease has passed; the hold
  // timer completes the dead create request and reconciliation syncs it.
  const later = () => new Date(Date.now() + 3 * 60_000);
  const after = await startService({ now: later });
  const answered = await after.transactions.create(request);
  const reference = simulator.ledger.all()[0]?.reference;
  expect(answered.id).toBe(reference);
  await after.transactions.expireHolds();
  await after.transactions.reconcile(0);
  expect(await after.transactions.create(request)).toMatchObject({ id: reference, status: 'authorization_succeeded' });
  expect(authorizationsAtProvider()).toBe(1);
});

describe('POST /transactions with an Idempotency-Key, the request lost around the transaction it records', () => {
  const transactionsCreated = async () =>
    (await sqlite.readAll()).filter((event) => event.type === 'TransactionCreated').map((event) => event.streamId);

  it('died right after the transaction was recorded: a retry past the lease answers it and makes no second one', async () => {
    const before = await startService();
    await connection(before);
    // The append of TransactionCreated commits, then the process "dies": nothing after it runs.
    let committed = false;
    fault.current = once('TransactionCreated', async (append) => {
      await append();
      committed = true;
      return new Promise<never>(() => {});
    });
    const request = { merchant_account_id: account, body: body(), idempotency_key: 'order-3003' };
    void before.transactions.create(request);
    await vi.waitFor(() => expect(committed).toBe(true));
    await before.stop();

    // Restarted three minutes later: the key's lease has passed.
    const after = await startService({ now: () => new Date(Date.now() + 3 * 60_000) });
    const answered = await after.transactions.create(request);
    expect(await transactionsCreated()).toEqual([`transaction-${answered.id}`]);
    expect(authorizationsAtProvider()).toBe(0);
    // Never sent to the provider: the hold timer and reconciliation settle it, and the key answers that.
    await after.transactions.expireHolds();
    await after.transactions.reconcile(0);
    expect(await after.transactions.create(request)).toMatchObject({
      id: answered.id,
      status: 'authorization_failed',
    });
    expect(await transactionsCreated()).toHaveLength(1);
    expect(authorizationsAtProvider()).toBe(0);
  });

  it('the transaction never recorded (its append failed): a retry makes the payment, once', async () => {
    const service = await startService();
    await connection(service);
    fault.current = once('TransactionCreated', async () =>
      Promise.reject(new EventStoreUnavailableError('EventStoreDB: connection refused', true)),
    );
    const request = { merchant_account_id: account, body: body(), idempotency_key: 'order-4004' };
    await expect(service.transactions.create(request)).rejects.toBeDefined();
    expect(await transactionsCreated()).toEqual([]);

    const retried = await service.transactions.create(request);
    expect(retried.status).toBe('authorization_succeeded');
    expect(await transactionsCreated()).toEqual([`transaction-${retried.id}`]);
    expect(await service.transactions.create(request)).toMatchObject({ id: retried.id });
    expect(authorizationsAtProvider()).toBe(1);
  });
});
