/**
 * The vault's one authenticated encryption: AES-256-GCM with a random 12-byte IV per value and a 16-byte tag, under a
 * key derived with HKDF-SHA256 from the 32-byte vault key and a label naming its one purpose (so no derived key can
 * stand in for another). The associated data binds a ciphertext to where it belongs (its row, its merchant account):
 * copied anywhere else it no longer opens. Nothing here logs, and no error message carries a value or a key.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { randomBytes } from './random-pool';

export const vaultKeyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;

export interface Sealed {
  readonly ciphertext: Buffer;
  readonly iv: Buffer;
  readonly tag: Buffer;
}

/** A key for one purpose, derived from the vault key under `label` (e.g. `switchyard/card-vault/v1/pan-encryption`). */
export function deriveVaultKey(vaultKey: Buffer, label: string): KeyObject {
  if (!Buffer.isBuffer(vaultKey) || vaultKey.length !== vaultKeyBytes)
    throw new RangeError(`the vault key must be ${vaultKeyBytes} bytes`);
  return createSecretKey(Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), label, vaultKeyBytes)));
}

/** The associated data of a value: its parts as JSON, unambiguous whatever they contain. */
export const associatedData = (...parts: readonly string[]): Buffer => Buffer.from(JSON.stringify(parts), 'utf8');

/**
 * The keys a stored gift card was sealed under before the gift cards service had a key of its own: the two the gift
 * card vault derived from the vault root (its labels). The vault hands over these, never the root itself.
 */
export interface GiftCardLegacyKeys {
  readonly secret: Buffer;
  readonly responses: Buffer;
}

export const giftCardVaultLabels = {
  secret: 'switchyard/gift-card-vault/v1/secret-encryption',
  responses: 'switchyard/gift-card-vault/v1/response-sealing',
} as const;

/** The gift card vault's two keys derived from a vault root (what `new VaultCipher(root, label)` would use). */
export function giftCardLegacyKeysOf(root: Buffer): GiftCardLegacyKeys {
  return {
    secret: deriveVaultKey(root, giftCardVaultLabels.secret).export(),
    responses: deriveVaultKey(root, giftCardVaultLabels.responses).export(),
  };
}

/** Marks a key given already derived (`VaultCipher.fromDerivedKey`). */
const DERIVED: unique symbol = Symbol('derived');

export class VaultCipher {
  // ES private field: the key stays out of util.inspect / console.log.
  readonly #key: KeyObject;

  constructor(vaultKey: Buffer, label: string | typeof DERIVED) {
    if (label !== DERIVED) this.#key = deriveVaultKey(vaultKey, label);
    else if (vaultKey.length === vaultKeyBytes) this.#key = createSecretKey(Buffer.from(vaultKey));
    else throw new RangeError(`a derived key must be ${vaultKeyBytes} bytes`);
  }

  /** A cipher under a key already derived for its purpose (`giftCardLegacyKeysOf`). */
  static fromDerivedKey(key: Buffer): VaultCipher {
    return new VaultCipher(key, DERIVED);
  }

  seal(plaintext: string, aad: Buffer): Sealed {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: tagBytes });
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, iv, tag: cipher.getAuthTag() };
  }

  /** The plaintext; throws (without it) when the value fails authentication: altered, moved, or sealed under another key. */
  open(sealed: Sealed, aad: Buffer): string {
    if (sealed.iv.length !== ivBytes || sealed.tag.length !== tagBytes) throw new Error('malformed iv or tag');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.iv, { authTagLength: tagBytes });
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  }

  /** One opaque string (base64url of iv, tag, ciphertext) for a value kept outside a vault table. */
  sealToText(plaintext: string, aad: Buffer): string {
    const sealed = this.seal(plaintext, aad);
    return Buffer.concat([sealed.iv, sealed.tag, sealed.ciphertext]).toString('base64url');
  }

  openText(text: string, aad: Buffer): string {
    const bytes = Buffer.from(text, 'base64url');
    return this.open(
      {
        iv: bytes.subarray(0, ivBytes),
        tag: bytes.subarray(ivBytes, ivBytes + tagBytes),
        ciphertext: bytes.subarray(ivBytes + tagBytes),
      },
      aad,
    );
  }
}
