/**
 * Every message of a transaction on `transactions.events` names whose transaction it is (`merchant_account_id`), so
 * that a consumer (the webhooks service) needs no state of its own, written and synced per transaction, to tell whose
 * a later event is — also for a transaction created before the relay's process started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InProcessMessageBus, type IncomingMessage } from '@switchyard/bus';
import { transactionsTopic, type EventMessage } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { transactionsRelay } from './transactions-relay';

let dir: string;
let storage: ServiceStorage;
let bus: InProcessMessageBus;
let received: EventMessage[];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-transactions-relay-'));
  storage = openServiceStorage('transactions', { dataDir: dir });
  bus = new InProcessMessageBus();
  received = [];
  await bus.subscribe({
    groupId: 'test',
    topics: [transactionsTopic],
    handler: async (message: IncomingMessage) => {
      received.push(JSON.parse(message.value) as EventMessage);
    },
  });
});

afterEach(async () => {
  await bus.close();
  await storage.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const relayOnce = async () => {
  const relay = transactionsRelay(storage, bus, {
    pollIntervalMs: 10_000,
    onError: (error) => expect(error).toBeNull(),
  });
  await relay.flush();
  await relay.stop();
};

const created = (id: string, merchantAccountId: string) =>
  storage.store.append(
    `transaction-${id}`,
    [{ type: 'TransactionCreated', data: { transactionId: id, merchantAccountId, amount: 100, currency: 'USD' } }],
    { expectedRevision: 'no_stream' },
  );

const later = (id: string, revision: number) =>
  storage.store.append(`transaction-${id}`, [{ type: 'CreateRequestCompleted', data: { reason: 'responded' } }], {
    expectedRevision: revision,
  });

it('names the merchant account on every event of a transaction, learned from its creation or read from it after a restart', async () => {
  await created('t-1', 'shop-a');
  await later('t-1', 0);
  await created('t-2', 'shop-b');
  await relayOnce();
  // A relay of a process started after the transactions were created: it reads whose they are from their first event.
  await later('t-2', 0);
  await later('t-1', 1);
  await relayOnce();
  await vi.waitFor(() => expect(received).toHaveLength(5));
  expect(received.map((message) => [message.stream_id, message.type, message.merchant_account_id])).toEqual([
    ['transaction-t-1', 'TransactionCreated', 'shop-a'],
    ['transaction-t-1', 'CreateRequestCompleted', 'shop-a'],
    ['transaction-t-2', 'TransactionCreated', 'shop-b'],
    ['transaction-t-2', 'CreateRequestCompleted', 'shop-b'],
    ['transaction-t-1', 'CreateRequestCompleted', 'shop-a'],
  ]);
});

it('names none for a stream that is not a transaction', async () => {
  await storage.store.append(
    'payment-service-p-1',
    [{ type: 'PaymentServiceCreated', data: { merchantAccountId: 'shop-a' } }],
    {
      expectedRevision: 'no_stream',
    },
  );
  await relayOnce();
  await vi.waitFor(() => expect(received).toHaveLength(1));
  expect(received[0]).not.toHaveProperty('merchant_account_id');
});
