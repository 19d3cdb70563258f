/**
 * Authorization attempts per connection, for the operator dashboard's chart: one row per attempt of a transaction at a
 * connection (the first when the transaction is created, the next one at each failover), with when it started, when
 * the connection's answer was recorded and what it was. The query groups them per connection and per minute.
 *
 * A read model of its own (not columns of the transactions read model): the chart needs every attempt, failovers
 * included, where a transaction row holds only its last connection, and an index on the decision time.
 */
import type Database from 'better-sqlite3';
import type { AuthorizationStatsBucket } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';

const TRANSACTION_STREAM = 'transaction-';

type Outcome = 'succeeded' | 'declined' | 'failed';

interface BucketRecord {
  payment_service_id: string;
  minute: string;
  attempts: number;
  succeeded: number;
  declined: number;
  failed: number;
  latency_ms_avg: number;
  latency_ms_max: number;
}

/** The event's own time in one format (UTC, milliseconds), so that the stored times compare as text. */
const utc = (at: unknown, fallback: string): string => {
  const time = typeof at === 'string' ? Date.parse(at) : Number.NaN;
  return new Date(Number.isNaN(time) ? Date.parse(fallback) : time).toISOString();
};

export class AuthorizationStatsReadModel {
  readonly projection: Projection;
  private readonly perMinute: Database.Statement<[string, string, string], BucketRecord>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS authorization_attempts (
        transaction_id TEXT NOT NULL, attempt INTEGER NOT NULL, merchant_account_id TEXT NOT NULL,
        payment_service_id TEXT NOT NULL, started_at TEXT NOT NULL, decided_at TEXT, outcome TEXT, latency_ms INTEGER,
        PRIMARY KEY (transaction_id, attempt));
      CREATE INDEX IF NOT EXISTS authorization_attempts_decided ON authorization_attempts (merchant_account_id, decided_at);`);
    this.perMinute = db.prepare(
      `SELECT payment_service_id, substr(decided_at, 1, 16) || ':00.000Z' AS minute, count(*) AS attempts,
         sum(outcome = 'succeeded') AS succeeded, sum(outcome = 'declined') AS declined, sum(outcome = 'failed') AS failed,
         avg(latency_ms) AS latency_ms_avg, max(latency_ms) AS latency_ms_max
       FROM authorization_attempts WHERE merchant_account_id = ? AND decided_at >= ? AND decided_at < ?
       GROUP BY payment_service_id, minute ORDER BY minute, payment_service_id`,
    );

    const start = db.prepare(
      `INSERT OR IGNORE INTO authorization_attempts (transaction_id, attempt, merchant_account_id, payment_service_id, started_at)
       VALUES (@transactionId, @attempt, @merchantAccountId, @paymentServiceId, @at)`,
    );
    const open = db.prepare<[string], { attempt: number; merchant_account_id: string; started_at: string }>(
      'SELECT attempt, merchant_account_id, started_at FROM authorization_attempts WHERE transaction_id = ? ORDER BY attempt DESC LIMIT 1',
    );
    const decide = db.prepare(
      `UPDATE authorization_attempts SET decided_at = @at, outcome = @outcome, latency_ms = @latencyMs
       WHERE transaction_id = @transactionId AND attempt = @attempt AND decided_at IS NULL`,
    );
    /** The open attempt's answer; the first answer recorded counts (a later notification changes nothing here). */
    const decideOpen = (transactionId: string, at: string, outcome: Outcome) => {
      const current = open.get(transactionId);
      if (!current) return undefined;
      const latencyMs = Math.max(0, Date.parse(at) - Date.parse(current.started_at));
      decide.run({ transactionId, attempt: current.attempt, at, outcome, latencyMs });
      return current;
    };

    this.projection = {
      name: 'authorization-stats',
      apply(recorded: RecordedEvent) {
        if (!recorded.streamId.startsWith(TRANSACTION_STREAM)) return;
        const transactionId = recorded.streamId.slice(TRANSACTION_STREAM.length);
        const data = (recorded.data ?? {}) as Record<string, unknown>;
        const at = utc(data.at, recorded.recordedAt);
        switch (recorded.type) {
          case 'TransactionCreated':
            start.run({
              transactionId,
              attempt: 0,
              merchantAccountId: String(data.merchantAccountId),
              paymentServiceId: String(data.paymentServiceId),
              at,
            });
            return;
          case 'AuthorizationAttemptFailed': {
            const failed = decideOpen(transactionId, at, data.kind === 'declined' ? 'declined' : 'failed');
            if (!failed) return;
            start.run({
              transactionId,
              attempt: failed.attempt + 1,
              merchantAccountId: failed.merchant_account_id,
              paymentServiceId: String(data.nextPaymentServiceId),
              at,
            });
            return;
          }
          case 'AuthorizationSucceeded':
            decideOpen(transactionId, at, 'succeeded');
            return;
          case 'AuthorizationDeclined':
            decideOpen(transactionId, at, 'declined');
            return;
          case 'AuthorizationFailed':
            decideOpen(transactionId, at, 'failed');
            return;
          default:
            return;
        }
      },
    };
  }

  /** Attempts decided in `[from, to)`, per connection and minute. */
  perMinuteBuckets(merchantAccountId: string, from: Date, to: Date): AuthorizationStatsBucket[] {
    return this.perMinute.all(merchantAccountId, from.toISOString(), to.toISOString()).map((row) => ({
      payment_service_id: row.payment_service_id,
      minute: row.minute,
      attempts: row.attempts,
      succeeded: row.succeeded,
      declined: row.declined,
      failed: row.failed,
      latency_ms_avg: Math.round(row.latency_ms_avg),
      latency_ms_max: row.latency_ms_max,
    }));
  }
}
