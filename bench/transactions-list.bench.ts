/**
 * `GET /transactions` in the read model, before and after issue 21's change, on the same rows in one process,
 * interleaved (A, B, A, B, …) so a busy machine skews both alike:
 *   node -r ./scripts/register.cjs bench/transactions-list.bench.ts [--db <transactions.db>] [--rows 20000] [--rounds 5]
 * `--db`: a copy of a data directory's transactions.db (e.g. kept from a bench run); without it, `--rows`
 * transactions are projected into a temporary file through the read model's own projection.
 * before: the statements of c1a02be^ — one `(@key IS NULL OR sort_key < @key)` statement for the first page and the
 * pages after a cursor, prepared on each request; after: `TransactionsReadModel.list` as it is.
 * Prints CPU ms per list call (process CPU, median of the rounds, and the spread) for pages at several depths.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { keysetPage, type PageQuery } from '@switchyard/api';
import type { TransactionListFilters } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import { transaction } from '../services/transactions/src/transactions/transaction.decide';
import { transactionListConditions } from '../services/transactions/src/transactions/transaction-list-query';
import { TransactionsReadModel } from '../services/transactions/src/transactions/transactions.read-model';

const option = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const rows = Number(option('rows') ?? 20_000);
const rounds = Number(option('rounds') ?? 5);
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-list-bench-'));
const file = path.join(dir, 'transactions.db');

function fill(db: Database.Database, readModel: TransactionsReadModel): void {
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  const project = db.transaction(() => {
    for (let i = 0; i < rows; i += 1) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const now = new Date(base + i * 10).toISOString();
      const [created] = transaction.decide(
        {
          type: 'CreateTransaction',
          data: {
            transactionId: id,
            merchantAccountId: 'default',
            paymentServiceId: 'ps1',
            intent: 'authorize',
            amount: 1000,
            currency: 'USD',
            isAmountEstimated: false,
            vaultCard: null,
          },
          metadata: { now },
        },
        transaction.initialState(),
      );
      if (!created) throw new Error('no TransactionCreated');
      const event: RecordedEvent = {
        id: `e-${id}`,
        streamId: `transaction-${id}`,
        type: created.type,
        data: created.data,
        metadata: {},
        revision: 0,
        position: String(i),
        recordedAt: now,
      };
      readModel.projection.apply(event, db);
    }
  });
  project();
}

/** The list of c1a02be^ (statements prepared per call, one statement for the first page and after a cursor). */
function listBefore(
  db: Database.Database,
  merchantAccountId: string,
  filters: TransactionListFilters,
  query: PageQuery,
) {
  const conditions = transactionListConditions(merchantAccountId, filters);
  type Row = { id: string; view: string; sort_key: string };
  const select = `SELECT id, view, sort_key FROM transactions WHERE ${conditions.sql}`;
  const older = db.prepare<Record<string, unknown>, Row>(
    `${select} AND (@key IS NULL OR sort_key < @key) ORDER BY sort_key DESC LIMIT @n`,
  );
  const newer = db.prepare<Record<string, unknown>, Row>(
    `${select} AND sort_key > @key ORDER BY sort_key ASC LIMIT @n`,
  );
  const page = keysetPage<Row>(
    query,
    (row) => row.sort_key,
    (key, n) => older.all({ ...conditions.params, key, n }),
    (key, n) => newer.all({ ...conditions.params, key, n }),
  );
  return { ...page, items: page.items.map((row) => JSON.parse(row.view) as unknown) };
}

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function main(): void {
  const source = option('db');
  if (source) copyFileSync(source, file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const readModel = new TransactionsReadModel(db);
  if (!source) fill(db, readModel);
  const merchant = (db
    .prepare('SELECT merchant_account_id AS m, count(*) AS c FROM transactions GROUP BY 1 ORDER BY 2 DESC')
    .get() as {
    m: string;
    c: number;
  }) ?? { m: 'default', c: 0 };
  const none = {} as TransactionListFilters;
  // Cursors of pages at several depths, from the answers themselves.
  const depths = [1, 10, 100, 500, Math.floor(merchant.c / 20) - 1].filter(
    (d, i, all) => d >= 1 && all.indexOf(d) === i,
  );
  const cursors = new Map<number, string | undefined>([[1, undefined]]);
  let page = readModel.list(merchant.m, none, { limit: 20 });
  for (let depth = 2; depth <= Math.max(...depths) && page.next_cursor; depth += 1) {
    cursors.set(depth, page.next_cursor);
    page = readModel.list(merchant.m, none, { limit: 20, cursor: page.next_cursor });
  }
  console.log(
    `${merchant.c} transactions of ${merchant.m}${source ? ` (${source})` : ' (projected)'}; ${rounds} rounds, A/B interleaved`,
  );
  const variants = {
    before: (cursor: string | undefined) => listBefore(db, merchant.m, none, { limit: 20, cursor }),
    after: (cursor: string | undefined) => readModel.list(merchant.m, none, { limit: 20, cursor }),
  };
  for (const depth of depths) {
    const cursor = cursors.get(depth);
    if (depth !== 1 && cursor === undefined) continue;
    const same = JSON.stringify(variants.before(cursor)) === JSON.stringify(variants.after(cursor));
    const samples: Record<string, number[]> = { before: [], after: [] };
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, run] of Object.entries(variants)) {
        const calls = 200;
        for (let i = 0; i < 20; i += 1) run(cursor);
        const t0 = cpuMs();
        for (let i = 0; i < calls; i += 1) run(cursor);
        samples[name]!.push((cpuMs() - t0) / calls);
      }
    }
    const line = (name: string) => {
      const values = samples[name]!;
      return `${name} ${median(values).toFixed(3)} ms (${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`;
    };
    console.log(`page ${depth}: ${line('before')}, ${line('after')}; same answer: ${same}`);
  }
  db.close();
}

try {
  main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
