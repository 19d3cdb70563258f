/**
 * Envelope encryption for the vault. Card data is encrypted under DATA KEYS (32 random bytes each: one per buyer,
 * or one per card without a buyer); each data key is kept only WRAPPED (AES-256-GCM) under a KEY-ENCRYPTION KEY
 * (KEK) from configuration, with the KEK's id beside it, in `vault_data_keys`. So:
 *
 * - rotating the KEK re-wraps 32-byte data keys (`rewrap`), never re-encrypts card data;
 * - deleting a data key makes everything encrypted under it unrecoverable (crypto-shredding), while the event
 *   history, which never held card data, stays valid;
 * - a stolen database without the KEK reveals nothing.
 *
 * One more wrapped key, the ROOT, is what every vault-derived key comes from (the card fingerprint key, the buyer
 * return token key, the idempotency fingerprint key, the gift card vault key, sealing keys of other slices): it is
 * re-wrapped with the others, so rotating the KEK changes none of them and card fingerprints stay stable. An
 * installation that had data before envelope encryption keeps its first key as the root (its rows stay readable);
 * a fresh one gets a random root.
 *
 * Nothing here logs, and no error message carries a key.
 */
import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { decodeKey, loadOrCreateKey } from '@switchyard/service';
import { randomBytes } from './random-pool';
import { associatedData, vaultKeyBytes } from './vault-cipher';

/** A key-encryption key and its id (the first 16 hex digits of its SHA-256: names the key, reveals nothing of it). */
export interface KeyEncryptionKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The KEKs this process knows: the active one wraps every new data key; retired ones only unwrap (until `rewrap`). */
export interface KeyRing {
  readonly active: KeyEncryptionKey;
  readonly retired: readonly KeyEncryptionKey[];
}

export const kekId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

export function keyRing(active: Buffer, retired: readonly Buffer[] = []): KeyRing {
  if (active.length !== vaultKeyBytes || retired.some((key) => key.length !== vaultKeyBytes))
    throw new RangeError(`vault keys must be ${vaultKeyBytes} bytes`);
  const activeId = kekId(active);
  return {
    active: { id: activeId, key: active },
    retired: retired.filter((key) => kekId(key) !== activeId).map((key) => ({ id: kekId(key), key })),
  };
}

/** The retired keys file beside `vault.key`: one base64 key per line (`#` comments allowed). */
export const RETIRED_KEYS_FILE = 'vault.retired-keys';

/**
 * The key ring from configuration: `VAULT_KEY` (else `<dataDir>/vault.key`, created on first use) is active;
 * `VAULT_RETIRED_KEYS` (comma-separated) and the lines of `<dataDir>/vault.retired-keys` are retired.
 */
export function loadKeyRing(options: { configured?: string; retired?: string; dataDir?: string }): KeyRing {
  const active = loadOrCreateKey({
    ...(options.configured !== undefined ? { configured: options.configured } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    fileName: 'vault.key',
    settingName: 'VAULT_KEY',
  });
  const texts = (options.retired ?? '').split(',');
  if (options.dataDir !== undefined) {
    const file = path.join(options.dataDir, RETIRED_KEYS_FILE);
    if (fs.existsSync(file)) texts.push(...fs.readFileSync(file, 'utf8').split('\n'));
  }
  const retired = texts
    .map((text) => text.trim())
    .filter((text) => text !== '' && !text.startsWith('#'))
    .map((text, index) => {
      const key = decodeKey(text);
      if (!key)
        throw new Error(
          `retired vault key #${index + 1} (VAULT_RETIRED_KEYS or ${RETIRED_KEYS_FILE}) must be base64 or base64url of exactly 32 bytes`,
        );
      return key;
    });
  return keyRing(active, retired);
}

interface DataKeyRow {
  id: string;
  kek_id: string;
  wrapped: Buffer;
  purpose: string;
  owner: string | null;
  created_at: string;
}

const ROOT_ID = 'root';
const ivBytes = 12;
const tagBytes = 16;

export class VaultKeyMissingError extends Error {
  constructor(kekIdentifier: string) {
    super(
      `a vault data key is wrapped under key-encryption key ${kekIdentifier}, which is neither VAULT_KEY nor a retired key: configure it in VAULT_RETIRED_KEYS`,
    );
    this.name = 'VaultKeyMissingError';
  }
}

export interface RewrapResult {
  readonly rewrapped: number;
  readonly alreadyCurrent: number;
  readonly activeKeyId: string;
}

/** Unwrapped data keys kept in memory (about 100 bytes each); the others are unwrapped again when used. */
const DATA_KEY_CACHE_SIZE = 1_000;

/** Data keys by id, wrapped under the key ring's KEKs in the vault's SQLite. */
export class VaultKeys {
  readonly #ring: KeyRing;
  readonly #db: Database.Database;
  /** Unwrapped data keys, least recently used first; bounded, so a key per one-off card does not pile up. */
  readonly #cache = new Map<string, Buffer>();
  readonly #statements = new Map<string, Database.Statement>();
  readonly #now: () => Date;

  constructor(
    db: Database.Database,
    ring: KeyRing,
    options: { now?: () => Date; legacyRootWhen?: () => boolean } = {},
  ) {
    this.#db = db;
    this.#ring = ring;
    this.#now = options.now ?? (() => new Date());
    db.exec(`
      CREATE TABLE IF NOT EXISTS vault_data_keys (
        id TEXT PRIMARY KEY, kek_id TEXT NOT NULL, wrapped BLOB NOT NULL, purpose TEXT NOT NULL, owner TEXT,
        created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS vault_data_keys_owner ON vault_data_keys (owner) WHERE owner IS NOT NULL;
    `);
    if (!this.#row(ROOT_ID)) {
      // Data written before envelope encryption was keyed from the configured key itself: keep it as the root.
      const root = options.legacyRootWhen?.() ? Buffer.from(ring.active.key) : randomBytes(vaultKeyBytes);
      db.prepare(
        'INSERT OR IGNORE INTO vault_data_keys (id, kek_id, wrapped, purpose, owner, created_at) VALUES (?, ?, ?, ?, NULL, ?)',
      ).run(ROOT_ID, ring.active.id, this.#wrap(ROOT_ID, 'root', root, ring.active), 'root', this.#now().toISOString());
    }
  }

  #remember(id: string, key: Buffer): void {
    this.#cache.delete(id);
    this.#cache.set(id, key);
    if (this.#cache.size > DATA_KEY_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
  }

  /** A statement of the hot paths, prepared once. */
  #sql<Params extends unknown[] = unknown[], Row = unknown>(sql: string): Database.Statement<Params, Row> {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<Params, Row>;
  }

  /** The root every vault-derived key comes from. */
  root(): Buffer {
    const root = this.get(ROOT_ID);
    if (!root) throw new Error('the vault root key is missing from vault_data_keys');
    return root;
  }

  /** A new data key for `purpose`; `owner` (e.g. `buyer:<account>:<id>`) makes it findable and one per owner. */
  create(purpose: string, owner: string | null = null): { id: string; key: Buffer } {
    const id = randomUUID();
    const key = randomBytes(vaultKeyBytes);
    this.#sql(
      'INSERT INTO vault_data_keys (id, kek_id, wrapped, purpose, owner, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      id,
      this.#ring.active.id,
      this.#wrap(id, purpose, key, this.#ring.active),
      purpose,
      owner,
      this.#now().toISOString(),
    );
    this.#remember(id, key);
    return { id, key };
  }

  /** The owner's data key, created on first use (call inside the caller's SQLite transaction). */
  forOwner(purpose: string, owner: string): { id: string; key: Buffer } {
    const row = this.#sql<[string], DataKeyRow>('SELECT * FROM vault_data_keys WHERE owner = ?').get(owner);
    if (row) return { id: row.id, key: this.#unwrapRow(row) };
    return this.create(purpose, owner);
  }

  /** The data key; null once shredded. */
  get(id: string): Buffer | null {
    const cached = this.#cache.get(id);
    if (cached) {
      this.#remember(id, cached);
      return cached;
    }
    const row = this.#row(id);
    return row ? this.#unwrapRow(row) : null;
  }

  /** Crypto-shredding: the key is gone, and with it everything encrypted under it. */
  shred(id: string): void {
    if (id === ROOT_ID) throw new Error('the vault root key cannot be shredded');
    this.#sql('DELETE FROM vault_data_keys WHERE id = ?').run(id);
    this.#cache.delete(id);
  }

  shredOwner(owner: string): boolean {
    const row = this.#sql<[string], { id: string }>('SELECT id FROM vault_data_keys WHERE owner = ?').get(owner);
    if (!row) return false;
    this.shred(row.id);
    return true;
  }

  /** How many data keys each KEK wraps (what `vault status` prints). */
  countsByKek(): Record<string, number> {
    const rows = this.#db
      .prepare<[], { kek_id: string; n: number }>('SELECT kek_id, COUNT(*) AS n FROM vault_data_keys GROUP BY kek_id')
      .all();
    return Object.fromEntries(rows.map((row) => [row.kek_id, row.n]));
  }

  /**
   * Re-wraps every data key not under the active KEK (in batches, each its own transaction: safe to interrupt and
   * run again, and safe while the service runs — a data key's bytes never change, only their wrapping).
   */
  rewrap(batchSize = 500): RewrapResult {
    const active = this.#ring.active;
    const select = this.#db.prepare<[string, number], DataKeyRow>(
      'SELECT * FROM vault_data_keys WHERE kek_id <> ? LIMIT ?',
    );
    const update = this.#db.prepare('UPDATE vault_data_keys SET kek_id = ?, wrapped = ? WHERE id = ? AND kek_id = ?');
    let rewrapped = 0;
    for (;;) {
      const rows = select.all(active.id, batchSize);
      if (rows.length === 0) break;
      this.#db.transaction(() => {
        for (const row of rows) {
          const key = this.#unwrapRow(row);
          rewrapped += update.run(active.id, this.#wrap(row.id, row.purpose, key, active), row.id, row.kek_id).changes;
        }
      })();
    }
    const total = this.#db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM vault_data_keys').get()?.n ?? 0;
    return { rewrapped, alreadyCurrent: total - rewrapped, activeKeyId: active.id };
  }

  #row(id: string): DataKeyRow | undefined {
    return this.#sql<[string], DataKeyRow>('SELECT * FROM vault_data_keys WHERE id = ?').get(id);
  }

  #unwrapRow(row: DataKeyRow): Buffer {
    const kek =
      row.kek_id === this.#ring.active.id ? this.#ring.active : this.#ring.retired.find((k) => k.id === row.kek_id);
    if (!kek) throw new VaultKeyMissingError(row.kek_id);
    const bytes = row.wrapped;
    const decipher = createDecipheriv('aes-256-gcm', secretKeyOf(kek.key), bytes.subarray(0, ivBytes), {
      authTagLength: tagBytes,
    });
    decipher.setAAD(wrapAad(row.id, row.purpose));
    decipher.setAuthTag(bytes.subarray(ivBytes, ivBytes + tagBytes));
    let key: Buffer;
    try {
      key = Buffer.concat([decipher.update(bytes.subarray(ivBytes + tagBytes)), decipher.final()]);
    } catch (error) {
      throw new Error(
        `vault data key ${row.id} failed to unwrap under key-encryption key ${row.kek_id}: tampered with, or a different key under that id`,
        { cause: error },
      );
    }
    this.#remember(row.id, key);
    return key;
  }

  #wrap(id: string, purpose: string, key: Buffer, kek: KeyEncryptionKey): Buffer {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', secretKeyOf(kek.key), iv, { authTagLength: tagBytes });
    cipher.setAAD(wrapAad(id, purpose));
    const wrapped = Buffer.concat([cipher.update(key), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), wrapped]);
  }
}

/**
 * A key-encryption key's KeyObject, made once per key: given bytes, node:crypto makes one on every cipher (its
 * share of a card hand-over's CPU was about as much as the AES itself). Held weakly by the key's bytes.
 */
const secretKeys = new WeakMap<Buffer, KeyObject>();
function secretKeyOf(key: Buffer): KeyObject {
  let secret = secretKeys.get(key);
  if (!secret) {
    secret = createSecretKey(key);
    secretKeys.set(key, secret);
  }
  return secret;
}

/** A wrapped key is bound to its id and purpose: moved to another row it no longer unwraps. */
const wrapAad = (id: string, purpose: string): Buffer => associatedData('vault_data_keys/v1', id, purpose);

/**
 * The vault's data keys over the service's database. An installation that stored cards or gift cards (or kept
 * idempotent answers sealed) before envelope encryption keeps its key as the vault root, so what it encrypted and
 * fingerprinted stays readable and stable; a fresh one gets a random root. The server and the CLI both open it here.
 */
export function openVaultKeys(db: Database.Database, ring: KeyRing, now?: () => Date): VaultKeys {
  const hasRows = (table: string): boolean =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined &&
    db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() !== undefined;
  return new VaultKeys(db, ring, {
    ...(now ? { now } : {}),
    legacyRootWhen: () => hasRows('vault_cards') || hasRows('vault_gift_cards') || hasRows('idempotency_keys'),
  });
}
