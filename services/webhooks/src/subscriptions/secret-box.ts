/**
 * Encryption at rest of what the webhooks service must be able to read back but must never keep in clear: signing
 * secrets and basic-auth passwords. AES-256-GCM, a random 96-bit IV per value, the owner (subscription, secret id,
 * purpose) as associated data so a value copied to another row does not open, under a key derived with HKDF from
 * the webhooks key (`WEBHOOK_SECRETS_KEY` or `DATA_DIR/webhooks.key`, `loadWebhooksKey`).
 *
 * Sealed form: `v1.<iv>.<ciphertext>.<tag>`, each part base64url. Nothing here logs; no error carries a value.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { keyBytes, loadOrCreateKey } from '@switchyard/service';
import type { Sealed } from './webhook-subscription';

const version = 'v1';
const ivBytes = 12;
const tagBytes = 16;

/**
 * The webhooks key: `configured` (WEBHOOK_SECRETS_KEY) when given; otherwise `<dataDir>/webhooks.key`, created on
 * first use (mode 0600); otherwise a random key for the life of the process (tests, in-memory storage).
 */
export function loadWebhooksKey(options: { configured?: string | undefined; dataDir?: string }): Buffer {
  return loadOrCreateKey({
    ...(options.configured !== undefined ? { configured: options.configured } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    fileName: 'webhooks.key',
    settingName: 'WEBHOOK_SECRETS_KEY',
  });
}

export class SecretBox {
  // ES private field: key material stays out of util.inspect / console.log.
  readonly #key: KeyObject;

  constructor(key: Buffer) {
    if (!Buffer.isBuffer(key) || key.length !== keyBytes) throw new RangeError(`the webhooks key must be ${keyBytes} bytes`);
    this.#key = createSecretKey(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `switchyard/webhooks/${version}/secrets-at-rest`, keyBytes)));
  }

  /** Encrypts `clear`, bound to `owner` (e.g. `['secret', subscriptionId, secretId]`). */
  seal(clear: string, owner: readonly string[]): Sealed {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: tagBytes });
    cipher.setAAD(additionalData(owner));
    const ciphertext = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return [version, iv, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** The clear value; throws (without the value) when it was altered, moved to another owner, or sealed under another key. */
  open(sealed: Sealed, owner: readonly string[]): string {
    try {
      const [tag, iv, ciphertext, authTag, ...rest] = sealed.split('.');
      if (tag !== version || iv === undefined || ciphertext === undefined || authTag === undefined || rest.length > 0) throw new Error('malformed sealed value');
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'), { authTagLength: tagBytes });
      decipher.setAAD(additionalData(owner));
      decipher.setAuthTag(Buffer.from(authTag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new Error(`a webhook ${owner[0] ?? 'value'} of ${owner[1] ?? 'unknown'} failed decryption: altered, moved, or encrypted under another webhooks key`, { cause: error });
    }
  }
}

function additionalData(owner: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify([`webhooks/${version}`, ...owner]), 'utf8');
}
