/**
 * Stored payment methods per merchant account, projected from `payment-method-<uuid>` (deleted: the row goes) by
 * `projection`, with their usage counted from the transaction streams by `usageProjection`: every
 * `TransactionCreated` paying with a stored method (by id or by its network token) adds one use — a buyer-initiated
 * one when the merchant did not initiate it — and moves `last_used_at` forward. The transaction streams are the
 * transactions service's, not the vault's: usage is kept in its own table (`payment_method_usage`) and joined when
 * read, so the two projections may follow two logs in any order (a use projected before its method's row still
 * counts). The usage columns of `payment_methods` are those of files written before, no longer read.
 */
import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { PaymentMethodEvent, StoredPaymentMethod } from './payment-method';

export interface PaymentMethodView extends StoredPaymentMethod {
  readonly status: 'processing' | 'succeeded' | 'failed';
  readonly usageCount: number;
  readonly citUsageCount: number;
  readonly lastUsedAt: string | null;
  readonly citLastUsedAt: string | null;
  readonly hasReplacement: boolean;
  readonly lastReplacedAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface Row {
  id: string;
  merchant_account_id: string;
  status: PaymentMethodView['status'];
  body: string;
  buyer_id: string | null;
  external_identifier: string | null;
  usage_count: number;
  cit_usage_count: number;
  last_used_at: string | null;
  cit_last_used_at: string | null;
  has_replacement: number;
  last_replaced_at: string | null;
  created_at: string;
  updated_at: string;
  sort_key: string;
}

export interface PaymentMethodFilter {
  readonly buyerId?: string | undefined;
  readonly externalIdentifier?: string | undefined;
  readonly statuses?: readonly string[] | undefined;
}

/** What a transaction stream tells this read model: a purchase paid with a stored method. */
interface TransactionCreated {
  readonly type: 'TransactionCreated';
  readonly data: {
    readonly details?: {
      readonly paymentMethod?: { readonly id?: string | null };
      readonly instrumentType?: string;
      readonly merchantInitiated?: boolean;
    };
    readonly at?: string;
  };
}

const STORED_INSTRUMENTS = new Set(['card_token', 'network_token']);

/** The stored method a transaction stream's event says was used (`TransactionCreated` paying with one); else null. */
export function storedMethodUsedBy(recorded: RecordedEvent): string | null {
  if (recorded.type !== 'TransactionCreated') return null;
  const details = (recorded as unknown as TransactionCreated).data.details;
  const id = details?.paymentMethod?.id;
  return id && details.instrumentType && STORED_INSTRUMENTS.has(details.instrumentType) ? id : null;
}

export class PaymentMethodsReadModel {
  readonly projection: Projection;
  /** Follows the transactions service's store (the transaction streams). */
  readonly usageProjection: Projection;
  private readonly db: Database.Database;
  private readonly byId: Database.Statement<[string], Row>;

  constructor(db: Database.Database) {
    this.db = db;
    db.exec(`
      CREATE TABLE IF NOT EXISTS payment_methods (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL,
        buyer_id TEXT, external_identifier TEXT,
        has_replacement INTEGER NOT NULL DEFAULT 0, last_replaced_at TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, sort_key TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS payment_method_usage (
        id TEXT PRIMARY KEY, usage_count INTEGER NOT NULL, cit_usage_count INTEGER NOT NULL, last_used_at TEXT, cit_last_used_at TEXT);
      CREATE VIEW IF NOT EXISTS payment_methods_with_usage AS
        SELECT m.id, m.merchant_account_id, m.status, m.body, m.buyer_id, m.external_identifier,
          COALESCE(u.usage_count, 0) AS usage_count, COALESCE(u.cit_usage_count, 0) AS cit_usage_count,
          u.last_used_at AS last_used_at, u.cit_last_used_at AS cit_last_used_at,
          m.has_replacement, m.last_replaced_at, m.created_at, m.updated_at, m.sort_key
        FROM payment_methods m LEFT JOIN payment_method_usage u ON u.id = m.id;
      CREATE INDEX IF NOT EXISTS payment_methods_by_account ON payment_methods (merchant_account_id, sort_key);
      CREATE INDEX IF NOT EXISTS payment_methods_by_buyer ON payment_methods (merchant_account_id, buyer_id);
      CREATE INDEX IF NOT EXISTS payment_methods_processing ON payment_methods (status, created_at) WHERE status = 'processing';`);
    this.byId = db.prepare('SELECT * FROM payment_methods_with_usage WHERE id = ?');
    const insert = db.prepare<[Omit<Row, 'usage_count' | 'cit_usage_count' | 'last_used_at' | 'cit_last_used_at'>]>(
      `INSERT OR REPLACE INTO payment_methods (id, merchant_account_id, status, body, buyer_id, external_identifier,
         has_replacement, last_replaced_at, created_at, updated_at, sort_key)
       VALUES (@id, @merchant_account_id, @status, @body, @buyer_id, @external_identifier,
         @has_replacement, @last_replaced_at, @created_at, @updated_at, @sort_key)`,
    );
    const setStatus = db.prepare<[{ id: string; status: string; at: string }]>(
      'UPDATE payment_methods SET status = @status, updated_at = @at WHERE id = @id',
    );
    const remove = db.prepare<[string]>('DELETE FROM payment_methods WHERE id = ?');
    const later = (column: string) => `CASE WHEN ${column} IS NULL OR ${column} < @at THEN @at ELSE ${column} END`;
    const used = db.prepare<[{ id: string; at: string; cit: number }]>(
      `INSERT INTO payment_method_usage (id, usage_count, cit_usage_count, last_used_at, cit_last_used_at)
         VALUES (@id, 1, @cit, @at, CASE WHEN @cit = 1 THEN @at END)
       ON CONFLICT (id) DO UPDATE SET usage_count = usage_count + 1, last_used_at = ${later('last_used_at')},
         cit_usage_count = cit_usage_count + @cit, cit_last_used_at = CASE WHEN @cit = 1 THEN ${later('cit_last_used_at')} ELSE cit_last_used_at END`,
    );
    const updated = db.prepare<[{ id: string; body: string; replaced: number; at: string }]>(
      `UPDATE payment_methods SET body = @body, updated_at = @at,
         has_replacement = CASE WHEN @replaced = 1 THEN 1 ELSE has_replacement END,
         last_replaced_at = CASE WHEN @replaced = 1 THEN @at ELSE last_replaced_at END
       WHERE id = @id`,
    );
    const find = this.byId;

    this.projection = {
      name: 'payment-methods',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as PaymentMethodEvent;
        switch (event.type) {
          case 'PaymentMethodStored': {
            const { at, status, ...method } = event.data;
            insert.run({
              id: method.id,
              merchant_account_id: method.merchantAccountId,
              status,
              body: JSON.stringify(method),
              buyer_id: method.buyerId,
              external_identifier: method.externalIdentifier,
              has_replacement: 0,
              last_replaced_at: null,
              created_at: at,
              updated_at: at,
              sort_key: `${at}|${method.id}`,
            });
            return;
          }
          case 'PaymentMethodVaultTokenReceived':
            setStatus.run({ id: event.data.id, status: 'succeeded', at: event.data.at });
            return;
          case 'PaymentMethodVaultTokenTimedOut':
            setStatus.run({ id: event.data.id, status: 'failed', at: event.data.at });
            return;
          case 'PaymentMethodAccountUpdated': {
            const row = find.get(event.data.id);
            if (!row) return;
            const body = event.data.card
              ? { ...(JSON.parse(row.body) as StoredPaymentMethod), ...event.data.card }
              : JSON.parse(row.body);
            updated.run({
              id: event.data.id,
              body: JSON.stringify(body),
              replaced: event.data.outcome === 'updated_number' ? 1 : 0,
              at: event.data.at,
            });
            return;
          }
          case 'PaymentMethodDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
    this.usageProjection = {
      name: 'payment-method-usage',
      apply(recorded: RecordedEvent) {
        const id = storedMethodUsedBy(recorded);
        if (id === null) return;
        const { data } = recorded as unknown as TransactionCreated;
        used.run({ id, at: data.at ?? recorded.recordedAt, cit: data.details?.merchantInitiated ? 0 : 1 });
      },
    };
  }

  find(id: string): PaymentMethodView | null {
    const row = this.byId.get(id);
    return row ? toView(row) : null;
  }

  /** A merchant account's methods, newest first; keyset-paged. */
  page(merchantAccountId: string, filter: PaymentMethodFilter, query: PageQuery): Page<PaymentMethodView> {
    const statuses = filter.statuses?.length ? filter.statuses : null;
    const where = [
      'merchant_account_id = @account',
      filter.buyerId !== undefined ? 'buyer_id = @buyer' : null,
      filter.externalIdentifier !== undefined ? 'external_identifier = @external' : null,
      statuses ? `status IN (${statuses.map((_, i) => `@s${i}`).join(', ')})` : null,
    ]
      .filter(Boolean)
      .join(' AND ');
    const params = {
      account: merchantAccountId,
      ...(filter.buyerId !== undefined ? { buyer: filter.buyerId } : {}),
      ...(filter.externalIdentifier !== undefined ? { external: filter.externalIdentifier } : {}),
      ...Object.fromEntries((statuses ?? []).map((status, i) => [`s${i}`, status])),
    };
    const page = keysetPage<Row>(
      query,
      (row) => row.sort_key,
      (key, n) =>
        this.db
          .prepare<[object], Row>(
            `SELECT * FROM payment_methods_with_usage WHERE ${where} AND (@key IS NULL OR sort_key < @key) ORDER BY sort_key DESC LIMIT @n`,
          )
          .all({ ...params, key, n }),
      (key, n) =>
        this.db
          .prepare<[object], Row>(
            `SELECT * FROM payment_methods_with_usage WHERE ${where} AND sort_key > @key ORDER BY sort_key ASC LIMIT @n`,
          )
          .all({ ...params, key, n }),
    );
    return { ...page, items: page.items.map(toView) };
  }

  /** One buyer's usable methods by last use (never used: last), then newest first. */
  ofBuyer(merchantAccountId: string, buyerId: string, direction: 'asc' | 'desc'): PaymentMethodView[] {
    return this.db
      .prepare<[string, string], Row>(
        `SELECT * FROM payment_methods_with_usage WHERE merchant_account_id = ? AND buyer_id = ? AND status = 'succeeded'
         ORDER BY last_used_at IS NULL, last_used_at ${direction === 'asc' ? 'ASC' : 'DESC'}, sort_key DESC`,
      )
      .all(merchantAccountId, buyerId)
      .map(toView);
  }

  /** Every method of a buyer, whatever its status (buyer deletion). */
  idsOfBuyer(merchantAccountId: string, buyerId: string): string[] {
    return this.db
      .prepare<[string, string], { id: string }>(
        'SELECT id FROM payment_methods WHERE merchant_account_id = ? AND buyer_id = ?',
      )
      .all(merchantAccountId, buyerId)
      .map((row) => row.id);
  }

  /** Methods still waiting for their vault token since before `before`. */
  waitingSince(before: string, limit: number): PaymentMethodView[] {
    return this.db
      .prepare<[string, number], Row>(
        `SELECT * FROM payment_methods_with_usage WHERE status = 'processing' AND created_at < ? ORDER BY created_at LIMIT ?`,
      )
      .all(before, limit)
      .map(toView);
  }

  /** The method a purchase asked to store. */
  ofTransaction(transactionId: string): PaymentMethodView | null {
    const row = this.db
      .prepare<[string], Row>(
        `SELECT * FROM payment_methods_with_usage WHERE json_extract(body, '$.transactionId') = ?`,
      )
      .get(transactionId);
    return row ? toView(row) : null;
  }
}

function toView(row: Row): PaymentMethodView {
  return {
    ...(JSON.parse(row.body) as StoredPaymentMethod),
    status: row.status,
    usageCount: row.usage_count,
    citUsageCount: row.cit_usage_count,
    lastUsedAt: row.last_used_at,
    citLastUsedAt: row.cit_last_used_at,
    hasReplacement: row.has_replacement === 1,
    lastReplacedAt: row.last_replaced_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
