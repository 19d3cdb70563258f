/**
 * A card given for one payment (`payment_method.method: card` without `store`) is kept in the vault only while its
 * create request may still need it — a 3-D Secure challenge pauses the request with the card waiting for the buyer's
 * return — and shredded (its row and its own data key: `CardVault.remove`) once the request has completed
 * (`CreateRequestCompleted`: answered, the buyer back, or the hold window over). Everything after that (captures,
 * refunds, voids, sync, reconciliation, gift card roll-backs) works from the provider's transaction id, and the
 * record shows only the card's id, scheme, BIN and last four, which the events hold.
 *
 * The vault answers asynchronously (`VaultPort`), and a projection applies inside a SQLite transaction, so the
 * shredding is an outbox: the projection remembers the card at `TransactionCreated` and marks it due at
 * `CreateRequestCompleted`, both committed with its checkpoint; `shredDue` then asks the vault to remove every due
 * card and forgets it once the vault has. It runs a moment after a batch marked one (`DEFAULT_SHRED_AFTER_MS`: the
 * cards due by then go in one call and one commit of the vault's), at every start (a crash between the mark and the
 * removal), on the background round (a removal that failed) and in `catchUp`. A data directory written
 * before this (issue 22) has its completed one-off cards shredded on first start — its `TransactionCreated` events
 * are version 1, upcast to name their `vaultCard`. Cards of checkout sessions belong to their session (its slice
 * removes them); stored methods stay.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { ServiceSlice } from '@switchyard/service';
import type { VaultPort } from '../vault-port';
import type { TransactionCreatedData } from './transaction';

const TRANSACTION_PREFIX = 'transaction-';
/**
 * How long after a create request completes its card is shredded (at most): the cards of the payments completed
 * meanwhile go in the same call and commit of the vault's. Measured in the distributed runtime at 1 client: one
 * removal right after each payment put its fsync in front of the next payment's card hand-over.
 */
export const DEFAULT_SHRED_AFTER_MS = 250;
/** The most cards one call asks the vault to remove. */
const SHRED_BATCH = 500;

/** The vault card a transaction was created with when it is kept for that payment only; null otherwise. */
export const oneOffCardOf = (data: TransactionCreatedData): string | null =>
  data.vaultCard?.use === 'one_off' ? data.vaultCard.id : null;

interface DueCard {
  transaction_id: string;
  merchant_account_id: string;
  card_id: string;
}

export class OneOffCardShredder implements ServiceSlice {
  readonly projection: Projection;
  private readonly due: Database.Statement<[], DueCard>;
  private readonly forgetAll: (cards: readonly DueCard[]) => void;
  /** The run a completion asked for, a moment later (`shredAfterMs`), so that the cards of a busy spell go together. */
  private soon: NodeJS.Timeout | null = null;
  /** The run waiting to start, shared by every call made meanwhile. */
  private queued: Promise<number> | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    db: Database.Database,
    private readonly vault: Pick<VaultPort, 'removeCards'>,
    private readonly onError: (error: unknown) => void,
    private readonly shredAfterMs = DEFAULT_SHRED_AFTER_MS,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS transaction_one_off_cards (
      transaction_id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, card_id TEXT NOT NULL)`);
    const columns = db.prepare('PRAGMA table_info(transaction_one_off_cards)').all() as { name: string }[];
    // Before the vault port was async the projection removed the card itself: every row left then is still waiting.
    if (!columns.some((column) => column.name === 'due'))
      db.exec('ALTER TABLE transaction_one_off_cards ADD COLUMN due INTEGER NOT NULL DEFAULT 0');
    const remember = db.prepare(
      'INSERT OR IGNORE INTO transaction_one_off_cards (transaction_id, merchant_account_id, card_id) VALUES (?, ?, ?)',
    );
    const markDue = db.prepare<[string]>('UPDATE transaction_one_off_cards SET due = 1 WHERE transaction_id = ?');
    this.due = db.prepare(
      `SELECT transaction_id, merchant_account_id, card_id FROM transaction_one_off_cards WHERE due = 1 LIMIT ${SHRED_BATCH}`,
    );
    const forget = db.prepare<[string]>('DELETE FROM transaction_one_off_cards WHERE transaction_id = ?');
    this.forgetAll = db.transaction((cards: readonly DueCard[]) => {
      for (const card of cards) forget.run(card.transaction_id);
    });
    this.projection = {
      name: 'transaction-one-off-cards',
      apply: (event: RecordedEvent) => {
        if (!event.streamId.startsWith(TRANSACTION_PREFIX)) return;
        const transactionId = event.streamId.slice(TRANSACTION_PREFIX.length);
        if (event.type === 'TransactionCreated') {
          const data = event.data as TransactionCreatedData;
          const cardId = oneOffCardOf(data);
          if (cardId) remember.run(transactionId, data.merchantAccountId, cardId);
        } else if (event.type === 'CreateRequestCompleted') {
          // Shredded once this batch has committed (the mark with it): the vault is asked outside the transaction.
          if (markDue.run(transactionId).changes > 0) this.shredSoon();
        }
      },
    };
  }

  /** Asks the vault to remove every due card, one run at a time; resolves with how many it removed. */
  shredDue(): Promise<number> {
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = null;
      return this.shredNow();
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** A run `shredAfterMs` from now, unless one is already coming. */
  private shredSoon(): void {
    if (this.soon || this.stopped) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      this.shredDue().catch(this.onError);
    }, this.shredAfterMs);
    this.soon.unref();
  }

  /** Waits for a run under way; none starts afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    await this.tail;
  }

  private async shredNow(): Promise<number> {
    let removed = 0;
    for (;;) {
      if (this.stopped) return removed;
      const due = this.due.all();
      if (due.length === 0) return removed;
      await this.vault.removeCards(
        due.map((card) => ({ merchantAccountId: card.merchant_account_id, id: card.card_id })),
      );
      if (this.stopped) return removed;
      this.forgetAll(due);
      removed += due.length;
    }
  }

  rpcHandlers() {
    return {};
  }
}
