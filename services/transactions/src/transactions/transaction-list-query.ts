/**
 * The SQL of `GET /transactions` over the transactions read model: the filters as a WHERE clause with named
 * parameters, and the keyset statements over `transactions_by_account (merchant_account_id, sort_key)`, newest first.
 * Values are always bound, never written into the SQL.
 */
import type { TransactionListFilters } from '@switchyard/contracts';

export interface TransactionListConditions {
  /** `merchant_account_id = @merchantAccountId AND …`: column names and parameter names only. */
  readonly sql: string;
  readonly params: Readonly<Record<string, unknown>>;
}

export function transactionListConditions(
  merchantAccountId: string,
  filters: TransactionListFilters,
): TransactionListConditions {
  const where = ['merchant_account_id = @merchantAccountId'];
  const params: Record<string, unknown> = { merchantAccountId };
  const inList = (column: string, values: readonly unknown[] | undefined) => {
    if (!values || values.length === 0) return;
    const names = values.map((value, i) => {
      params[`${column}${i}`] = value;
      return `@${column}${i}`;
    });
    where.push(`${column} IN (${names.join(', ')})`);
  };
  const compare = (column: string, operator: string, name: string, value: unknown) => {
    if (value === undefined) return;
    params[name] = value;
    where.push(`${column} ${operator} @${name}`);
  };
  inList('status', filters.status);
  inList('currency', filters.currency);
  inList('payment_service_id', filters.payment_service_id);
  compare('buyer_id', '=', 'buyerId', filters.buyer_id);
  compare('buyer_external_identifier', '=', 'buyerExternal', filters.buyer_external_identifier);
  compare('external_identifier', '=', 'externalIdentifier', filters.external_identifier);
  compare('id', '=', 'id', filters.id);
  compare('amount', '=', 'amountEq', filters.amount_eq);
  compare('amount', '>=', 'amountGte', filters.amount_gte);
  compare('amount', '<=', 'amountLte', filters.amount_lte);
  // Timestamps are all `toISOString()` (UTC, ms): normalizing the bounds keeps text comparison exact.
  compare('created_at', '>=', 'createdGte', filters.created_at_gte && new Date(filters.created_at_gte).toISOString());
  compare('created_at', '<=', 'createdLte', filters.created_at_lte && new Date(filters.created_at_lte).toISOString());
  compare('updated_at', '>=', 'updatedGte', filters.updated_at_gte && new Date(filters.updated_at_gte).toISOString());
  compare('updated_at', '<=', 'updatedLte', filters.updated_at_lte && new Date(filters.updated_at_lte).toISOString());
  return { sql: where.join(' AND '), params };
}

/**
 * The keyset statements of one clause (parameters `@key`, `@n` besides the clause's), newest first. The first page
 * has its own statement: one `(@key IS NULL OR sort_key < @key)` for both stops SQLite from seeking to the key, and
 * every later page, and the "is there a next page" probe of every page, walked the index from the newest row down.
 */
export function transactionListStatements(conditions: string): {
  readonly newest: string;
  readonly older: string;
  readonly newer: string;
} {
  const select = `SELECT id, view, sort_key FROM transactions WHERE ${conditions}`;
  return {
    newest: `${select} ORDER BY sort_key DESC LIMIT @n`,
    // "After" a key means an older one.
    older: `${select} AND sort_key < @key ORDER BY sort_key DESC LIMIT @n`,
    newer: `${select} AND sort_key > @key ORDER BY sort_key ASC LIMIT @n`,
  };
}
