import type Database from 'better-sqlite3';
import { deepFreeze } from '@switchyard/eventstore';

/** How many answers a `KeptAnswers` keeps unless told (one per merchant account and query, in practice). */
export const DEFAULT_KEPT_ANSWERS = 1_000;

/**
 * A read model's answers to one query, kept in memory until the read model may have changed, for queries that every
 * payment asks and few events change (a merchant account's payment services, flow rules, webhook subscriptions).
 *
 * An answer is read again once
 * - the read model's projection applied an event it handles: its `apply` calls `forget()`;
 * - another connection committed to the database file (another process: the CLI's `read-models rebuild`, a second
 *   replica on the same file): SQLite's `PRAGMA data_version`, asked on every `get`, changes then — it does not
 *   for this connection's own commits, which go through `apply`.
 *
 * Nothing read inside a transaction is kept: it may roll back. Answers are frozen (deeply), as every later caller
 * gets the same object.
 */
export class KeptAnswers<V> {
  private readonly answers = new Map<string, V>();
  private readonly dataVersion: Database.Statement<[], number>;
  private readonly limit: number;
  private seenVersion: number | undefined;

  constructor(
    private readonly db: Database.Database,
    options: { readonly limit?: number } = {},
  ) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.limit = Math.max(1, Math.trunc(options.limit ?? DEFAULT_KEPT_ANSWERS));
  }

  /** The answer kept for `key`, else `read()`'s, kept. */
  get(key: string, read: () => V): V {
    if (this.db.inTransaction) return read();
    const version = this.dataVersion.get();
    if (version !== this.seenVersion) {
      this.answers.clear();
      this.seenVersion = version;
    }
    if (this.answers.has(key)) return this.answers.get(key) as V;
    const answer = deepFreeze(read());
    if (this.answers.size >= this.limit) this.answers.delete(this.answers.keys().next().value as string);
    this.answers.set(key, answer);
    return answer;
  }

  /** The read model changed (its projection applied an event it handles): every answer is read again. */
  forget(): void {
    this.answers.clear();
  }
}
