/**
 * The gift card vault: a stored gift card's number and PIN, kept only as AES-256-GCM ciphertext (`VaultCipher`, the
 * card vault's encryption, under a key derived for this purpose) in `vault_gift_cards`, one row per stored card,
 * bound to its id and merchant account. What may be shown of a card (BIN, sub-BIN, last four) lives in its event
 * stream, never here. Erasing a card overwrites its ciphertext in place before deleting the row, so the number
 * cannot be recovered from the database file once SQLite has checkpointed its write-ahead log.
 *
 * Also here: sealing a just-issued card's number and PIN into one opaque string, for a response that must be
 * replayed (Idempotency-Key) without ever being kept in clear. Nothing here logs, and no error carries a number.
 *
 * The key is the gift cards service's own (`GIFT_CARDS_KEY`, else `DATA_DIR/gift-cards.key`: `loadGiftCardsKey`).
 * Rows written before it had one were sealed under the transactions service's vault root (`key_version` NULL): given
 * that `legacyKey`, `rewrapLegacy` seals each of them again under the current key (in place, same size), after which
 * the legacy key opens nothing here any more; until then `reveal` opens them with it.
 */
import type Database from 'better-sqlite3';
import type { GiftCardCredentials } from '@switchyard/connectors';
import { associatedData, giftCardVaultLabels, VaultCipher, type GiftCardLegacyKeys } from '@switchyard/vault';

/** A gift card's number (16 to 19 digits) and PIN, as the gift card service takes them. */
export type GiftCardSecret = GiftCardCredentials;

/** Bumped with the encryption scheme; part of the HKDF labels and of every value's AAD. */
const formatVersion = 'v1';

/** `key_version` of a row sealed under the gift cards key (NULL: under the legacy key, the transactions vault root). */
const currentKeyVersion = 'gift-cards-key';

export interface GiftCardVaultOptions {
  /** The gift cards key (32 bytes). */
  readonly key: Buffer;
  /**
   * The keys rows and sealed answers of before the gift cards key were sealed under (derived from the transactions
   * service's vault root: `giftCardLegacyKeysOf`); absent: there are none.
   */
  readonly legacyKeys?: GiftCardLegacyKeys;
  readonly now?: () => Date;
}

interface VaultGiftCardRecord {
  id: string;
  merchant_account_id: string;
  secret_ciphertext: Buffer;
  secret_iv: Buffer;
  secret_tag: Buffer;
  created_at: string;
  key_version?: string | null;
}

export class GiftCardVault {
  readonly #cipher: VaultCipher;
  readonly #responses: VaultCipher;
  readonly #legacy: { readonly cipher: VaultCipher; readonly responses: VaultCipher } | null;
  readonly #legacyRows: Database.Statement<[number], VaultGiftCardRecord>;
  readonly #rewrap: Database.Statement<
    [{ id: string; merchant_account_id: string; secret_ciphertext: Buffer; secret_iv: Buffer; secret_tag: Buffer }]
  >;
  readonly #transaction: <T>(work: () => T) => T;
  readonly #now: () => Date;
  readonly #insert: Database.Statement<[VaultGiftCardRecord & { one_off: 0 | 1 }]>;
  readonly #oneOff: Database.Statement<[string, string], VaultGiftCardRecord>;
  readonly #holdsOneOff: Database.Statement<[string, string], { found: 1 }>;
  readonly #staleOneOffs: Database.Statement<[string, number], { id: string; merchant_account_id: string }>;
  readonly #secret: Database.Statement<[string, string], VaultGiftCardRecord>;
  readonly #erase: (id: string, merchantAccountId: string) => boolean;

  constructor(db: Database.Database, options: GiftCardVaultOptions) {
    this.#cipher = new VaultCipher(options.key, giftCardVaultLabels.secret);
    this.#responses = new VaultCipher(options.key, giftCardVaultLabels.responses);
    this.#legacy = options.legacyKeys
      ? {
          cipher: VaultCipher.fromDerivedKey(options.legacyKeys.secret),
          responses: VaultCipher.fromDerivedKey(options.legacyKeys.responses),
        }
      : null;
    this.#now = options.now ?? (() => new Date());

    db.exec(`
      CREATE TABLE IF NOT EXISTS vault_gift_cards (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL,
        secret_ciphertext BLOB NOT NULL, secret_iv BLOB NOT NULL, secret_tag BLOB NOT NULL,
        created_at TEXT NOT NULL
      );
    `);
    const columns = new Set(
      (db.prepare('PRAGMA table_info(vault_gift_cards)').all() as { name: string }[]).map((column) => column.name),
    );
    if (!columns.has('key_version')) db.exec('ALTER TABLE vault_gift_cards ADD COLUMN key_version TEXT');
    if (!columns.has('one_off')) db.exec('ALTER TABLE vault_gift_cards ADD COLUMN one_off INTEGER NOT NULL DEFAULT 0');
    this.#insert = db.prepare(`
      INSERT INTO vault_gift_cards (id, merchant_account_id, secret_ciphertext, secret_iv, secret_tag, created_at, key_version, one_off)
      VALUES (@id, @merchant_account_id, @secret_ciphertext, @secret_iv, @secret_tag, @created_at, '${currentKeyVersion}', @one_off)
    `);
    this.#oneOff = db.prepare(
      'SELECT * FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ? AND one_off = 1',
    );
    this.#holdsOneOff = db.prepare(
      'SELECT 1 AS found FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ? AND one_off = 1',
    );
    this.#staleOneOffs = db.prepare(
      'SELECT id, merchant_account_id FROM vault_gift_cards WHERE one_off = 1 AND created_at < ? LIMIT ?',
    );
    this.#legacyRows = db.prepare('SELECT * FROM vault_gift_cards WHERE key_version IS NULL LIMIT ?');
    this.#rewrap = db.prepare(
      `UPDATE vault_gift_cards SET secret_ciphertext = @secret_ciphertext, secret_iv = @secret_iv, secret_tag = @secret_tag, key_version = '${currentKeyVersion}'
       WHERE id = @id AND merchant_account_id = @merchant_account_id AND key_version IS NULL`,
    );
    this.#transaction = (work) => db.transaction(work).immediate();
    this.#secret = db.prepare('SELECT * FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ?');
    // Same-size overwrite: SQLite rewrites the cell in place, so the deleted row leaves zeros, not ciphertext.
    const overwrite = db.prepare<[string, string]>(
      `UPDATE vault_gift_cards SET secret_ciphertext = zeroblob(length(secret_ciphertext)), secret_iv = zeroblob(length(secret_iv)),
         secret_tag = zeroblob(length(secret_tag)) WHERE id = ? AND merchant_account_id = ?`,
    );
    const remove = db.prepare<[string, string]>(
      'DELETE FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ?',
    );
    this.#erase = db.transaction((id: string, merchantAccountId: string) => {
      overwrite.run(id, merchantAccountId);
      return remove.run(id, merchantAccountId).changes > 0;
    });
  }

  /** Encrypts and keeps the card's number and PIN under its id. Throws a RangeError, without the number, on a malformed one. */
  store(merchantAccountId: string, id: string, secret: GiftCardSecret): void {
    this.#store(merchantAccountId, id, secret, 0);
  }

  /**
   * The same, in one commit, for the cards given by number and PIN to one payment (`gift-cards.hand-over`): kept
   * apart from the stored cards (`revealOneOff` reads only these), erased once a redemption is answered or by
   * `sweepOneOffs`.
   */
  storeOneOffs(
    merchantAccountId: string,
    cards: readonly { readonly id: string; readonly secret: GiftCardSecret }[],
  ): void {
    this.#transaction(() => {
      for (const { id, secret } of cards) this.#store(merchantAccountId, id, secret, 1);
    });
  }

  /** Whether a one-off card is kept under this id for the merchant account (nothing decrypted). */
  holdsOneOff(merchantAccountId: string, id: string): boolean {
    return this.#holdsOneOff.get(id, merchantAccountId) !== undefined;
  }

  /** A one-off card's number and PIN (as `reveal`); null when it is not one, was erased or is another account's. */
  revealOneOff(merchantAccountId: string, id: string): GiftCardSecret | null {
    const record = this.#oneOff.get(id, merchantAccountId);
    return record ? this.#opened(record) : null;
  }

  /** `eraseOneOff` of each, in one commit; answers how many were erased. */
  eraseOneOffs(merchantAccountId: string, ids: readonly string[]): number {
    return this.#transaction(() => ids.filter((id) => this.eraseOneOff(merchantAccountId, id)).length);
  }

  /** Erases a one-off card (never a stored one); false when there was none. */
  eraseOneOff(merchantAccountId: string, id: string): boolean {
    // A row is one-off or stored for good (ids are unique): the read needs no write transaction of its own, so a
    // stored card's redemption, which asks this too, opens none.
    return this.holdsOneOff(merchantAccountId, id) && this.#erase(id, merchantAccountId);
  }

  /** Erases the one-off cards kept since before `before` (a payment that never asked for them); answers how many. */
  sweepOneOffs(before: Date, batchSize = 500): number {
    let erased = 0;
    for (;;) {
      const rows = this.#staleOneOffs.all(before.toISOString(), batchSize);
      this.#transaction(() => {
        for (const row of rows) if (this.#erase(row.id, row.merchant_account_id)) erased += 1;
      });
      if (rows.length < batchSize) return erased;
    }
  }

  #store(merchantAccountId: string, id: string, secret: GiftCardSecret, oneOff: 0 | 1): void {
    assertSecret(secret);
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '')
      throw new RangeError('merchant account id is required');
    const sealed = this.#cipher.seal(serialize(secret), additionalData(id, merchantAccountId));
    this.#insert.run({
      id,
      merchant_account_id: merchantAccountId,
      secret_ciphertext: sealed.ciphertext,
      secret_iv: sealed.iv,
      secret_tag: sealed.tag,
      created_at: this.#now().toISOString(),
      one_off: oneOff,
    });
  }

  /**
   * The number and PIN, decrypted, for a provider call only: never log, persist or emit them. Null when absent,
   * erased or another merchant account's; throws when the row fails authentication (tampered, moved, another key).
   */
  reveal(merchantAccountId: string, id: string): GiftCardSecret | null {
    const record = this.#secret.get(id, merchantAccountId);
    return record ? this.#opened(record) : null;
  }

  #opened(record: VaultGiftCardRecord): GiftCardSecret {
    try {
      return this.#openRow(record);
    } catch (error) {
      throw new Error(
        `vault gift card ${record.id} failed decryption: tampered with, moved between rows, or encrypted under another vault key`,
        { cause: error },
      );
    }
  }

  /**
   * Seals every row still under the legacy key again under the gift cards key, a batch per transaction; returns how
   * many. Safe to run again (and after a crash): a row is rewritten once, and only while it is still a legacy one.
   */
  rewrapLegacy(batchSize = 500): number {
    let rewrapped = 0;
    for (;;) {
      const done = this.#transaction(() => {
        const rows = this.#legacyRows.all(batchSize);
        for (const row of rows) {
          let secret: string;
          try {
            secret = serialize(this.#openRow(row));
          } catch (error) {
            throw new Error(
              `vault gift card ${row.id} failed decryption under the legacy key: it cannot be sealed under the gift cards key`,
              { cause: error },
            );
          }
          const sealed = this.#cipher.seal(secret, additionalData(row.id, row.merchant_account_id));
          this.#rewrap.run({
            id: row.id,
            merchant_account_id: row.merchant_account_id,
            secret_ciphertext: sealed.ciphertext,
            secret_iv: sealed.iv,
            secret_tag: sealed.tag,
          });
        }
        return rows.length;
      });
      rewrapped += done;
      if (done < batchSize) return rewrapped;
    }
  }

  /** Makes the card's number and PIN unrecoverable. False when there was nothing to erase. */
  erase(merchantAccountId: string, id: string): boolean {
    return this.#erase(id, merchantAccountId);
  }

  #openRow(record: VaultGiftCardRecord): GiftCardSecret {
    const cipher = record.key_version ? this.#cipher : this.#legacy?.cipher;
    if (!cipher) throw new Error('sealed under the legacy key, which was not given');
    const aad = additionalData(record.id, record.merchant_account_id);
    return JSON.parse(
      cipher.open({ ciphertext: record.secret_ciphertext, iv: record.secret_iv, tag: record.secret_tag }, aad),
    ) as GiftCardSecret;
  }

  /** The number and PIN as one opaque string bound to `context` (e.g. the merchant account, operation and key of a request). */
  seal(secret: GiftCardSecret, context: readonly string[]): string {
    assertSecret(secret);
    return this.#responses.sealToText(
      serialize(secret),
      associatedData(`sealed_gift_card/${formatVersion}`, ...context),
    );
  }

  /** What `seal` sealed under the same context; throws when it was altered or sealed for another context. */
  open(sealed: string, context: readonly string[]): GiftCardSecret {
    const aad = associatedData(`sealed_gift_card/${formatVersion}`, ...context);
    try {
      return JSON.parse(this.#responses.openText(sealed, aad)) as GiftCardSecret;
    } catch (error) {
      // An answer kept before the gift cards key (they expire with their Idempotency-Key).
      if (this.#legacy) {
        try {
          return JSON.parse(this.#legacy.responses.openText(sealed, aad)) as GiftCardSecret;
        } catch {
          // the error below
        }
      }
      throw new Error(
        'a sealed gift card failed decryption: altered, or sealed for another request or under another vault key',
        { cause: error },
      );
    }
  }
}

/** Binds a ciphertext to its row: copied to another id or merchant account, it no longer decrypts. */
const additionalData = (id: string, merchantAccountId: string): Buffer =>
  associatedData(`vault_gift_cards/${formatVersion}`, id, merchantAccountId);

const serialize = (secret: GiftCardSecret): string =>
  JSON.stringify(secret.pin === undefined ? { number: secret.number } : { number: secret.number, pin: secret.pin });

function assertSecret(secret: GiftCardSecret): void {
  if (typeof secret.number !== 'string' || !/^\d{16,19}$/.test(secret.number))
    throw new RangeError('gift card number must be 16 to 19 digits');
  if (secret.pin !== undefined && (typeof secret.pin !== 'string' || secret.pin === ''))
    throw new RangeError('gift card PIN must be a non-empty string');
}
