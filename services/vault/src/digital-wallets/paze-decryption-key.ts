/**
 * The merchant's Paze decryption key: read from the PKCS#8 PEM it registers (EC P-256 or RSA ≥ 2048 bits), known
 * by its public key's RFC 7638 thumbprint, and kept only sealed (AES-256-GCM, `VaultCipher`) under a key of its
 * own, bound to its wallet and merchant account. The clear key lives in memory only while a request uses it.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { associatedData, VaultCipher } from '../vault/vault-cipher';

export const PAZE_KEY_SEALING_LABEL = 'switchyard/digital-wallets/v1/paze-decryption-key';

/** An RSA 16384-bit PKCS#8 PEM is ~12.5k characters; anything longer is not a key we take. */
const MAX_PEM_LENGTH = 16_384;
const PKCS8_PEM = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

/** Why a submitted key is refused; the message never holds key material. */
export class InvalidDecryptionKeyError extends Error {
  override readonly name = 'InvalidDecryptionKeyError';
}

export interface PazeDecryptionKey {
  readonly key: KeyObject;
  /** RFC 7638 SHA-256 thumbprint of the public key, base64url. */
  readonly keyId: string;
  /** The key re-exported as PKCS#8 PEM (what gets sealed). */
  readonly pem: string;
}

/** Reads a submitted key; throws {@link InvalidDecryptionKeyError} saying why it is refused. */
export async function readPazeDecryptionKey(submitted: string): Promise<PazeDecryptionKey> {
  const pem = submitted.trim();
  if (pem.length > MAX_PEM_LENGTH || !PKCS8_PEM.test(pem)) {
    throw new InvalidDecryptionKeyError('must be an unencrypted PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // OpenSSL's reason is not passed on: it could quote the input.
    throw new InvalidDecryptionKeyError('is not a readable PKCS#8 private key');
  }
  const details = key.asymmetricKeyDetails ?? {};
  const acceptable =
    (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') ||
    (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048);
  if (!acceptable) throw new InvalidDecryptionKeyError('must be an EC P-256 key or an RSA key of 2048 bits or more');
  return { key, keyId: await publicKeyThumbprint(key), pem: key.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

export async function publicKeyThumbprint(privateKey: KeyObject): Promise<string> {
  return calculateJwkThumbprint(createPublicKey(privateKey).export({ format: 'jwk' }) as JWK, 'sha256');
}

/** Seals and opens decryption keys, each bound to its wallet and merchant account. */
export class PazeKeySealer {
  readonly #cipher: VaultCipher;

  constructor(sealingKey: Buffer) {
    this.#cipher = new VaultCipher(sealingKey, PAZE_KEY_SEALING_LABEL);
  }

  seal(walletId: string, merchantAccountId: string, pem: string): string {
    return this.#cipher.sealToText(pem, associatedData(walletId, merchantAccountId));
  }

  /** Throws when the text was sealed for another wallet or account, under another key, or altered. */
  open(walletId: string, merchantAccountId: string, sealed: string): KeyObject {
    const pem = this.#cipher.openText(sealed, associatedData(walletId, merchantAccountId));
    return createPrivateKey({ key: pem, format: 'pem' });
  }
}
