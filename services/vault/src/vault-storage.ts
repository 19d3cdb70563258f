/**
 * The vault service's storage, `DATA_DIR/vault.db` (its events, read models, card rows, keys and checkpoints: SQLite
 * also when the transactions service keeps its events in EventStoreDB), and the move of what earlier releases kept of
 * the vault in the transactions service's storage.
 *
 * Until this service had a store, the vault's streams (`VAULT_STREAM_PREFIXES`: buyers, payment methods, network
 * tokens, account updater jobs, digital wallets, checkout sessions) were in the transactions store, and its tables in
 * the transactions service's file: the card rows (`vault_cards`), the vault's keys (`vault_data_keys`: the root and
 * every data key, wrapped) and the checkout sessions' sealed security codes (`checkout_session_secrets`). The first
 * start copies all of it into this service's file (`migrateStreams`: one transaction, recorded as
 * `vault-from-transactions`, so a crash leaves nothing half done and later starts copy nothing), then erases the moved
 * card ciphertexts, keys and codes from the old file (`eraseMovedSecrets`); the transactions service then reads its
 * store without those streams (`withoutStreams`, `VAULT_STREAM_PREFIXES`). The vault's read models are folded again
 * from the moved events here. No Idempotency-Key belongs to a vault operation (only transactions keeps them), so none
 * moves. In EventStoreDB mode the streams are read from the transactions service's EventStoreDB
 * (`transactionEvents`) and the tables from `transactions-read.db`.
 *
 * Before the copy the root key is settled in the old file as the code before the split would have settled it at its
 * start (`openVaultKeys`: a data directory from before envelope encryption keeps its configured key as the root), so
 * every key derived from the root — card fingerprints, Idempotency-Key fingerprints, buyer-return tokens — keeps its
 * value.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { VAULT_STREAM_PREFIXES } from '@switchyard/contracts';
import {
  migrateStreams,
  readStreamsWithPrefixes,
  streamMigrationDone,
  type EventStore,
  type StreamMigrationResult,
} from '@switchyard/eventstore';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { openVaultKeys, type KeyRing } from './vault/vault-keys';

export const VAULT_MIGRATION = 'vault-from-transactions';

/** The old file's tables whose rows move with the streams. */
const MOVED_TABLES = ['vault_cards', 'vault_data_keys', 'checkout_session_secrets'] as const;

export interface VaultStorage extends ServiceStorage {
  /** What the first start moved; `ran: false` on every later start. */
  readonly migration: StreamMigrationResult;
}

export async function openVaultStorage(options: {
  dataDir: string;
  /** The vault's key ring: the root is settled in the old file under it before the move. */
  keyRing: KeyRing;
  /** Set when the transactions service keeps its events in EventStoreDB: its store, where the old streams are. */
  transactionEvents?: EventStore;
}): Promise<VaultStorage> {
  const storage = openServiceStorage('vault', { dataDir: options.dataDir });
  try {
    const fromEventStoreDb = options.transactionEvents;
    const sourcePath = path.join(options.dataDir, fromEventStoreDb ? 'transactions-read.db' : 'transactions.db');
    const pending = !streamMigrationDone(storage.db, VAULT_MIGRATION);
    if (pending) settleRoot(sourcePath, options.keyRing);
    const sourceEvents =
      fromEventStoreDb && pending ? await readStreamsWithPrefixes(fromEventStoreDb, VAULT_STREAM_PREFIXES) : undefined;
    const migration = migrateStreams({
      name: VAULT_MIGRATION,
      sourcePath,
      ...(sourceEvents ? { sourceEvents } : {}),
      target: storage.db,
      streamPrefixes: VAULT_STREAM_PREFIXES,
      tables: [...MOVED_TABLES],
    });
    eraseMovedSecrets(sourcePath, storage.db);
    return { ...storage, migration };
  } catch (error) {
    await storage.close();
    throw error;
  }
}

/** Gives the old file its root key, if it holds vault data without one yet (what its own start did before the split). */
function settleRoot(file: string, ring: KeyRing): void {
  if (!existsSync(file)) return;
  const source = new Database(file);
  try {
    source.pragma('busy_timeout = 5000');
    const holdsVaultData = ['vault_cards', 'vault_data_keys', 'vault_gift_cards', 'idempotency_keys'].some(
      (table) =>
        source.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined,
    );
    if (holdsVaultData) openVaultKeys(source, ring);
  } finally {
    source.close();
  }
}

/**
 * Once they are here, the moved card ciphertexts, wrapped keys and sealed security codes leave the transactions
 * service's file (overwritten in place, then deleted, as the vault erases a card): it holds no card number any
 * more, not even sealed. Runs at every start, so a crash between the move and this step only delays it; rows not
 * (or no longer) here are left alone.
 */
function eraseMovedSecrets(file: string, target: Database.Database): void {
  if (!existsSync(file)) return;
  const hasTable = (db: Database.Database, table: string) =>
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined;
  const source = new Database(file);
  try {
    source.pragma('busy_timeout = 5000');
    const erasures = [
      {
        table: 'vault_cards',
        blobs: ['pan_ciphertext', 'pan_iv', 'pan_tag'],
        key: ['id', 'merchant_account_id'],
      },
      { table: 'vault_data_keys', blobs: ['wrapped'], key: ['id'] },
      { table: 'checkout_session_secrets', blobs: [] as string[], key: [] as string[] },
    ].filter(({ table }) => hasTable(source, table) && hasTable(target, table));
    if (erasures.length === 0) return;
    source
      .transaction(() => {
        for (const { table, blobs, key } of erasures) {
          if (key.length === 0) {
            // Sealed codes: every row of the old file moved with the streams, none is written there any more.
            source.prepare(`DELETE FROM ${table}`).run();
            continue;
          }
          const where = key.map((column) => `${column} = ?`).join(' AND ');
          const moved = target
            .prepare(`SELECT ${key.join(', ')} FROM ${table}`)
            .raw()
            .all() as unknown[][];
          const overwrite =
            blobs.length > 0
              ? source.prepare(
                  `UPDATE ${table} SET ${blobs.map((blob) => `${blob} = zeroblob(length(${blob}))`).join(', ')} WHERE ${where}`,
                )
              : null;
          const remove = source.prepare(`DELETE FROM ${table} WHERE ${where}`);
          for (const row of moved) {
            overwrite?.run(...row);
            remove.run(...row);
          }
        }
      })
      .immediate();
  } finally {
    source.close();
  }
}
