/**
 * 32-byte keys that a service keeps for data it encrypts at rest (the card vault's `vault.key`, the webhook
 * secrets' `webhooks.key`): a configured value when the operator sets one, else a key file in DATA_DIR created on
 * first use. Nothing here logs, and no error message carries a key.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '@switchyard/eventstore';

export const keyBytes = 32;

export interface LoadOrCreateKeyOptions {
  /** The configured key (the setting's value): base64 or base64url of exactly 32 bytes. Wins over any key file. */
  readonly configured?: string;
  /** Where the key file lives; absent (in-memory storage, tests): a random key that lives as long as the process. */
  readonly dataDir?: string;
  /** The key file's name in `dataDir`, e.g. `vault.key`. */
  readonly fileName: string;
  /** The setting that configures the key, named in the error about a malformed configured key (e.g. `VAULT_KEY`). */
  readonly settingName: string;
}

/**
 * The key: `configured` when given; otherwise `<dataDir>/<fileName>`, created on first use (32 random bytes,
 * base64, mode 0600) and reused after; otherwise a random key.
 */
export function loadOrCreateKey(options: LoadOrCreateKeyOptions): Buffer {
  if (options.configured !== undefined) {
    const key = decodeKey(options.configured);
    if (!key) {
      throw new Error(
        `${options.settingName} must be base64 or base64url of exactly ${keyBytes} bytes (44 characters with \`=\`, or 43 without), e.g. from \`openssl rand -base64 32\``,
      );
    }
    return key;
  }
  if (options.dataDir !== undefined) return keyFile(path.join(options.dataDir, options.fileName));
  return randomBytes(keyBytes);
}

/** Base64 or base64url of exactly 32 bytes (padding optional); null for anything else. */
export function decodeKey(text: string): Buffer | null {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return null;
  const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === keyBytes ? key : null;
}

/**
 * Reads the key file or creates it. Creation is race-safe without a partial file ever being visible: the key goes to a
 * private temporary file opened with `wx`, which is then hard-linked to the final name; link() never replaces an
 * existing file, so when another process got there first (EEXIST) its key is read and used.
 */
function keyFile(file: string): Buffer {
  const existing = readKeyFile(file);
  if (existing) {
    narrowKeyFile(file);
    return existing;
  }
  ensurePrivateDirectory(path.dirname(file));
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    fs.writeFileSync(fd, `${randomBytes(keyBytes).toString('base64')}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  const key = readKeyFile(file);
  if (!key) throw new Error(`key file ${file} disappeared while being created`);
  return key;
}

/** A key file an older version (or a copy) left wider becomes 0600; one on a read-only mount is left as it is. */
function narrowKeyFile(file: string): void {
  if ((fs.statSync(file).mode & 0o777) === PRIVATE_FILE_MODE) return;
  try {
    fs.chmodSync(file, PRIVATE_FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EROFS') throw error;
    process.emitWarning(`key file ${file} is readable by others and cannot be narrowed (${code})`, {
      code: 'SWITCHYARD_KEY_FILE_MODE',
    });
  }
}

/**
 * The key in `file`; null when there is no file. A file that is not a key stops: replacing it would orphan everything
 * encrypted under it.
 */
function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = decodeKey(text.trim());
  if (!key)
    throw new Error(
      `key file ${file} does not hold base64 of exactly ${keyBytes} bytes; restore it (what was encrypted under it cannot be read without it)`,
    );
  return key;
}
