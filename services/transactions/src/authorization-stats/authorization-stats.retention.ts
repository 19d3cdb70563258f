import type Database from 'better-sqlite3';
import { daysBefore, type RetentionTask } from '@switchyard/service';

/**
 * Authorization attempts started more than AUTHORIZATION_STATS_RETENTION_DAYS ago leave the dashboard's chart data.
 * It is a read model: a rebuild brings them back from the events, and the next sweep removes them again.
 */
export function authorizationStatsRetention(db: Database.Database, retentionDays: number): RetentionTask {
  db.exec('CREATE INDEX IF NOT EXISTS authorization_attempts_started ON authorization_attempts (started_at)');
  const prune = db.prepare<{ cutoff: string; limit: number }>(
    `DELETE FROM authorization_attempts WHERE rowid IN (
       SELECT rowid FROM authorization_attempts WHERE started_at < @cutoff ORDER BY started_at LIMIT @limit)`,
  );
  return {
    name: 'authorization-stats',
    pruneBatch: (now, limit) => prune.run({ cutoff: daysBefore(now, retentionDays).toISOString(), limit }).changes,
  };
}
