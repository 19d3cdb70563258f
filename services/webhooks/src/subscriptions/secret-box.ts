/**
 * Encryption at rest of what the webhooks service must be able to read back but must never keep in clear: signing
 * secrets and basic-auth passwords. AES-256-GCM, a random 96-bit IV per value, the owner (subscription, secret id,
 * purpose) as associated data so a value copied to another row does not open, under a key derived with HKDF from
 * the webhooks key (`WebhooksKeyRing`: WEBHOOK_SECRETS_KEY or `DATA_DIR/webhooks.key`, and retired keys).
 *
 * Sealed form: `v2.<key id>.<iv>.<ciphertext>.<tag>`, each part base64url but the key id (hex). Values sealed before
 * key ids (`v1.<iv>.<ciphertext>.<tag>`) open under whichever key of the ring opens them. Nothing here logs; no
 * error carries a value.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { keyBytes, loadOrCreateKey } from '@switchyard/service';
import type { Sealed } from './webhook-subscription';
import type { WebhooksKeyRing } from './webhooks-keys';
import { webhooksKeyRing } from './webhooks-keys';

const version = 'v2';
const legacyVersion = 'v1';
const ivBytes = 12;
const tagBytes = 16;
/** A ring is read again from its files at most this often when a value names a key it does not have. */
const reloadIntervalMs = 1_000;

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

interface DerivedKey {
  readonly id: string;
  readonly key: KeyObject;
}

const derive = (id: string, key: Buffer): DerivedKey => ({
  id,
  // The derivation has kept its v1 label: a key id changes nothing in how a key is derived.
  key: createSecretKey(
    Buffer.from(
      hkdfSync('sha256', key, Buffer.alloc(0), `switchyard/webhooks/${legacyVersion}/secrets-at-rest`, keyBytes),
    ),
  ),
});

export class SecretBox {
  // ES private fields: key material stays out of util.inspect / console.log.
  #active!: DerivedKey;
  #byId = new Map<string, DerivedKey>();
  readonly #reload: (() => WebhooksKeyRing) | undefined;
  #reloadedAt = 0;

  /**
   * `keys`: one key (tests) or a ring. `reload`: reads the ring again (its key files) when a value names a key it does
   * not have — a rotation of the key file by `cli webhooks rotate-key` while this process runs.
   */
  constructor(keys: Buffer | WebhooksKeyRing, options: { reload?: () => WebhooksKeyRing } = {}) {
    if (Buffer.isBuffer(keys) && keys.length !== keyBytes)
      throw new RangeError(`the webhooks key must be ${keyBytes} bytes`);
    this.#use(Buffer.isBuffer(keys) ? webhooksKeyRing(keys) : keys);
    this.#reload = options.reload;
  }

  /** The id of the key new values are sealed under. */
  get activeKeyId(): string {
    return this.#active.id;
  }

  /** Encrypts `clear`, bound to `owner` (e.g. `['secret', subscriptionId, secretId]`), under the active key. */
  seal(clear: string, owner: readonly string[]): Sealed {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#active.key, iv, { authTagLength: tagBytes });
    cipher.setAAD(additionalData(version, owner));
    const ciphertext = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return [
      version,
      this.#active.id,
      ...[iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url')),
    ].join('.');
  }

  /** The clear value; throws (without the value) when it was altered, moved to another owner, or sealed under a key it lacks. */
  open(sealed: Sealed, owner: readonly string[]): string {
    const parts = sealed.split('.');
    if (parts[0] === legacyVersion && parts.length === 4) {
      for (const key of this.#byId.values()) {
        const clear = attempt(key, legacyVersion, parts.slice(1), owner);
        if (clear !== undefined) return clear;
      }
      throw failure(owner);
    }
    if (parts[0] !== version || parts.length !== 5) throw failure(owner, new Error('malformed sealed value'));
    const keyId = parts[1]!;
    let key = this.#byId.get(keyId);
    if (!key && this.#reload && Date.now() - this.#reloadedAt >= reloadIntervalMs) {
      this.#reloadedAt = Date.now();
      this.#use(this.#reload());
      key = this.#byId.get(keyId);
    }
    if (!key) {
      throw new Error(
        `a webhook ${owner[0] ?? 'value'} of ${owner[1] ?? 'unknown'} is sealed under webhooks key ${keyId}, which is neither WEBHOOK_SECRETS_KEY nor a retired key: configure it in WEBHOOK_SECRETS_RETIRED_KEYS`,
      );
    }
    const clear = attempt(key, version, parts.slice(2), owner);
    if (clear === undefined) throw failure(owner);
    return clear;
  }

  /** The key a value is sealed under; null for a value sealed before key ids (v1). */
  keyIdOf(sealed: Sealed): string | null {
    const parts = sealed.split('.');
    return parts[0] === version && parts.length === 5 ? parts[1]! : null;
  }

  /** Sealed under the active key (a `reseal` leaves it as it is). */
  isCurrent(sealed: Sealed): boolean {
    return this.keyIdOf(sealed) === this.#active.id;
  }

  #use(ring: WebhooksKeyRing): void {
    this.#active = derive(ring.active.id, ring.active.key);
    this.#byId = new Map(
      [this.#active, ...ring.retired.map((retired) => derive(retired.id, retired.key))].map((key) => [key.id, key]),
    );
  }
}

/** The clear value, or undefined when the key does not open it (wrong key, altered, other owner). */
function attempt(
  key: DerivedKey,
  sealedVersion: string,
  [iv, ciphertext, authTag]: string[],
  owner: readonly string[],
): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv!, 'base64url'), {
      authTagLength: tagBytes,
    });
    decipher.setAAD(additionalData(sealedVersion, owner));
    decipher.setAuthTag(Buffer.from(authTag!, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext!, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

const failure = (owner: readonly string[], cause?: unknown): Error =>
  new Error(
    `a webhook ${owner[0] ?? 'value'} of ${owner[1] ?? 'unknown'} failed decryption: altered, moved, or encrypted under another webhooks key`,
    cause ? { cause } : undefined,
  );

function additionalData(sealedVersion: string, owner: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify([`webhooks/${sealedVersion}`, ...owner]), 'utf8');
}
