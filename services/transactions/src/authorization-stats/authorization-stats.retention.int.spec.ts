/** Retention in the transactions service: authorization statistics by age, idempotency records past their expiry. */
import Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import { RetentionSweeper } from '@switchyard/service';
import { IdempotencyStore, requestFingerprint } from '../idempotency/idempotency-store';
import { idempotencyRetention } from '../idempotency/idempotency.retention';
import { authorizationStatsRetention } from './authorization-stats.retention';
import { AuthorizationStatsReadModel } from './authorization-stats.read-model';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
let position = 0;
const recorded = (streamId: string, type: string, data: Record<string, unknown>): RecordedEvent =>
  ({
    streamId,
    type,
    data,
    position: String((position += 1)),
    recordedAt: String(data.at),
    revision: 0,
    id: `e-${position}`,
    metadata: {},
  }) as unknown as RecordedEvent;

describe('retention in the transactions service', () => {
  it('prunes authorization statistics older than the retention and idempotency records past their expiry, and nothing else, while both are written', async () => {
    let clock = T0;
    const now = () => new Date(clock);
    const db = new Database(':memory:');
    const stats = new AuthorizationStatsReadModel(db);
    const idempotency = new IdempotencyStore(db, { now });
    const authorize = (n: number, at: number) => {
      const at0 = new Date(at).toISOString();
      stats.projection.apply(
        recorded(`transaction-${n}`, 'TransactionCreated', {
          merchantAccountId: 'default',
          paymentServiceId: 'ps-1',
          at: at0,
        }),
        db,
      );
      stats.projection.apply(
        recorded(`transaction-${n}`, 'AuthorizationSucceeded', { at: new Date(at + 100).toISOString() }),
        db,
      );
    };
    const key = (name: string) =>
      idempotency.run(
        { merchantAccountId: 'default', operation: 'transactions.create', key: name },
        requestFingerprint({ name }),
        async () => ({ ok: name }),
      );

    for (let n = 0; n < 700; n += 1) authorize(n, T0 + n * 1000); // day 0
    authorize(10_000, T0 + 29 * DAY); // 11 days before "now": kept
    for (let n = 0; n < 300; n += 1) await key(`old-${n}`); // answered at T0: expire at T0 + 24 h
    clock = T0 + 40 * DAY - 60 * 60 * 1000;
    await key('recent'); // an hour before "now": kept

    clock = T0 + 40 * DAY;
    const sweeper = new RetentionSweeper({
      tasks: [authorizationStatsRetention(db, 30), idempotencyRetention(db)],
      now,
      batchSize: 200,
    });
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        authorize(20_000 + written, clock);
        await key(`live-${written}`);
        written += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const deleted = await sweeper.sweep();
    writing = false;
    await writer;

    // Each claim also purges up to 100 expired keys itself: between them and the sweep, every old key is gone.
    expect(deleted['authorization-stats']).toBe(700);
    expect(written).toBeGreaterThan(2);
    const transactions = (
      db.prepare('SELECT transaction_id FROM authorization_attempts').all() as Array<{ transaction_id: string }>
    ).map((row) => row.transaction_id);
    expect(transactions.sort()).toEqual(
      ['10000', ...Array.from({ length: written }, (_, n) => String(20_000 + n))].sort(),
    );
    const keys = (db.prepare('SELECT key FROM idempotency_keys').all() as Array<{ key: string }>).map((row) => row.key);
    expect(keys.sort()).toEqual(['recent', ...Array.from({ length: written }, (_, n) => `live-${n}`)].sort());
    // The chart still answers for what it keeps.
    expect(stats.perMinuteBuckets('default', new Date(T0 + 29 * DAY), new Date(T0 + 29 * DAY + 60_000))).toMatchObject([
      { attempts: 1, succeeded: 1 },
    ]);

    // No traffic after a burst: nothing claims, so only the sweep removes the keys once they expire.
    for (let n = 0; n < 450; n += 1) await key(`burst-${n}`);
    clock += 23 * 60 * 60 * 1000;
    expect(await sweeper.sweep()).toEqual({ 'authorization-stats': 0, 'idempotency-keys': 1 }); // 'recent', answered an hour earlier
    clock += 2 * 60 * 60 * 1000;
    expect(await sweeper.sweep()).toEqual({ 'authorization-stats': 0, 'idempotency-keys': written + 450 });
    expect(db.prepare('SELECT count(*) AS n FROM idempotency_keys').get()).toEqual({ n: 0 });
    db.close();
  });
});
