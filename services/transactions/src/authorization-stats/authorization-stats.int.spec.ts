/** The authorization statistics read model over an in-memory SQLite: attempts per connection and minute, failovers included. */
import Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import { AuthorizationStatsReadModel } from './authorization-stats.read-model';

const CARDS = 'aaaaaaaa-0000-4000-8000-000000000001';
const BACKUP = 'aaaaaaaa-0000-4000-8000-000000000002';

let db: Database.Database;
let model: AuthorizationStatsReadModel;
let position = 0;

beforeEach(() => {
  db = new Database(':memory:');
  model = new AuthorizationStatsReadModel(db);
});
afterEach(() => db.close());

const apply = (transactionId: string, type: string, data: Record<string, unknown>, streamPrefix = 'transaction-') => {
  position += 1;
  const event: RecordedEvent = {
    id: `e${position}`,
    streamId: `${streamPrefix}${transactionId}`,
    type,
    data,
    metadata: {},
    revision: 0,
    position: String(position),
    recordedAt: '2026-03-01T10:00:00.000Z',
  };
  model.projection.apply(event, db);
};
const created = (id: string, at: string, paymentServiceId = CARDS, merchantAccountId = 'default') =>
  apply(id, 'TransactionCreated', {
    transactionId: id,
    merchantAccountId,
    paymentServiceId,
    amount: 1299,
    currency: 'USD',
    at,
  });

it('counts each decided attempt once, in the minute it was decided, with its latency from the start of the attempt', () => {
  created('t1', '2026-03-01T10:00:10.000Z');
  apply('t1', 'AuthorizationSucceeded', { authorizedAmount: 1299, at: '2026-03-01T10:00:10.250Z' });
  // A late notification of the same authorization changes nothing.
  apply('t1', 'AuthorizationSucceeded', { authorizedAmount: 1299, at: '2026-03-01T10:03:00.000Z' });
  created('t2', '2026-03-01T10:00:20.000Z');
  apply('t2', 'AuthorizationDeclined', { errorCode: 'insufficient_funds', at: '2026-03-01T10:00:20.050Z' });
  created('t3', '2026-03-01T10:01:59.900Z');
  apply('t3', 'AuthorizationFailed', { errorCode: 'service_error', at: '2026-03-01T10:02:00.100Z' });
  created('t4', '2026-03-01T10:02:30.000Z'); // still open: not counted

  expect(model.perMinuteBuckets('default', new Date('2026-03-01T10:00:00Z'), new Date('2026-03-01T11:00:00Z'))).toEqual(
    [
      {
        payment_service_id: CARDS,
        minute: '2026-03-01T10:00:00.000Z',
        attempts: 2,
        succeeded: 1,
        declined: 1,
        failed: 0,
        latency_ms_avg: 150,
        latency_ms_max: 250,
      },
      {
        payment_service_id: CARDS,
        minute: '2026-03-01T10:02:00.000Z',
        attempts: 1,
        succeeded: 0,
        declined: 0,
        failed: 1,
        latency_ms_avg: 200,
        latency_ms_max: 200,
      },
    ],
  );
});

it('counts a failover as a failed attempt at the first connection and a new attempt at the next', () => {
  created('t1', '2026-03-01T10:00:00.000Z');
  apply('t1', 'AuthorizationAttemptFailed', {
    paymentServiceId: CARDS,
    nextPaymentServiceId: BACKUP,
    kind: 'failed',
    error: {},
    at: '2026-03-01T10:00:01.000Z',
  });
  apply('t1', 'AuthorizationSucceeded', { authorizedAmount: 1299, at: '2026-03-01T10:00:01.400Z' });
  expect(model.perMinuteBuckets('default', new Date('2026-03-01T10:00:00Z'), new Date('2026-03-01T10:01:00Z'))).toEqual(
    [
      {
        payment_service_id: CARDS,
        minute: '2026-03-01T10:00:00.000Z',
        attempts: 1,
        succeeded: 0,
        declined: 0,
        failed: 1,
        latency_ms_avg: 1000,
        latency_ms_max: 1000,
      },
      {
        payment_service_id: BACKUP,
        minute: '2026-03-01T10:00:00.000Z',
        attempts: 1,
        succeeded: 1,
        declined: 0,
        failed: 0,
        latency_ms_avg: 400,
        latency_ms_max: 400,
      },
    ],
  );
});

it('answers only the merchant account asked for and the range asked for, and ignores other streams', () => {
  created('t1', '2026-03-01T10:00:00.000Z', CARDS, 'shop-1');
  apply('t1', 'AuthorizationSucceeded', { at: '2026-03-01T10:00:00.100Z' });
  created('t2', '2026-03-01T09:00:00.000Z');
  apply('t2', 'AuthorizationSucceeded', { at: '2026-03-01T09:00:00.100Z' });
  apply(
    'x',
    'TransactionCreated',
    { transactionId: 'x', merchantAccountId: 'default', paymentServiceId: CARDS, at: '2026-03-01T10:00:00.000Z' },
    'not-a-transaction-',
  );
  const lastHour = [new Date('2026-03-01T09:30:00Z'), new Date('2026-03-01T10:30:00Z')] as const;
  expect(model.perMinuteBuckets('default', ...lastHour)).toEqual([]);
  expect(model.perMinuteBuckets('shop-1', ...lastHour)).toHaveLength(1);
});
