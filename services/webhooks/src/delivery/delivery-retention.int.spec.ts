/** Retention of deliveries, attempts and webhook events: what is past its age goes, nothing else, with ingest going on. */
import Database from 'better-sqlite3';
import { RetentionSweeper } from '@switchyard/service';
import { deliveryRetention } from './delivery-retention';
import { DeliveryStore, type NewWebhookEvent } from './delivery-store';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

let seq = 0;
const event = (streamId: string, at: number): NewWebhookEvent => {
  seq += 1;
  return {
    key: `msg-${seq}:transaction.updated`,
    messageId: `msg-${seq}`,
    name: 'transaction.updated',
    streamId,
    resourceId: streamId,
    merchantAccountId: 'default',
    createdAt: new Date(at).toISOString(),
    body: JSON.stringify({ n: seq }),
  };
};

describe('webhook delivery retention (WEBHOOK_DELIVERY_RETENTION_DAYS)', () => {
  it('deletes deliveries finished longer ago than the retention with their attempts and events, and nothing else, while deliveries are ingested', async () => {
    const db = new Database(':memory:');
    const store = new DeliveryStore(db);
    let nextId = 0;
    const newId = () => `d-${(nextId += 1)}`;
    const deliveryOf = (streamId: string, at: number) => {
      store.ingest([event(streamId, at)], () => ['sub-1'], newId, new Date(at));
      return store.due(Number.MAX_SAFE_INTEGER, 10_000).find((row) => row.streamId === streamId)!;
    };
    const finish = (streamId: string, at: number, status: 'succeeded' | 'failed') => {
      const delivery = deliveryOf(streamId, at);
      const attempt = {
        deliveryId: delivery.id,
        attemptedAt: new Date(at).toISOString(),
        responseStatus: status === 'succeeded' ? 200 : 500,
        error: null,
        durationMs: 5,
      };
      store.recordAttempt(
        delivery,
        attempt,
        { status, nextAttemptMs: null, failures: status === 'failed' ? 1 : 0 },
        new Date(at),
      );
      return delivery.id;
    };

    // 1,200 old finished deliveries (more than two batches), each in its own stream so every one is a lane head.
    const oldFinished = Array.from({ length: 1_200 }, (_, n) =>
      finish(`tx-old-${n}`, T0 + n, n % 3 === 0 ? 'failed' : 'succeeded'),
    );
    const oldPending = deliveryOf('tx-old-pending', T0).id; // still to be attempted: kept however old
    store.ingest([event('tx-nobody', T0)], () => [], newId, new Date(T0)); // an old event no subscription wanted
    const recent = finish('tx-recent', T0 + 25 * DAY, 'succeeded'); // finished 6 days before "now"

    const now = new Date(T0 + 31 * DAY);
    const sweeper = new RetentionSweeper({ tasks: [deliveryRetention(db, 30)], now: () => now, batchSize: 500 });
    // Writes go on meanwhile: an ingest between every two batches.
    let ingesting = true;
    let ingested = 0;
    const writer = (async () => {
      while (ingesting) {
        store.ingest([event(`tx-live-${ingested}`, now.getTime())], () => ['sub-1'], newId, now);
        ingested += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const deleted = await sweeper.sweep();
    ingesting = false;
    await writer;

    const ids = (sql: string) => (db.prepare(sql).all() as Array<{ id: string }>).map((row) => row.id);
    const remaining = new Set(ids('SELECT id FROM webhook_deliveries'));
    expect(oldFinished.filter((id) => remaining.has(id))).toEqual([]);
    expect(remaining.has(oldPending)).toBe(true);
    expect(remaining.has(recent)).toBe(true);
    expect(remaining.size).toBe(2 + ingested);
    expect(ingested).toBeGreaterThan(2); // the sweep yielded to the writer between its batches
    expect(ids('SELECT delivery_id AS id FROM webhook_delivery_attempts')).toEqual([recent]);
    // Events: those of the kept deliveries, and none of the old ones without a delivery.
    const events = db.prepare('SELECT stream_id FROM webhook_delivery_events ORDER BY seq').all() as Array<{
      stream_id: string;
    }>;
    expect(events.map((row) => row.stream_id).filter((stream) => !stream.startsWith('tx-live-'))).toEqual([
      'tx-old-pending',
      'tx-recent',
    ]);
    expect(deleted).toEqual({ 'webhook-deliveries': 1_200 + 1_200 + 1 });

    // Nothing more to do: a second sweep deletes nothing.
    expect(await sweeper.sweep()).toEqual({ 'webhook-deliveries': 0 });
    db.close();
  });
});
