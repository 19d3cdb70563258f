/**
 * The gift card vault: a stored gift card's number and PIN, kept only as AES-256-GCM ciphertext (`VaultCipher`, the
 * card vault's encryption, under a key derived for this purpose) in `vault_gift_cards`, one row per stored card,
 * bound to its id and merchant account. What may be shown of a card (BIN, sub-BIN, last four) lives in its event
 * stream, never here. Erasing a card overwrites its ciphertext in place before deleting the row, so the number
 * cannot be recovered from the database file once SQLite has checkpointed its write-ahead log.
 *
 * Also here: sealing a just-issued card's number and PIN into one opaque string, for a response that must be
 * replayed (Idempotency-Key) without ever being kept in clear. Nothing here logs, and no error carries a number.
 */
import type Database from 'better-sqlite3';
import type { GiftCardCredentials } from '@switchyard/connectors';
import { associatedData, VaultCipher } from './vault-cipher';

/** A gift card's number (16 to 19 digits) and PIN, as the gift card service takes them. */
export type GiftCardSecret = GiftCardCredentials;

/** Bumped with the encryption scheme; part of the HKDF labels and of every value's AAD. */
const formatVersion = 'v1';

interface VaultGiftCardRecord {
  id: string;
  merchant_account_id: string;
  secret_ciphertext: Buffer;
  secret_iv: Buffer;
  secret_tag: Buffer;
  created_at: string;
}

export class GiftCardVault {
  readonly #cipher: VaultCipher;
  readonly #responses: VaultCipher;
  readonly #now: () => Date;
  readonly #insert: Database.Statement<[VaultGiftCardRecord]>;
  readonly #secret: Database.Statement<[string, string], VaultGiftCardRecord>;
  readonly #erase: (id: string, merchantAccountId: string) => boolean;

  constructor(db: Database.Database, options: { key: Buffer; now?: () => Date }) {
    this.#cipher = new VaultCipher(options.key, `switchyard/gift-card-vault/${formatVersion}/secret-encryption`);
    this.#responses = new VaultCipher(options.key, `switchyard/gift-card-vault/${formatVersion}/response-sealing`);
    this.#now = options.now ?? (() => new Date());

    db.exec(`
      CREATE TABLE IF NOT EXISTS vault_gift_cards (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL,
        secret_ciphertext BLOB NOT NULL, secret_iv BLOB NOT NULL, secret_tag BLOB NOT NULL,
        created_at TEXT NOT NULL
      );
    `);
    this.#insert = db.prepare(`
      INSERT INTO vault_gift_cards (id, merchant_account_id, secret_ciphertext, secret_iv, secret_tag, created_at)
      VALUES (@id, @merchant_account_id, @secret_ciphertext, @secret_iv, @secret_tag, @created_at)
    `);
    this.#secret = db.prepare('SELECT * FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ?');
    // Same-size overwrite: SQLite rewrites the cell in place, so the deleted row leaves zeros, not ciphertext.
    const overwrite = db.prepare<[string, string]>(
      `UPDATE vault_gift_cards SET secret_ciphertext = zeroblob(length(secret_ciphertext)), secret_iv = zeroblob(length(secret_iv)),
         secret_tag = zeroblob(length(secret_tag)) WHERE id = ? AND merchant_account_id = ?`,
    );
    const remove = db.prepare<[string, string]>('DELETE FROM vault_gift_cards WHERE id = ? AND merchant_account_id = ?');
    this.#erase = db.transaction((id: string, merchantAccountId: string) => {
      overwrite.run(id, merchantAccountId);
      return remove.run(id, merchantAccountId).changes > 0;
    });
  }

  /** Encrypts and keeps the card's number and PIN under its id. Throws a RangeError, without the number, on a malformed one. */
  store(merchantAccountId: string, id: string, secret: GiftCardSecret): void {
    assertSecret(secret);
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '') throw new RangeError('merchant account id is required');
    const sealed = this.#cipher.seal(serialize(secret), additionalData(id, merchantAccountId));
    this.#insert.run({
      id,
      merchant_account_id: merchantAccountId,
      secret_ciphertext: sealed.ciphertext,
      secret_iv: sealed.iv,
      secret_tag: sealed.tag,
      created_at: this.#now().toISOString(),
    });
  }

  /**
   * The number and PIN, decrypted, for a provider call only: never log, persist or emit them. Null when absent,
   * erased or another merchant account's; throws when the row fails authentication (tampered, moved, another key).
   */
  reveal(merchantAccountId: string, id: string): GiftCardSecret | null {
    const record = this.#secret.get(id, merchantAccountId);
    if (!record) return null;
    try {
      const aad = additionalData(record.id, record.merchant_account_id);
      return JSON.parse(this.#cipher.open({ ciphertext: record.secret_ciphertext, iv: record.secret_iv, tag: record.secret_tag }, aad)) as GiftCardSecret;
    } catch (error) {
      throw new Error(`vault gift card ${record.id} failed decryption: tampered with, moved between rows, or encrypted under another vault key`, { cause: error });
    }
  }

  /** Makes the card's number and PIN unrecoverable. False when there was nothing to erase. */
  erase(merchantAccountId: string, id: string): boolean {
    return this.#erase(id, merchantAccountId);
  }

  /** The number and PIN as one opaque string bound to `context` (e.g. the merchant account, operation and key of a request). */
  seal(secret: GiftCardSecret, context: readonly string[]): string {
    assertSecret(secret);
    return this.#responses.sealToText(serialize(secret), associatedData(`sealed_gift_card/${formatVersion}`, ...context));
  }

  /** What `seal` sealed under the same context; throws when it was altered or sealed for another context. */
  open(sealed: string, context: readonly string[]): GiftCardSecret {
    try {
      return JSON.parse(this.#responses.openText(sealed, associatedData(`sealed_gift_card/${formatVersion}`, ...context))) as GiftCardSecret;
    } catch (error) {
      throw new Error('a sealed gift card failed decryption: altered, or sealed for another request or under another vault key', { cause: error });
    }
  }
}

/** Binds a ciphertext to its row: copied to another id or merchant account, it no longer decrypts. */
const additionalData = (id: string, merchantAccountId: string): Buffer => associatedData(`vault_gift_cards/${formatVersion}`, id, merchantAccountId);

const serialize = (secret: GiftCardSecret): string => JSON.stringify(secret.pin === undefined ? { number: secret.number } : { number: secret.number, pin: secret.pin });

function assertSecret(secret: GiftCardSecret): void {
  if (typeof secret.number !== 'string' || !/^\d{16,19}$/.test(secret.number)) throw new RangeError('gift card number must be 16 to 19 digits');
  if (secret.pin !== undefined && (typeof secret.pin !== 'string' || secret.pin === '')) throw new RangeError('gift card PIN must be a non-empty string');
}
