/**
 * The gift cards service's storage, `DATA_DIR/gift-cards.db` (its events, read models, vault rows and checkpoints:
 * SQLite also when the transactions service keeps its events in EventStoreDB, until it gets an EventStoreDB of its
 * own), and the move of what earlier releases kept of gift cards in the transactions service's storage.
 *
 * Until this service existed, stored gift cards were streams (`gift-card-<uuid>`) of the transactions store, their
 * number/PIN ciphertexts rows of its `vault_gift_cards` table, and the Idempotency-Keys of issue and activate rows of
 * its `idempotency_keys`. The first start copies all three into this service's file, then erases the moved
 * ciphertexts from the old file (`eraseMovedCiphertexts`) (`migrateStreams`: one
 * transaction, recorded as `gift-cards-from-transactions`, so a crash leaves nothing half done and later starts copy
 * nothing); the transactions service then reads its store without those streams (`withoutStreams`,
 * `GIFT_CARD_STREAM_PREFIXES`). In EventStoreDB mode the streams are read from the transactions service's EventStoreDB
 * (`transactionEvents`) and the tables from `transactions-read.db`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { GIFT_CARD_STREAM_PREFIXES } from '@switchyard/contracts';
import {
  migrateStreams,
  readStreamsWithPrefixes,
  streamMigrationDone,
  type EventStore,
  type StreamMigrationResult,
} from '@switchyard/eventstore';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { idempotencyOperations } from './gift-cards/gift-cards.slice';

export const GIFT_CARDS_MIGRATION = 'gift-cards-from-transactions';

export interface GiftCardsStorage extends ServiceStorage {
  /** What the first start moved; `ran: false` on every later start. */
  readonly migration: StreamMigrationResult;
}

export async function openGiftCardsStorage(options: {
  dataDir: string;
  /** Set when the transactions service keeps its events in EventStoreDB: its store, where the old streams are. */
  transactionEvents?: EventStore;
}): Promise<GiftCardsStorage> {
  const storage = openServiceStorage('gift-cards', { dataDir: options.dataDir });
  try {
    const fromEventStoreDb = options.transactionEvents;
    const sourceEvents =
      fromEventStoreDb && !streamMigrationDone(storage.db, GIFT_CARDS_MIGRATION)
        ? await readStreamsWithPrefixes(fromEventStoreDb, GIFT_CARD_STREAM_PREFIXES)
        : undefined;
    const migration = migrateStreams({
      name: GIFT_CARDS_MIGRATION,
      sourcePath: path.join(options.dataDir, fromEventStoreDb ? 'transactions-read.db' : 'transactions.db'),
      ...(sourceEvents ? { sourceEvents } : {}),
      target: storage.db,
      streamPrefixes: GIFT_CARD_STREAM_PREFIXES,
      // The stored cards' ciphertexts, and the Idempotency-Keys of issue and activate (an issued card's answer sealed).
      tables: [
        'vault_gift_cards',
        {
          name: 'idempotency_keys',
          where: `operation IN ('${idempotencyOperations.issue}', '${idempotencyOperations.activate}')`,
        },
      ],
    });
    eraseMovedCiphertexts(
      path.join(options.dataDir, fromEventStoreDb ? 'transactions-read.db' : 'transactions.db'),
      storage.db,
    );
    return { ...storage, migration };
  } catch (error) {
    await storage.close();
    throw error;
  }
}

/**
 * Once they are here, the moved cards' ciphertexts leave the transactions service's file (overwritten in place, then
 * deleted, as the vault erases a card): it holds no gift card number or PIN any more, not even sealed. Runs at every
 * start, so a crash between the move and this step only delays it; rows not (or no longer) here are left alone.
 */
function eraseMovedCiphertexts(file: string, target: Database.Database): void {
  const hasTable = (db: Database.Database) =>
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vault_gift_cards'`).get() !== undefined;
  if (!existsSync(file) || !hasTable(target)) return;
  const moved = target.prepare(`SELECT id, merchant_account_id FROM vault_gift_cards`).all() as {
    id: string;
    merchant_account_id: string;
  }[];
  if (moved.length === 0) return;
  const source = new Database(file);
  try {
    source.pragma('busy_timeout = 5000');
    if (!hasTable(source)) return;
    const overwrite = source.prepare<[string, string]>(
      `UPDATE vault_gift_cards SET secret_ciphertext = zeroblob(length(secret_ciphertext)), secret_iv = zeroblob(length(secret_iv)),
         secret_tag = zeroblob(length(secret_tag)) WHERE id = ? AND merchant_account_id = ?`,
    );
    const remove = source.prepare<[string, string]>(
      `DELETE FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ?`,
    );
    source
      .transaction(() => {
        for (const row of moved) {
          overwrite.run(row.id, row.merchant_account_id);
          remove.run(row.id, row.merchant_account_id);
        }
      })
      .immediate();
  } finally {
    source.close();
  }
}
