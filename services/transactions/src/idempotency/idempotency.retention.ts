import type Database from 'better-sqlite3';
import type { RetentionTask } from '@switchyard/service';

/**
 * `Idempotency-Key` records past their expiry (24 h after their answer, as the API promises). A claim already purges
 * up to 100 of them; this removes the rest when traffic is low or stops, so the table holds about one day of keys.
 */
export function idempotencyRetention(db: Database.Database): RetentionTask {
  const prune = db.prepare<{ now: number; limit: number }>(
    `DELETE FROM idempotency_keys WHERE rowid IN (
       SELECT rowid FROM idempotency_keys WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit)`,
  );
  return {
    name: 'idempotency-keys',
    pruneBatch: (now, limit) => prune.run({ now: now.getTime(), limit }).changes,
  };
}
