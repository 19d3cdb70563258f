/**
 * How long one retention batch holds the webhooks service's SQLite file (and its event loop) on a table of
 * realistic size: `node -r ./scripts/register.cjs bench/retention-batch.ts [deliveries]` (default 1,000,000
 * deliveries with one attempt and one event each; a third of them finished past the retention). The file is WAL
 * with synchronous=FULL, as the services' are. Prints per-batch times (500 rows, the default RETENTION_BATCH_SIZE)
 * and the time of an ingest (one event, one delivery) made between batches.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { deliveryRetention } from '../services/webhooks/src/delivery/delivery-retention';
import { DeliveryStore } from '../services/webhooks/src/delivery/delivery-store';

const total = Number(process.argv[2] ?? 1_000_000);
const batchSize = 500;
const DAY = 24 * 60 * 60 * 1000;
const now = Date.parse('2026-06-01T00:00:00.000Z');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retention-bench-'));
const db = new Database(path.join(dir, 'webhooks.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const store = new DeliveryStore(db);
const task = deliveryRetention(db, 30);

const started = performance.now();
const insertEvent = db.prepare(
  `INSERT INTO webhook_delivery_events (key, message_id, name, stream_id, resource_id, merchant_account_id, created_at, created_ms, body)
   VALUES (?, ?, 'transaction.updated', ?, ?, 'default', ?, ?, ?)`,
);
const insertDelivery = db.prepare(
  `INSERT INTO webhook_deliveries (id, subscription_id, event_seq, stream_id, queue_seq, status, next_attempt_ms, scheduled_ms, created_at, updated_at)
   VALUES (?, 'sub-1', ?, ?, ?, 'succeeded', NULL, ?, ?, ?)`,
);
const insertAttempt = db.prepare(
  `INSERT INTO webhook_delivery_attempts (delivery_id, n, attempted_at, response_status, error, duration_ms) VALUES (?, 1, ?, 200, NULL, 12)`,
);
const body = JSON.stringify({
  type: 'event',
  name: 'transaction.updated',
  target: { type: 'transaction', amount: 1299, status: 'capture_succeeded', metadata: { order: 'x'.repeat(200) } },
});
db.transaction(() => {
  for (let n = 0; n < total; n += 1) {
    // Spread over 45 days: the first third is past a 30-day retention.
    const at = now - 45 * DAY + Math.floor((n / total) * 45 * DAY);
    const iso = new Date(at).toISOString();
    const eventSeq = Number(
      insertEvent.run(`m-${n}:transaction.updated`, `m-${n}`, `transaction-${n}`, `${n}`, iso, at, body)
        .lastInsertRowid,
    );
    insertDelivery.run(`d-${n}`, eventSeq, `transaction-${n}`, n, at, iso, iso);
    insertAttempt.run(`d-${n}`, iso);
  }
})();
console.log(
  `filled ${total} deliveries, events and attempts in ${((performance.now() - started) / 1000).toFixed(1)} s (${(fs.statSync(path.join(dir, 'webhooks.db')).size / 1e6).toFixed(0)} MB)`,
);

const batches: number[] = [];
const ingests: number[] = [];
let deleted = 0;
for (let round = 0; ; round += 1) {
  const t = performance.now();
  const count = task.pruneBatch(new Date(now), batchSize);
  batches.push(performance.now() - t);
  deleted += count;
  const i = performance.now();
  store.ingest(
    [
      {
        key: `live-${round}:transaction.updated`,
        messageId: `live-${round}`,
        name: 'transaction.updated',
        streamId: `transaction-live-${round}`,
        resourceId: 'x',
        merchantAccountId: 'default',
        createdAt: new Date(now).toISOString(),
        body,
      },
    ],
    () => ['sub-1'],
    () => `live-${round}`,
    new Date(now),
  );
  ingests.push(performance.now() - i);
  if (count < batchSize) break;
}
const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!.toFixed(2);
console.log(
  `deleted ${deleted} rows in ${batches.length} batches of ${batchSize}: per batch median ${pct(batches, 50)} ms, p99 ${pct(batches, 99)} ms, max ${pct(batches, 100)} ms`,
);
console.log(`an ingest between batches: median ${pct(ingests, 50)} ms, p99 ${pct(ingests, 99)} ms`);
db.close();
fs.rmSync(dir, { recursive: true, force: true });
