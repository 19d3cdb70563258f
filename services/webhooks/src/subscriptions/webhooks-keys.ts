/**
 * The webhooks keys, as the vault's key-encryption keys (docs/vault.md): the active one seals every new signing secret
 * and basic-auth password; retired ones only open what was sealed under them, until `cli webhooks reseal` has sealed
 * everything again under the active key. Active: WEBHOOK_SECRETS_KEY, else `DATA_DIR/webhooks.key`; retired:
 * WEBHOOK_SECRETS_RETIRED_KEYS (comma separated) and the lines of `DATA_DIR/webhooks.retired-keys`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { decodeKey, keyBytes } from '@switchyard/service';
import { loadWebhooksKey } from './secret-box';

export interface WebhooksKey {
  /** The first 16 hex digits of the key's SHA-256: names the key in sealed values and in `webhooks key-status`. */
  readonly id: string;
  readonly key: Buffer;
}

export interface WebhooksKeyRing {
  readonly active: WebhooksKey;
  readonly retired: readonly WebhooksKey[];
}

export const WEBHOOKS_RETIRED_KEYS_FILE = 'webhooks.retired-keys';

export const webhooksKeyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

export function webhooksKeyRing(active: Buffer, retired: readonly Buffer[] = []): WebhooksKeyRing {
  if (active.length !== keyBytes || retired.some((key) => key.length !== keyBytes))
    throw new RangeError(`webhooks keys must be ${keyBytes} bytes`);
  const activeId = webhooksKeyId(active);
  const seen = new Set([activeId]);
  const others: WebhooksKey[] = [];
  for (const key of retired) {
    const id = webhooksKeyId(key);
    if (!seen.has(id)) others.push({ id, key });
    seen.add(id);
  }
  return { active: { id: activeId, key: active }, retired: others };
}

export interface WebhooksKeySettings {
  readonly configured?: string | undefined;
  readonly retired?: string | undefined;
  readonly dataDir?: string | undefined;
}

export function loadWebhooksKeyRing(settings: WebhooksKeySettings): WebhooksKeyRing {
  const active = loadWebhooksKey({
    configured: settings.configured,
    ...(settings.dataDir !== undefined ? { dataDir: settings.dataDir } : {}),
  });
  const texts = (settings.retired ?? '').split(',');
  if (settings.dataDir !== undefined) {
    const file = path.join(settings.dataDir, WEBHOOKS_RETIRED_KEYS_FILE);
    if (fs.existsSync(file)) texts.push(...fs.readFileSync(file, 'utf8').split('\n'));
  }
  const retired = texts
    .map((text) => text.trim())
    .filter((text) => text !== '' && !text.startsWith('#'))
    .map((text, index) => {
      const key = decodeKey(text);
      if (!key)
        throw new Error(
          `retired webhooks key #${index + 1} (WEBHOOK_SECRETS_RETIRED_KEYS or ${WEBHOOKS_RETIRED_KEYS_FILE}) must be base64 or base64url of exactly ${keyBytes} bytes`,
        );
      return key;
    });
  return webhooksKeyRing(active, retired);
}
