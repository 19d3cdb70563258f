/**
 * The card vault: full card numbers (PAN) kept only as AES-256-GCM ciphertext in `vault_cards`, next to what may be
 * shown (BIN, last 4, expiry, scheme) and a keyed fingerprint for "same card" lookups. Security codes are never
 * stored. Nothing here logs, and no error message carries a card number or key.
 *
 * Keys: the 32-byte vault key is only an HKDF input; the PAN encryption key and the fingerprint key are derived
 * from it under separate labels, so neither can stand in for the other. The encryption itself is `VaultCipher`
 * (vault-cipher.ts), shared with the gift card vault.
 */
import { createHmac, randomUUID, type KeyObject } from 'node:crypto';
import type Database from 'better-sqlite3';
import { passesLuhn } from '@switchyard/contracts';
import { loadOrCreateKey } from '@switchyard/service';
import { detectScheme } from '@switchyard/bin-data';
import { associatedData, deriveVaultKey, VaultCipher } from './vault-cipher';

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
  /** HMAC-SHA256 of merchant account + PAN under a key derived from the vault key; base64url. Same card, same account: same value. */
  readonly fingerprint: string;
  readonly createdAt: string;
}

export interface CardToStore {
  readonly number: string;
  readonly expirationDate: string;
}

/** Bumped with the encryption or fingerprint scheme; part of the HKDF labels and of every row's AAD. */
const formatVersion = 'v1';

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
}

type PublicColumns = Omit<VaultCardRecord, 'pan_ciphertext' | 'pan_iv' | 'pan_tag'>;

export class CardVault {
  // ES private fields: key material stays out of util.inspect / console.log of the vault.
  readonly #cipher: VaultCipher;
  readonly #fingerprintKey: KeyObject;
  readonly #now: () => Date;
  readonly #newId: () => string;
  readonly #insert: Database.Statement<[VaultCardRecord]>;
  readonly #find: Database.Statement<[string, string], PublicColumns>;
  readonly #secret: Database.Statement<[string, string], VaultCardRecord>;
  readonly #delete: Database.Statement<[string, string]>;

  constructor(db: Database.Database, options: { key: Buffer; now?: () => Date; newId?: () => string }) {
    this.#cipher = new VaultCipher(options.key, keyLabel('pan-encryption'));
    this.#fingerprintKey = deriveVaultKey(options.key, keyLabel('fingerprint'));
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
    `);
    this.#insert = db.prepare(`
      INSERT INTO vault_cards (id, merchant_account_id, pan_ciphertext, pan_iv, pan_tag, bin, last4, expiration_date, scheme, fingerprint, created_at)
      VALUES (@id, @merchant_account_id, @pan_ciphertext, @pan_iv, @pan_tag, @bin, @last4, @expiration_date, @scheme, @fingerprint, @created_at)
    `);
    this.#find = db.prepare(`
      SELECT id, merchant_account_id, bin, last4, expiration_date, scheme, fingerprint, created_at
      FROM vault_cards WHERE id = ? AND merchant_account_id = ?
    `);
    this.#secret = db.prepare('SELECT * FROM vault_cards WHERE id = ? AND merchant_account_id = ?');
    this.#delete = db.prepare('DELETE FROM vault_cards WHERE id = ? AND merchant_account_id = ?');
  }

  /** Encrypts and keeps the card as a new row (every call, also for a card stored before). Throws a RangeError, without the number, on a malformed card. */
  store(merchantAccountId: string, card: CardToStore): StoredCard {
    const number = card.number;
    if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) throw new RangeError('card number must be 12 to 19 digits');
    if (!passesLuhn(number)) throw new RangeError('card number fails the Luhn check');
    if (typeof card.expirationDate !== 'string' || !/^(0[1-9]|1[0-2])\/\d{2}$/.test(card.expirationDate)) {
      throw new RangeError('expiration date must be MM/YY');
    }
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '') throw new RangeError('merchant account id is required');

    const id = this.#newId();
    const sealed = this.#cipher.seal(number, additionalData(id, merchantAccountId));
    const record: VaultCardRecord = {
      id,
      merchant_account_id: merchantAccountId,
      pan_ciphertext: sealed.ciphertext,
      pan_iv: sealed.iv,
      pan_tag: sealed.tag,
      bin: number.slice(0, 6),
      last4: number.slice(-4),
      expiration_date: card.expirationDate,
      scheme: detectScheme(number),
      fingerprint: this.#fingerprint(merchantAccountId, number),
      created_at: this.#now().toISOString(),
    };
    this.#insert.run(record);
    return toStoredCard(record);
  }

  /** Forgets a card kept by `store` for a request that was then refused: nothing of it stays. */
  remove(merchantAccountId: string, id: string): void {
    this.#delete.run(id, merchantAccountId);
  }

  /** The card without its number; null when absent or another merchant account's. */
  find(merchantAccountId: string, id: string): StoredCard | null {
    const record = this.#find.get(id, merchantAccountId);
    return record ? toStoredCard(record) : null;
  }

  /**
   * The full number, decrypted, for the connector call only: never log, persist or emit it. Null when absent or
   * another merchant account's; throws when the row fails authentication (tampered, moved, or a different key).
   */
  reveal(merchantAccountId: string, id: string): { number: string; expirationDate: string } | null {
    const record = this.#secret.get(id, merchantAccountId);
    if (!record) return null;
    let number: string;
    try {
      number = this.#cipher.open({ ciphertext: record.pan_ciphertext, iv: record.pan_iv, tag: record.pan_tag }, additionalData(record.id, record.merchant_account_id));
    } catch (error) {
      throw new Error(`vault card ${record.id} failed decryption: tampered with, moved between rows, or encrypted under another vault key`, { cause: error });
    }
    return { number, expirationDate: record.expiration_date };
  }

  #fingerprint(merchantAccountId: string, number: string): string {
    // JSON keeps the two parts unambiguous whatever the account id contains.
    return createHmac('sha256', this.#fingerprintKey).update(JSON.stringify([merchantAccountId, number])).digest('base64url');
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
const additionalData = (id: string, merchantAccountId: string): Buffer => associatedData(`vault_cards/${formatVersion}`, id, merchantAccountId);

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
