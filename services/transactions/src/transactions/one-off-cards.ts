/**
 * A card given for one payment (`payment_method.method: card` without `store`) is kept in the vault only while its
 * create request may still need it — a 3-D Secure challenge pauses the request with the card waiting for the buyer's
 * return — and shredded (its row and its own data key: `CardVault.remove`) once the request has completed
 * (`CreateRequestCompleted`: answered, the buyer back, or the hold window over). Everything after that (captures,
 * refunds, voids, sync, reconciliation, gift card roll-backs) works from the provider's transaction id, and the
 * record shows only the card's id, scheme, BIN and last four, which the events hold.
 *
 * A projection, so the shredding commits with its checkpoint: a crash between the event and the shredding is
 * caught up on restart, and a data directory written before this (issue 22) has its completed one-off cards shredded
 * on first start — its `TransactionCreated` events are version 1, upcast to name their `vaultCard`. Cards of
 * checkout sessions belong to their session (its slice removes them); stored methods stay.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { ServiceSlice } from '@switchyard/service';
import type { CardVaultPort } from './instruments';
import type { TransactionCreatedData } from './transaction';

const TRANSACTION_PREFIX = 'transaction-';

/** The vault card a transaction was created with when it is kept for that payment only; null otherwise. */
export const oneOffCardOf = (data: TransactionCreatedData): string | null =>
  data.vaultCard?.use === 'one_off' ? data.vaultCard.id : null;

export class OneOffCardShredder implements ServiceSlice {
  readonly projection: Projection;

  constructor(db: Database.Database, vault: Pick<CardVaultPort, 'remove'>) {
    db.exec(`CREATE TABLE IF NOT EXISTS transaction_one_off_cards (
      transaction_id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, card_id TEXT NOT NULL)`);
    const remember = db.prepare(
      'INSERT OR IGNORE INTO transaction_one_off_cards (transaction_id, merchant_account_id, card_id) VALUES (?, ?, ?)',
    );
    const waiting = db.prepare<[string], { merchant_account_id: string; card_id: string }>(
      'SELECT merchant_account_id, card_id FROM transaction_one_off_cards WHERE transaction_id = ?',
    );
    const forget = db.prepare('DELETE FROM transaction_one_off_cards WHERE transaction_id = ?');
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
          const card = waiting.get(transactionId);
          if (!card) return;
          vault.remove(card.merchant_account_id, card.card_id);
          forget.run(transactionId);
        }
      },
    };
  }

  rpcHandlers() {
    return {};
  }
}
