/** The gift card vault over a real SQLite file: round trip, account scoping, erasure off the disk, tampering, sealed answers. */
import { giftCardLegacyKeysOf } from '@switchyard/vault';
import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { GiftCardVault } from './gift-card-vault';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let dbFile: string;
let db: Database.Database;
let key: Buffer;
let vault: GiftCardVault;

// Middle digits that appear in neither the BIN, the sub-BIN nor the last 4, so they can be searched for on disk.
const number = '6033998765432101234';
const pin = '0731946';
const id = '00000000-0000-4000-8000-000000000001';

beforeEach(() => {
  dir = createTestDataDir('gift-card-vault');
  dbFile = path.join(dir, 'transactions.db');
  db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  key = randomBytes(32);
  vault = new GiftCardVault(db, { key });
});
afterEach(() => {
  if (db.open) db.close();
  removeTestDataDir(dir);
});

const onDisk = () =>
  Buffer.concat(
    ['', '-wal', '-journal']
      .map((suffix) => `${dbFile}${suffix}`)
      .filter((file) => fs.existsSync(file))
      .map((file) => fs.readFileSync(file)),
  );

it('keeps number and PIN per card and merchant account, without a PIN too', () => {
  vault.store('shop-a', id, { number, pin });
  vault.store('shop-a', 'other', { number: '1234567812345678' });
  expect(vault.reveal('shop-a', id)).toEqual({ number, pin });
  expect(vault.reveal('shop-a', 'other')).toEqual({ number: '1234567812345678' });
  expect(vault.reveal('shop-b', id)).toBeNull();
  expect(vault.reveal('shop-a', 'missing')).toBeNull();
  expect(() => vault.store('shop-a', id, { number, pin })).toThrow(); // one row per card
});

it('never writes the number or PIN in clear, and erasing leaves no ciphertext in the file', () => {
  vault.store('shop-a', id, { number, pin });
  const row = db.prepare('SELECT secret_ciphertext FROM vault_gift_cards WHERE id = ?').get(id) as {
    secret_ciphertext: Buffer;
  };
  for (const secret of [number, number.slice(6, -4), pin])
    expect(onDisk().includes(Buffer.from(secret, 'latin1'))).toBe(false);

  expect(vault.erase('shop-b', id)).toBe(false); // another account's erase touches nothing
  expect(vault.reveal('shop-a', id)).toEqual({ number, pin });
  expect(vault.erase('shop-a', id)).toBe(true);
  expect(vault.reveal('shop-a', id)).toBeNull();
  expect(vault.erase('shop-a', id)).toBe(false);

  db.pragma('wal_checkpoint(TRUNCATE)');
  expect(fs.readFileSync(dbFile).includes(row.secret_ciphertext)).toBe(false);
});

it('refuses a ciphertext altered, moved to another row or account, or read under another key', () => {
  vault.store('shop-a', id, { number, pin });
  vault.store('shop-b', 'moved', { number: '1234567812345678', pin: '1' });
  db.prepare(
    `UPDATE vault_gift_cards SET (secret_ciphertext, secret_iv, secret_tag) = (SELECT secret_ciphertext, secret_iv, secret_tag FROM vault_gift_cards WHERE id = @from) WHERE id = @to`,
  ).run({ from: id, to: 'moved' });
  expect(() => vault.reveal('shop-b', 'moved')).toThrow(/failed decryption/);
  expect(() => new GiftCardVault(db, { key: randomBytes(32) }).reveal('shop-a', id)).toThrow(/failed decryption/);
  db.prepare('UPDATE vault_gift_cards SET secret_tag = zeroblob(16) WHERE id = ?').run(id);
  let message = '';
  try {
    vault.reveal('shop-a', id);
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toMatch(/failed decryption/);
  expect(message).not.toContain(number);
});

it('seals a number and PIN into a string that opens only in its context', () => {
  const context = ['shop-a', 'transactions.gift-cards.issue', 'key-1'];
  const sealed = vault.seal({ number, pin }, context);
  expect(sealed).not.toContain(number);
  expect(vault.open(sealed, context)).toEqual({ number, pin });
  expect(() => vault.open(sealed, ['shop-b', 'transactions.gift-cards.issue', 'key-1'])).toThrow(/failed decryption/);
  // One bit of the ciphertext flipped (not its last characters replaced: they may be those already, 1 run in ~4,000).
  const tampered = Buffer.from(sealed, 'base64url');
  tampered[tampered.length - 1]! ^= 1;
  expect(() => vault.open(tampered.toString('base64url'), context)).toThrow(/failed decryption/);
  expect(() => vault.open('short', context)).toThrow(/failed decryption/);
});

it('refuses malformed numbers without repeating them, and does not show its keys', () => {
  for (const bad of ['123456781234567', '12345678123456789012', '1234-5678-1234-5678']) {
    let thrown: unknown;
    try {
      vault.store('shop-a', `bad-${bad}`, { number: bad });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RangeError);
    expect((thrown as Error).message).not.toContain(bad);
  }
  expect(() => vault.store('shop-a', 'empty-pin', { number, pin: '' })).toThrow(RangeError);
  expect(db.prepare('SELECT count(*) AS n FROM vault_gift_cards').get()).toEqual({ n: 0 });
  expect(inspect(vault, { showHidden: true, depth: 5 })).not.toContain(key.toString('hex').slice(0, 16));
  expect(Object.keys(vault)).toEqual([]);
});

describe('rows of before the gift cards key (sealed under the transactions vault root)', () => {
  /** A vault file as the transactions service wrote it: no key_version column, the rows under its vault root. */
  const legacyFile = (legacyKey: Buffer) => {
    const legacy = new GiftCardVault(db, { key: legacyKey });
    legacy.store('shop-a', id, { number, pin });
    legacy.store('shop-b', 'other', { number: '1234567812345678' });
    db.exec('UPDATE vault_gift_cards SET key_version = NULL');
    return legacy.seal({ number, pin }, ['shop-a', 'transactions.gift-cards.issue', 'key-1']);
  };

  it('reads them with the legacy key, seals them again under the gift cards key, and then needs it no more', () => {
    const legacyKey = randomBytes(32);
    const sealedAnswer = legacyFile(legacyKey);
    const before = db.prepare('SELECT id, secret_ciphertext FROM vault_gift_cards ORDER BY id').all() as {
      id: string;
      secret_ciphertext: Buffer;
    }[];

    expect(() => new GiftCardVault(db, { key }).reveal('shop-a', id)).toThrow(/failed decryption/);
    const upgraded = new GiftCardVault(db, { key, legacyKeys: giftCardLegacyKeysOf(legacyKey) });
    expect(upgraded.reveal('shop-a', id)).toEqual({ number, pin });
    expect(upgraded.open(sealedAnswer, ['shop-a', 'transactions.gift-cards.issue', 'key-1'])).toEqual({ number, pin });

    expect(upgraded.rewrapLegacy(1)).toBe(2);
    expect(upgraded.rewrapLegacy()).toBe(0);
    const after = db.prepare('SELECT id, secret_ciphertext, key_version FROM vault_gift_cards ORDER BY id').all() as {
      id: string;
      secret_ciphertext: Buffer;
      key_version: string;
    }[];
    expect(after.map((row) => row.key_version)).toEqual(['gift-cards-key', 'gift-cards-key']);
    after.forEach((row, index) => expect(row.secret_ciphertext.equals(before[index]!.secret_ciphertext)).toBe(false));

    const withoutLegacy = new GiftCardVault(db, { key });
    expect(withoutLegacy.reveal('shop-a', id)).toEqual({ number, pin });
    expect(withoutLegacy.reveal('shop-b', 'other')).toEqual({ number: '1234567812345678' });
  });

  it('refuses to seal again what the legacy key does not open, and changes nothing', () => {
    legacyFile(randomBytes(32));
    const wrong = new GiftCardVault(db, { key, legacyKeys: giftCardLegacyKeysOf(randomBytes(32)) });
    expect(() => wrong.rewrapLegacy()).toThrow(/failed decryption under the legacy key/);
    expect(db.prepare('SELECT count(*) AS n FROM vault_gift_cards WHERE key_version IS NULL').get()).toEqual({ n: 2 });
  });
});
