/**
 * The card vault: full card numbers (PAN) kept only as AES-256-GCM ciphertext in `vault_cards`, next to what may be
 * shown (BIN, last 4, expiry, scheme) and a keyed fingerprint for "same card" lookups. Security codes are never
 * stored (one waiting for a checkout session is sealed with `sealWithCard` by its owner, and dies with the card).
 * Nothing here logs, and no error message carries a card number or key.
 *
 * Envelope encryption (`vault-keys.ts`): each card is encrypted under a data key — its buyer's (one per buyer, so
 * deleting the buyer shreds all their cards at once) or its own — and data keys are kept only wrapped under the
 * configured key-encryption key. Rows written before envelope encryption (`data_key_id` null) are encrypted under a
 * key derived from the vault root, which for such installations is their original vault key: they stay readable,
 * and `migrateLegacyRows` (the CLI's `vault rewrap`) moves them to data keys of their own.
 *
 * The fingerprint key is derived from the vault root, so it survives a rotation of the key-encryption key.
 */
import { createHmac, randomUUID, type KeyObject } from 'node:crypto';
import type Database from 'better-sqlite3';
import { passesLuhn } from '@switchyard/contracts';
import { loadOrCreateKey } from '@switchyard/service';
import { withDeferredSync } from '@switchyard/readmodel';
import { detectScheme } from '@switchyard/bin-data';
import { associatedData, deriveVaultKey, VaultCipher } from './vault-cipher';
import type { VaultKeys } from './vault-keys';

export interface StoredCard {
  readonly id: string;
  readonly merchantAccountId: string;
  /** Wire card scheme (`visa`, `mastercard`, `amex`, ...); null when not detected or not a wire scheme. */
  readonly scheme: string | null;
  /** Credit / debit / prepaid: not known from the number, so null. */
  readonly cardType: string | null;
  /** First 6 digits. */
  readonly bin: string;
  readonly last4: string;
  /** MM/YY */
  readonly expirationDate: string;
  /** HMAC-SHA256 of merchant account + PAN under a key derived from the vault root; base64url. Same card, same account: same value. */
  readonly fingerprint: string;
  readonly createdAt: string;
}

export interface CardToStore {
  readonly number: string;
  readonly expirationDate: string;
}

/** Bumped with the encryption or fingerprint scheme; part of the HKDF labels and of every row's AAD. */
const formatVersion = 'v1';
/** Rows under a data key. */
const envelopeVersion = 'v2';

interface VaultCardRecord {
  id: string;
  merchant_account_id: string;
  pan_ciphertext: Buffer;
  pan_iv: Buffer;
  pan_tag: Buffer;
  bin: string;
  last4: string;
  expiration_date: string;
  scheme: string | null;
  fingerprint: string;
  created_at: string;
  /** Null: a row from before envelope encryption (root-derived key). */
  data_key_id: string | null;
  buyer_id: string | null;
}

type PublicColumns = Omit<VaultCardRecord, 'pan_ciphertext' | 'pan_iv' | 'pan_tag'>;

const CARD_DATA = 'card-data';
/** The owner of a data key (one per buyer, or one per card without a buyer). */
export const buyerKeyOwner = (merchantAccountId: string, buyerId: string): string =>
  `buyer:${JSON.stringify([merchantAccountId, buyerId])}`;
const cardKeyOwner = (id: string): string => `card:${id}`;

export class CardVault {
  // ES private fields: key material stays out of util.inspect / console.log of the vault.
  readonly #keys: VaultKeys;
  readonly #legacy: VaultCipher;
  readonly #ciphers = new WeakMap<Buffer, VaultCipher>();
  readonly #fingerprintKey: KeyObject;
  readonly #db: Database.Database;
  readonly #now: () => Date;
  readonly #newId: () => string;
  readonly #syncedByEvents: boolean;
  readonly #insert: Database.Statement<[VaultCardRecord]>;
  readonly #find: Database.Statement<[string, string], PublicColumns>;
  readonly #secret: Database.Statement<[string, string], VaultCardRecord>;
  readonly #delete: Database.Statement<[string, string]>;
  readonly #insertHandOver: Database.Statement<[string, string, string]>;
  readonly #handOver: Database.Statement<[string, string], { found: 1 }>;
  readonly #deleteHandOver: Database.Statement<[string, string]>;
  readonly #expiredHandOvers: Database.Statement<
    [string, number],
    { readonly merchantAccountId: string; readonly id: string }
  >;

  /**
   * @param options.syncedByEvents the events are committed (synchronous=FULL) on this same SQLite connection: every
   *   card stored is named by an event appended after it before anything is acknowledged, and that event's commit
   *   syncs the WAL up to and including the card, so the card's own commit skips its fsync (`withDeferredSync`). A
   *   card lost to a power loss before that is one no event names. False (EventStoreDB): every card is synced.
   */
  constructor(
    db: Database.Database,
    options: { keys: VaultKeys; now?: () => Date; newId?: () => string; syncedByEvents?: boolean },
  ) {
    this.#syncedByEvents = options.syncedByEvents ?? false;
    this.#keys = options.keys;
    const root = options.keys.root();
    this.#legacy = new VaultCipher(root, keyLabel('pan-encryption'));
    this.#fingerprintKey = deriveVaultKey(root, keyLabel('fingerprint'));
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#newId = options.newId ?? randomUUID;

    db.exec(`
      CREATE TABLE IF NOT EXISTS vault_cards (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL,
        pan_ciphertext BLOB NOT NULL, pan_iv BLOB NOT NULL, pan_tag BLOB NOT NULL,
        bin TEXT NOT NULL, last4 TEXT NOT NULL, expiration_date TEXT NOT NULL, scheme TEXT, fingerprint TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS vault_cards_account_fingerprint ON vault_cards (merchant_account_id, fingerprint);
      -- Cards waiting for their payment: a few seconds' worth, so read whole by the sweep (no index to write).
      CREATE TABLE IF NOT EXISTS vault_card_hand_overs (
        card_id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, until TEXT NOT NULL
      );
    `);
    const columns = new Set(
      (db.prepare('PRAGMA table_info(vault_cards)').all() as { name: string }[]).map((column) => column.name),
    );
    if (!columns.has('data_key_id')) db.exec('ALTER TABLE vault_cards ADD COLUMN data_key_id TEXT');
    if (!columns.has('buyer_id')) db.exec('ALTER TABLE vault_cards ADD COLUMN buyer_id TEXT');
    db.exec(
      'CREATE INDEX IF NOT EXISTS vault_cards_buyer ON vault_cards (merchant_account_id, buyer_id) WHERE buyer_id IS NOT NULL',
    );
    this.#insert = db.prepare(`
      INSERT INTO vault_cards (id, merchant_account_id, pan_ciphertext, pan_iv, pan_tag, bin, last4, expiration_date, scheme, fingerprint, created_at, data_key_id, buyer_id)
      VALUES (@id, @merchant_account_id, @pan_ciphertext, @pan_iv, @pan_tag, @bin, @last4, @expiration_date, @scheme, @fingerprint, @created_at, @data_key_id, @buyer_id)
    `);
    this.#find = db.prepare(`
      SELECT id, merchant_account_id, bin, last4, expiration_date, scheme, fingerprint, created_at, data_key_id, buyer_id
      FROM vault_cards WHERE id = ? AND merchant_account_id = ?
    `);
    this.#secret = db.prepare('SELECT * FROM vault_cards WHERE id = ? AND merchant_account_id = ?');
    this.#delete = db.prepare('DELETE FROM vault_cards WHERE id = ? AND merchant_account_id = ?');
    this.#insertHandOver = db.prepare(
      'INSERT INTO vault_card_hand_overs (card_id, merchant_account_id, until) VALUES (?, ?, ?)',
    );
    this.#handOver = db.prepare(
      'SELECT 1 AS found FROM vault_card_hand_overs WHERE card_id = ? AND merchant_account_id = ?',
    );
    this.#deleteHandOver = db.prepare(
      'DELETE FROM vault_card_hand_overs WHERE card_id = ? AND merchant_account_id = ?',
    );
    this.#expiredHandOvers = db.prepare(
      'SELECT card_id AS id, merchant_account_id AS merchantAccountId FROM vault_card_hand_overs WHERE until <= ? ORDER BY until LIMIT ?',
    );
  }

  /**
   * Encrypts and keeps the card as a new row (every call, also for a card stored before), under its buyer's data key
   * when `buyerId` is given, else under a data key of its own. Throws a RangeError, without the number, on a
   * malformed card.
   */
  store(
    merchantAccountId: string,
    card: CardToStore,
    options: {
      buyerId?: string | null;
      /**
       * A card the gateway handed over for a payment not made yet: it waits until then to be taken
       * (`releaseHandOvers`), else `expiredHandOvers` lists it for removal. Kept in the same commit as the card.
       */
      handOverUntil?: Date;
    } = {},
  ): StoredCard {
    validate(card);
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '')
      throw new RangeError('merchant account id is required');
    const id = this.#newId();
    const buyerId = options.buyerId ?? null;
    const insert = this.#db.transaction((): VaultCardRecord => {
      const dataKey = buyerId
        ? this.#keys.forOwner(CARD_DATA, buyerKeyOwner(merchantAccountId, buyerId))
        : this.#keys.create(CARD_DATA, cardKeyOwner(id));
      const row: VaultCardRecord = {
        id,
        merchant_account_id: merchantAccountId,
        ...this.#encrypt(dataKey.key, id, merchantAccountId, card.number),
        expiration_date: card.expirationDate,
        created_at: this.#now().toISOString(),
        data_key_id: dataKey.id,
        buyer_id: buyerId,
      };
      this.#insert.run(row);
      if (options.handOverUntil) this.#insertHandOver.run(id, merchantAccountId, options.handOverUntil.toISOString());
      return row;
    });
    const record = this.#syncedByEvents ? withDeferredSync(this.#db, () => insert()) : insert();
    return toStoredCard(record);
  }

  /** Forgets a card: its row, and its data key when it had one of its own. Nothing of it stays. */
  remove(merchantAccountId: string, id: string): void {
    this.removeAll([{ merchantAccountId, id }]);
  }

  /** `remove` of each card, in one commit. */
  removeAll(cards: readonly { readonly merchantAccountId: string; readonly id: string }[]): void {
    this.#db.transaction(() => {
      for (const { merchantAccountId, id } of cards) {
        this.#deleteHandOver.run(id, merchantAccountId);
        const row = this.#find.get(id, merchantAccountId);
        if (!row) continue;
        this.#delete.run(id, merchantAccountId);
        if (row.data_key_id && !row.buyer_id) this.#keys.shredOwner(cardKeyOwner(id));
      }
    })();
  }

  /** Whether the card waits to be taken by its payment (stored with `handOverUntil`, neither taken nor removed). */
  isHandedOver(merchantAccountId: string, id: string): boolean {
    return this.#handOver.get(id, merchantAccountId) !== undefined;
  }

  /** The cards taken by their payments: they no longer wait (one commit for all). */
  releaseHandOvers(cards: readonly { readonly merchantAccountId: string; readonly id: string }[]): void {
    this.#db.transaction(() => {
      for (const { merchantAccountId, id } of cards) this.#deleteHandOver.run(id, merchantAccountId);
    })();
  }

  /** Handed-over cards no payment took by `now`, the longest waiting first. */
  expiredHandOvers(now: Date, limit = 500): { readonly merchantAccountId: string; readonly id: string }[] {
    return this.#expiredHandOvers.all(now.toISOString(), limit);
  }

  /**
   * Crypto-shredding of a buyer's card data: their data key is deleted (everything encrypted under it, copies and
   * backups of the rows included, is unrecoverable without it), and their rows with it. Returns the rows removed.
   */
  shredBuyer(merchantAccountId: string, buyerId: string): number {
    return this.#db.transaction(() => {
      this.#keys.shredOwner(buyerKeyOwner(merchantAccountId, buyerId));
      return this.#db
        .prepare('DELETE FROM vault_cards WHERE merchant_account_id = ? AND buyer_id = ?')
        .run(merchantAccountId, buyerId).changes;
    })();
  }

  /** The card without its number; null when absent or another merchant account's. */
  find(merchantAccountId: string, id: string): StoredCard | null {
    const record = this.#find.get(id, merchantAccountId);
    return record ? toStoredCard(record) : null;
  }

  /**
   * The full number, decrypted, for the connector call only: never log, persist or emit it. Null when absent,
   * another merchant account's, or shredded; throws when the row fails authentication (tampered, moved, or a
   * different key).
   */
  reveal(merchantAccountId: string, id: string): { number: string; expirationDate: string } | null {
    const record = this.#secret.get(id, merchantAccountId);
    if (!record) return null;
    const cipher = this.#cipherOf(record);
    if (!cipher) return null;
    let number: string;
    try {
      number = cipher.open(
        { ciphertext: record.pan_ciphertext, iv: record.pan_iv, tag: record.pan_tag },
        rowAad(record),
      );
    } catch (error) {
      throw new Error(
        `vault card ${record.id} failed decryption: tampered with, moved between rows, or encrypted under another vault key`,
        { cause: error },
      );
    }
    return { number, expirationDate: record.expiration_date };
  }

  /** Seals a short-lived secret (a security code waiting for its payment) under the card's key: it dies with the card. */
  sealWithCard(merchantAccountId: string, cardId: string, purpose: string, value: string): string {
    const record = this.#find.get(cardId, merchantAccountId);
    const cipher = record && this.#cipherOf(record);
    if (!record || !cipher) throw new RangeError('no such card in the vault');
    return cipher.sealToText(value, associatedData('vault_cards/sealed', cardId, merchantAccountId, purpose));
  }

  /** The secret sealed by `sealWithCard`; null when the card is gone or shredded, or the text was not sealed for it. */
  openWithCard(merchantAccountId: string, cardId: string, purpose: string, sealed: string): string | null {
    const record = this.#find.get(cardId, merchantAccountId);
    const cipher = record && this.#cipherOf(record);
    if (!record || !cipher) return null;
    try {
      return cipher.openText(sealed, associatedData('vault_cards/sealed', cardId, merchantAccountId, purpose));
    } catch {
      return null;
    }
  }

  /** A new number and/or expiry for a stored card (account updater), under the key it already has. */
  replace(merchantAccountId: string, id: string, card: { number?: string; expirationDate?: string }): StoredCard {
    return this.#db.transaction((): StoredCard => {
      const record = this.#secret.get(id, merchantAccountId);
      const current = record && this.reveal(merchantAccountId, id);
      if (!record || !current) throw new RangeError('no such card in the vault');
      const next = {
        number: card.number ?? current.number,
        expirationDate: card.expirationDate ?? current.expirationDate,
      };
      validate(next);
      const key = record.data_key_id ? this.#keys.get(record.data_key_id) : null;
      const updated: VaultCardRecord = {
        ...record,
        ...(card.number !== undefined
          ? key
            ? this.#encrypt(key, id, merchantAccountId, next.number)
            : this.#encryptLegacy(id, merchantAccountId, next.number)
          : {}),
        expiration_date: next.expirationDate,
      };
      this.#db
        .prepare(
          `UPDATE vault_cards SET pan_ciphertext = @pan_ciphertext, pan_iv = @pan_iv, pan_tag = @pan_tag, bin = @bin, last4 = @last4, scheme = @scheme,
             fingerprint = @fingerprint, expiration_date = @expiration_date WHERE id = @id AND merchant_account_id = @merchant_account_id`,
        )
        .run(updated);
      return toStoredCard(updated);
    })();
  }

  /** Moves rows from before envelope encryption to data keys of their own (idempotent; batches of `batchSize`). */
  migrateLegacyRows(batchSize = 500): number {
    const select = this.#db.prepare<[number], VaultCardRecord>(
      'SELECT * FROM vault_cards WHERE data_key_id IS NULL LIMIT ?',
    );
    const update = this.#db.prepare(
      'UPDATE vault_cards SET pan_ciphertext = @pan_ciphertext, pan_iv = @pan_iv, pan_tag = @pan_tag, data_key_id = @data_key_id WHERE id = @id AND data_key_id IS NULL',
    );
    let migrated = 0;
    for (;;) {
      const rows = select.all(batchSize);
      if (rows.length === 0) return migrated;
      this.#db.transaction(() => {
        for (const row of rows) {
          const number = this.#legacy.open(
            { ciphertext: row.pan_ciphertext, iv: row.pan_iv, tag: row.pan_tag },
            rowAad(row),
          );
          const dataKey = row.buyer_id
            ? this.#keys.forOwner(CARD_DATA, buyerKeyOwner(row.merchant_account_id, row.buyer_id))
            : this.#keys.create(CARD_DATA, cardKeyOwner(row.id));
          const sealed = new VaultCipher(dataKey.key, keyLabel('pan-encryption')).seal(
            number,
            rowAad({ ...row, data_key_id: dataKey.id }),
          );
          migrated += update.run({
            id: row.id,
            pan_ciphertext: sealed.ciphertext,
            pan_iv: sealed.iv,
            pan_tag: sealed.tag,
            data_key_id: dataKey.id,
          }).changes;
        }
      })();
    }
  }

  /** How many rows are still in the format from before envelope encryption. */
  legacyRowCount(): number {
    return (
      this.#db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM vault_cards WHERE data_key_id IS NULL').get()?.n ??
      0
    );
  }

  #cipherOf(record: Pick<VaultCardRecord, 'data_key_id'>): VaultCipher | null {
    if (!record.data_key_id) return this.#legacy;
    const key = this.#keys.get(record.data_key_id);
    return key ? this.#cipherFor(key) : null;
  }

  /**
   * The card cipher of a data key, derived once per key object: `VaultKeys` hands out the same Buffer while it keeps
   * the key in its cache, so the card stored at a hand-over is read back (the take, the aliases) without deriving
   * again. Held weakly by the key: a key the cache drops, or shreds, takes its cipher with it.
   */
  #cipherFor(dataKey: Buffer): VaultCipher {
    let cipher = this.#ciphers.get(dataKey);
    if (!cipher) {
      cipher = new VaultCipher(dataKey, keyLabel('pan-encryption'));
      this.#ciphers.set(dataKey, cipher);
    }
    return cipher;
  }

  #encrypt(dataKey: Buffer, id: string, merchantAccountId: string, number: string) {
    const sealed = this.#cipherFor(dataKey).seal(
      number,
      rowAad({ id, merchant_account_id: merchantAccountId, data_key_id: 'set' }),
    );
    return {
      pan_ciphertext: sealed.ciphertext,
      pan_iv: sealed.iv,
      pan_tag: sealed.tag,
      ...this.#shown(merchantAccountId, number),
    };
  }

  #encryptLegacy(id: string, merchantAccountId: string, number: string) {
    const sealed = this.#legacy.seal(number, rowAad({ id, merchant_account_id: merchantAccountId, data_key_id: null }));
    return {
      pan_ciphertext: sealed.ciphertext,
      pan_iv: sealed.iv,
      pan_tag: sealed.tag,
      ...this.#shown(merchantAccountId, number),
    };
  }

  #shown(merchantAccountId: string, number: string) {
    return {
      bin: number.slice(0, 6),
      last4: number.slice(-4),
      scheme: detectScheme(number),
      fingerprint: this.#fingerprint(merchantAccountId, number),
    };
  }

  #fingerprint(merchantAccountId: string, number: string): string {
    // JSON keeps the two parts unambiguous whatever the account id contains.
    return createHmac('sha256', this.#fingerprintKey)
      .update(JSON.stringify([merchantAccountId, number]))
      .digest('base64url');
  }
}

function validate(card: CardToStore): void {
  const number = card.number;
  if (typeof number !== 'string' || !/^\d{12,19}$/.test(number))
    throw new RangeError('card number must be 12 to 19 digits');
  if (!passesLuhn(number)) throw new RangeError('card number fails the Luhn check');
  if (typeof card.expirationDate !== 'string' || !/^(0[1-9]|1[0-2])\/\d{2}$/.test(card.expirationDate)) {
    throw new RangeError('expiration date must be MM/YY');
  }
}

/**
 * The vault key: `configured` (VAULT_KEY: base64 or base64url of exactly 32 bytes) when given; otherwise
 * `<dataDir>/vault.key`, created on first use (32 random bytes, base64, mode 0600) and reused after; otherwise
 * (in-memory storage, tests) a random key that lives as long as the process. (`loadOrCreateKey`, `@switchyard/service`.)
 */
export function loadVaultKey(options: { configured?: string; dataDir?: string }): Buffer {
  return loadOrCreateKey({ ...options, fileName: 'vault.key', settingName: 'VAULT_KEY' });
}

const keyLabel = (purpose: string): string => `switchyard/card-vault/${formatVersion}/${purpose}`;

/** Binds a ciphertext to its row: copied to another id or merchant account, it no longer decrypts. */
const rowAad = (row: { id: string; merchant_account_id: string; data_key_id: string | null }): Buffer =>
  associatedData(`vault_cards/${row.data_key_id ? envelopeVersion : formatVersion}`, row.id, row.merchant_account_id);

function toStoredCard(record: PublicColumns): StoredCard {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    scheme: record.scheme,
    cardType: null,
    bin: record.bin,
    last4: record.last4,
    expirationDate: record.expiration_date,
    fingerprint: record.fingerprint,
    createdAt: record.created_at,
  };
}
