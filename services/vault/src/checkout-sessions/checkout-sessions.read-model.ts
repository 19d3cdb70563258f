/**
 * Checkout sessions, projected from `checkout-session-<uuid>`: one row per session (deleted: the row goes) with its
 * details, its expiry, the attached card's summary and the transaction that used it.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { CheckoutSessionCard, CheckoutSessionDetails, CheckoutSessionEvent } from './checkout-session';

export interface CheckoutSessionView extends CheckoutSessionDetails {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly expiresAt: string;
  readonly card: CheckoutSessionCard | null;
  readonly usedByTransactionId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface CheckoutSessionRecord {
  id: string;
  merchant_account_id: string;
  expires_at: string;
  /** JSON of `CheckoutSessionDetails`. */
  details: string;
  /** JSON of `CheckoutSessionCard`, or null. */
  card: string | null;
  used_by_transaction_id: string | null;
  created_at: string;
  updated_at: string;
}

export class CheckoutSessionsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], CheckoutSessionRecord>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS checkout_sessions (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, expires_at TEXT NOT NULL, details TEXT NOT NULL, card TEXT,
        used_by_transaction_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);`);
    this.byId = db.prepare('SELECT * FROM checkout_sessions WHERE id = ?');
    const insert = db.prepare<[CheckoutSessionRecord]>(
      `INSERT OR REPLACE INTO checkout_sessions (id, merchant_account_id, expires_at, details, card, used_by_transaction_id, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @expires_at, @details, @card, @used_by_transaction_id, @created_at, @updated_at)`,
    );
    const updated = db.prepare<[{ id: string; details: string; expires_at: string; at: string }]>(
      'UPDATE checkout_sessions SET details = @details, expires_at = @expires_at, updated_at = @at WHERE id = @id',
    );
    const attached = db.prepare<[{ id: string; card: string; at: string }]>(
      'UPDATE checkout_sessions SET card = @card, updated_at = @at WHERE id = @id',
    );
    const used = db.prepare<[{ id: string; transaction: string; at: string }]>(
      'UPDATE checkout_sessions SET used_by_transaction_id = @transaction, updated_at = @at WHERE id = @id',
    );
    const remove = db.prepare<[string]>('DELETE FROM checkout_sessions WHERE id = ?');
    const byId = this.byId;

    this.projection = {
      name: 'checkout-sessions',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as CheckoutSessionEvent;
        switch (event.type) {
          case 'CheckoutSessionCreated': {
            const { id, merchantAccountId, expiresAt, at, ...details } = event.data;
            insert.run({
              id,
              merchant_account_id: merchantAccountId,
              expires_at: expiresAt,
              details: JSON.stringify(pickDetails(details)),
              card: null,
              used_by_transaction_id: null,
              created_at: at,
              updated_at: at,
            });
            return;
          }
          case 'CheckoutSessionUpdated': {
            const record = byId.get(event.data.id);
            if (!record) return;
            const details = {
              ...(JSON.parse(record.details) as CheckoutSessionDetails),
              ...pickDetails(event.data.changes),
            };
            updated.run({
              id: record.id,
              details: JSON.stringify(details),
              expires_at: event.data.expiresAt ?? record.expires_at,
              at: event.data.at,
            });
            return;
          }
          case 'CheckoutSessionCardAttached':
            attached.run({ id: event.data.id, card: JSON.stringify(event.data.card), at: event.data.at });
            return;
          case 'CheckoutSessionUsed':
            used.run({ id: event.data.id, transaction: event.data.transactionId, at: event.data.at });
            return;
          case 'CheckoutSessionDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
  }

  /** A session of any merchant account; null once deleted. */
  find(id: string): CheckoutSessionView | null {
    const record = this.byId.get(id);
    return record ? toView(record) : null;
  }
}

const detailKeys = [
  'cartItems',
  'metadata',
  'buyer',
  'airline',
  'amount',
  'currency',
  'paymentServiceId',
] as const satisfies readonly (keyof CheckoutSessionDetails)[];

/** Only the detail fields present (an update's changes are partial). */
function pickDetails(source: Partial<CheckoutSessionDetails>): Partial<CheckoutSessionDetails> {
  const picked: Record<string, unknown> = {};
  for (const key of detailKeys) if (source[key] !== undefined) picked[key] = source[key];
  return picked as Partial<CheckoutSessionDetails>;
}

function toView(record: CheckoutSessionRecord): CheckoutSessionView {
  const details = JSON.parse(record.details) as Partial<CheckoutSessionDetails>;
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    expiresAt: record.expires_at,
    cartItems: details.cartItems ?? null,
    metadata: details.metadata ?? null,
    buyer: details.buyer ?? null,
    airline: details.airline ?? null,
    amount: details.amount ?? null,
    currency: details.currency ?? null,
    paymentServiceId: details.paymentServiceId ?? null,
    card: record.card ? (JSON.parse(record.card) as CheckoutSessionCard) : null,
    usedByTransactionId: record.used_by_transaction_id,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
