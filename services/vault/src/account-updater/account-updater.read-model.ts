/**
 * Account updater jobs and their inquiries, projected from `account-updater-job-<uuid>`: which jobs are still open
 * (the timer's work list) and which payment methods wait in an open inquiry (the request's quick check; the claim
 * stream is what guarantees it under concurrency). No card data: inquiries name payment methods only.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { AccountUpdaterJobEvent } from './account-updater-job';

export interface OpenJobRow {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly status: 'created' | 'submitted';
}

export class AccountUpdaterReadModel {
  readonly projection: Projection;
  private readonly open: Database.Statement<
    [],
    { id: string; merchant_account_id: string; status: 'created' | 'submitted' }
  >;
  private readonly waiting: Database.Statement<[string], { found: number }>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS account_updater_jobs (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, status TEXT NOT NULL, provider_job_id TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS account_updater_jobs_open ON account_updater_jobs (status, created_at);
      CREATE TABLE IF NOT EXISTS account_updater_inquiries (
        id TEXT PRIMARY KEY, job_id TEXT NOT NULL, payment_method_id TEXT NOT NULL, outcome TEXT, completed_at TEXT);
      CREATE INDEX IF NOT EXISTS account_updater_inquiries_by_payment_method ON account_updater_inquiries (payment_method_id, outcome);`);
    this.open = db.prepare(
      `SELECT id, merchant_account_id, status FROM account_updater_jobs WHERE status IN ('created', 'submitted') ORDER BY created_at, id`,
    );
    this.waiting = db.prepare(
      'SELECT 1 AS found FROM account_updater_inquiries WHERE payment_method_id = ? AND outcome IS NULL LIMIT 1',
    );

    const insertJob = db.prepare<[{ id: string; merchantAccountId: string; at: string }]>(
      `INSERT OR IGNORE INTO account_updater_jobs (id, merchant_account_id, status, provider_job_id, created_at, updated_at)
       VALUES (@id, @merchantAccountId, 'created', NULL, @at, @at)`,
    );
    const insertInquiry = db.prepare<[{ id: string; jobId: string; paymentMethodId: string }]>(
      'INSERT OR IGNORE INTO account_updater_inquiries (id, job_id, payment_method_id, outcome, completed_at) VALUES (@id, @jobId, @paymentMethodId, NULL, NULL)',
    );
    const submitted = db.prepare<[{ id: string; providerJobId: string; at: string }]>(
      `UPDATE account_updater_jobs SET status = 'submitted', provider_job_id = @providerJobId, updated_at = @at WHERE id = @id AND status = 'created'`,
    );
    const inquiryCompleted = db.prepare<[{ id: string; outcome: string; at: string }]>(
      'UPDATE account_updater_inquiries SET outcome = @outcome, completed_at = @at WHERE id = @id',
    );
    const touched = db.prepare<[{ id: string; at: string }]>(
      'UPDATE account_updater_jobs SET updated_at = @at WHERE id = @id',
    );
    const completed = db.prepare<[{ id: string; at: string }]>(
      `UPDATE account_updater_jobs SET status = 'completed', updated_at = @at WHERE id = @id`,
    );

    this.projection = {
      name: 'account-updater',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as AccountUpdaterJobEvent;
        switch (event.type) {
          case 'AccountUpdaterJobCreated':
            insertJob.run({ id: event.data.id, merchantAccountId: event.data.merchantAccountId, at: event.data.at });
            for (const inquiry of event.data.inquiries)
              insertInquiry.run({ id: inquiry.id, jobId: event.data.id, paymentMethodId: inquiry.paymentMethodId });
            return;
          case 'AccountUpdaterJobSubmitted':
            submitted.run(event.data);
            return;
          case 'AccountUpdaterInquiryCompleted':
            inquiryCompleted.run({ id: event.data.inquiryId, outcome: event.data.outcome, at: event.data.at });
            touched.run({ id: event.data.id, at: event.data.at });
            return;
          case 'AccountUpdaterJobCompleted':
            completed.run(event.data);
            return;
          default:
            return;
        }
      },
    };
  }

  /** Jobs not yet submitted or still waiting for the updater, oldest first. */
  openJobs(): OpenJobRow[] {
    return this.open
      .all()
      .map((row) => ({ id: row.id, merchantAccountId: row.merchant_account_id, status: row.status }));
  }

  /** Whether the payment method waits in an open inquiry (as far as this read model has seen). */
  isWaiting(paymentMethodId: string): boolean {
    return this.waiting.get(paymentMethodId) !== undefined;
  }
}
