/**
 * `GET /transactions` pages by key: every statement it runs seeks in `transactions_by_account` to the merchant
 * account and the cursor's key, so a page costs the same at the first page and at the thousandth (no scan from the
 * newest row down, no sort of all the rows).
 */
import Database from 'better-sqlite3';
import type { TransactionListFilters } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import { transactionListConditions, transactionListStatements } from './transaction-list-query';
import { transaction } from './transaction.decide';
import { createData } from './transaction.test-kit';
import { TransactionsReadModel } from './transactions.read-model';

let db: Database.Database;
beforeEach(() => {
  db = new Database(':memory:');
  new TransactionsReadModel(db);
});
afterEach(() => db.close());

const planOf = (sql: string, params: Readonly<Record<string, unknown>>): string =>
  db
    .prepare<Record<string, unknown>, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all({ ...params, key: '2026-01-01T00:00:00.000Z|t1', n: 20 })
    .map((row) => row.detail)
    .join(' / ');

const filterSets: readonly [string, TransactionListFilters][] = [
  ['no filter', {}],
  ['status', { status: ['capture_succeeded', 'refunded'] } as TransactionListFilters],
  ['amount and currency', { amount_gte: 100, amount_lte: 5000, currency: ['USD'] } as TransactionListFilters],
  ['created_at', { created_at_gte: '2026-01-01T00:00:00Z' } as TransactionListFilters],
  ['buyer', { buyer_id: 'b1' } as TransactionListFilters],
];

describe.each(filterSets)('the list statements with %s', (_name, filters) => {
  const conditions = transactionListConditions('shop-a', filters);
  const statements = transactionListStatements(conditions.sql);

  it('a page after a cursor (and the probe for a next page) seeks to the key, older first', () => {
    expect(planOf(statements.older, conditions.params)).toMatch(
      /USING INDEX transactions_by_account \(merchant_account_id=\? AND sort_key<\?\)/,
    );
  });

  it('a page before a cursor (and the probe for a previous page) seeks to the key, newer first', () => {
    expect(planOf(statements.newer, conditions.params)).toMatch(
      /USING INDEX transactions_by_account \(merchant_account_id=\? AND sort_key>\?\)/,
    );
  });

  it('no statement sorts the rows it found', () => {
    for (const sql of Object.values(statements)) expect(planOf(sql, conditions.params)).not.toMatch(/TEMP B-TREE/);
  });
});

describe('paging the read model by cursor', () => {
  const created = (id: string, merchantAccountId: string, now: string, revision = 0): RecordedEvent => {
    const [event] = transaction.decide(
      { type: 'CreateTransaction', data: { ...createData(), transactionId: id, merchantAccountId }, metadata: { now } },
      transaction.initialState(),
    );
    if (!event) throw new Error('no TransactionCreated');
    return {
      id: `e-${id}`,
      streamId: `transaction-${id}`,
      type: event.type,
      data: event.data,
      metadata: {},
      revision,
      position: id,
      recordedAt: now,
    };
  };

  it('walks every transaction of the account newest first with next_cursor, and back with previous_cursor', () => {
    const readModel = new TransactionsReadModel(db);
    // t3 and t4 share their creation time: the id breaks the tie.
    const times = ['10', '11', '12', '12', '13', '14', '15'].map((s) => `2026-01-01T00:00:${s}.000Z`);
    times.forEach((at, i) => readModel.projection.apply(created(`t${i + 1}`, 'shop-a', at), db));
    readModel.projection.apply(created('o1', 'shop-b', times[3]!), db);
    const expected = ['t7', 't6', 't5', 't4', 't3', 't2', 't1'];

    const forward: string[][] = [];
    let page = readModel.list('shop-a', {} as TransactionListFilters, { limit: 2 });
    expect(page.previous_cursor).toBeNull();
    forward.push(page.items.map((item) => item.state.id));
    while (page.next_cursor !== null) {
      page = readModel.list('shop-a', {} as TransactionListFilters, { limit: 2, cursor: page.next_cursor });
      forward.push(page.items.map((item) => item.state.id));
    }
    expect(forward).toEqual([['t7', 't6'], ['t5', 't4'], ['t3', 't2'], ['t1']]);

    const backward: string[][] = [];
    while (page.previous_cursor !== null) {
      page = readModel.list('shop-a', {} as TransactionListFilters, { limit: 2, cursor: page.previous_cursor });
      backward.unshift(page.items.map((item) => item.state.id));
    }
    expect(backward.flat()).toEqual(expected.slice(0, 6));
    expect(backward[0]).toEqual(['t7', 't6']);
  });
});
