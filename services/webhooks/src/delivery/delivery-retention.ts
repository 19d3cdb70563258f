/**
 * Retention of the delivery store (`delivery-store.ts`): deliveries in a final state (`succeeded`, `failed`) for
 * longer than WEBHOOK_DELIVERY_RETENTION_DAYS go with their attempts; then the webhook events older than that which
 * no delivery refers to any more (delivered and pruned, or matched by no subscription). Deliveries still to be
 * attempted are kept however old, and so are their events. `webhook_resource_owners` (one small row per
 * transaction, needed for events of old transactions) is kept.
 */
import type Database from 'better-sqlite3';
import { daysBefore, type RetentionTask } from '@switchyard/service';

export function deliveryRetention(db: Database.Database, retentionDays: number): RetentionTask {
  // Partial: only finished deliveries are in it, and a delivery enters it once (when it finishes).
  db.exec(`
    CREATE INDEX IF NOT EXISTS webhook_deliveries_finished ON webhook_deliveries (updated_at)
      WHERE status IN ('succeeded', 'failed');
    CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_seq);`);
  const finished = db.prepare<{ cutoff: string; limit: number }, { id: string }>(
    `SELECT id FROM webhook_deliveries WHERE status IN ('succeeded', 'failed')
       AND updated_at < @cutoff ORDER BY updated_at LIMIT @limit`,
  );
  const deleteAttempts = db.prepare<[string]>(
    'DELETE FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT value FROM json_each(?))',
  );
  const deleteDeliveries = db.prepare<[string]>(
    'DELETE FROM webhook_deliveries WHERE id IN (SELECT value FROM json_each(?))',
  );
  const deleteEvents = db.prepare<{ cutoffMs: number; limit: number }>(
    `DELETE FROM webhook_delivery_events WHERE seq IN (
       SELECT e.seq FROM webhook_delivery_events e
       WHERE e.created_ms < @cutoffMs AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)
       ORDER BY e.created_ms LIMIT @limit)`,
  );
  const batch = db.transaction((cutoff: Date, limit: number): number => {
    const ids = finished.all({ cutoff: cutoff.toISOString(), limit }).map((row) => row.id);
    if (ids.length > 0) {
      const list = JSON.stringify(ids);
      deleteAttempts.run(list);
      deleteDeliveries.run(list);
    }
    // Events go once their deliveries are gone: in the batches after the last delivery batch.
    const events =
      ids.length < limit ? deleteEvents.run({ cutoffMs: cutoff.getTime(), limit: limit - ids.length }).changes : 0;
    return ids.length + events;
  });
  return {
    name: 'webhook-deliveries',
    pruneBatch: (now, limit) => batch.immediate(daysBefore(now, retentionDays), limit),
  };
}
