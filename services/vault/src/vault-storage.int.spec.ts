/**
 * A data directory written before the vault had a store of its own: its slices on the transactions service's store
 * and file (the composition of that release: the same slices, the same key ring, transactions.db). The first start
 * moves streams, card rows and keys into vault.db, erases them from the old file, keeps every key derived from the
 * root, and later starts move nothing.
 */
import { giftCardLegacyKeysOf } from './vault/vault-cipher';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { SqliteEventStore } from '@switchyard/eventstore';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import Database from 'better-sqlite3';
import { VaultService } from './vault-service';
import { openVaultStorage, VAULT_MIGRATION } from './vault-storage';
import { keyRing } from './vault/vault-keys';

const ring = keyRing(randomBytes(32));
const account = 'shop-a';
const number = '4111111111111111';

let dataDir: string;
beforeEach(() => {
  dataDir = createTestDataDir('vault-storage');
});
afterEach(() => removeTestDataDir(dataDir));

const count = (file: string, table: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

it('moves buyers, stored methods, card rows and keys into vault.db, erases them from transactions.db, keeps the keys', async () => {
  // The earlier release: the vault's slices on transactions.db.
  const old = new SqliteEventStore(path.join(dataDir, 'transactions.db'));
  const before = new VaultService({ store: old, db: old.database, keyRing: ring });
  const buyer = await before.slices.buyers.create({
    merchant_account_id: account,
    body: { display_name: 'Ada' },
  } as never);
  const method = await before.slices.paymentMethods.create({
    merchant_account_id: account,
    body: { method: 'card', number, expiration_date: '12/30', buyer_id: buyer.id },
  } as never);
  const oneOff = before.slices.vault.store(account, { number: '5555555555554444', expirationDate: '01/31' });
  const keysBefore = before.keysForTransactions();
  await before.stop();
  await old.close();

  const storage = await openVaultStorage({ dataDir, keyRing: ring });
  const after = new VaultService({ store: storage.store, db: storage.db, keyRing: ring });
  try {
    expect(storage.migration).toMatchObject({ ran: true, alreadyPresent: 0 });
    expect(storage.migration.copied).toBe(2); // BuyerCreated, PaymentMethodStored
    expect(storage.migration.rows).toMatchObject({ vault_cards: 2, vault_data_keys: 3 }); // root, buyer's, one-off's
    // The old file keeps no card row or key.
    const file = path.join(dataDir, 'transactions.db');
    expect([count(file, 'vault_cards'), count(file, 'vault_data_keys')]).toEqual([0, 0]);

    await after.start();
    expect(after.keysForTransactions()).toEqual(keysBefore);
    expect(after.slices.buyers.get({ merchant_account_id: account, buyer_id: buyer.id })).toEqual(buyer);
    expect(after.slices.paymentMethods.get({ merchant_account_id: account, payment_method_id: method.id })).toEqual(
      method,
    );
    expect(after.slices.vault.reveal(account, method.id)?.number).toBe(number);
    expect(after.slices.vault.reveal(account, oneOff.id)?.number).toBe('5555555555554444');
  } finally {
    await after.stop();
    await storage.close();
  }

  // Later starts move nothing, even of a vault stream written to transactions.db since.
  const stray = new SqliteEventStore(path.join(dataDir, 'transactions.db'));
  await stray.append('buyer-stray', [{ type: 'BuyerCreated', data: {} }], { expectedRevision: 'no_stream' });
  await stray.close();
  const again = await openVaultStorage({ dataDir, keyRing: ring });
  try {
    expect(again.migration).toEqual({ ran: false, copied: 0, alreadyPresent: 0 });
    expect(again.db.prepare('SELECT name FROM event_store_stream_migrations').all()).toEqual([
      { name: VAULT_MIGRATION },
    ]);
    expect(again.db.prepare(`SELECT count(*) AS n FROM events WHERE stream_id = 'buyer-stray'`).get()).toEqual({
      n: 0,
    });
  } finally {
    await again.close();
  }
});

it('keeps the configured key as the root of a data directory from before envelope encryption', async () => {
  // That release had no vault_data_keys: its Idempotency-Key fingerprints were keyed from the configured key itself.
  const old = new Database(path.join(dataDir, 'transactions.db'));
  old.exec(`CREATE TABLE idempotency_keys (merchant_account_id TEXT, operation TEXT, key TEXT);
    INSERT INTO idempotency_keys VALUES ('${account}', 'transactions.create', 'k-1');`);
  old.close();

  const storage = await openVaultStorage({ dataDir, keyRing: ring });
  const vault = new VaultService({ store: storage.store, db: storage.db, keyRing: ring });
  try {
    expect(vault.keysForTransactions().giftCardLegacyKeys).toEqual(giftCardLegacyKeysOf(ring.active.key));
    // Keys derived for one purpose each: the root itself is handed to no one.
    const handedOver = vault.keysForTransactions();
    expect([
      handedOver.fingerprintKey,
      handedOver.returnTokenKey,
      handedOver.giftCardLegacyKeys.secret,
      handedOver.giftCardLegacyKeys.responses,
    ]).not.toContainEqual(ring.active.key);
  } finally {
    await vault.stop();
    await storage.close();
  }
});
