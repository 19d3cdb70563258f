/**
 * `webhooks key-status | reseal | rotate-key`: the webhooks key that seals signing secrets and basic-auth passwords
 * at rest, rotated as the vault's key is (docs/operations.md, key rotation). They open the webhooks service's storage
 * directly (its event store: a re-seal is an event per subscription, which a running server's read model picks up
 * within its poll interval), with the server running or stopped.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from '@switchyard/config';
import { openServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import {
  loadWebhooksKeyRing,
  webhooksKeyId,
  WEBHOOKS_RETIRED_KEYS_FILE,
  WebhookSubscriptions,
  type WebhooksKeyRing,
  type WebhooksKeyStatus,
} from '@switchyard/webhooks';

const ringOf = (settings: Settings): WebhooksKeyRing =>
  loadWebhooksKeyRing({
    configured: settings.WEBHOOK_SECRETS_KEY,
    retired: settings.WEBHOOK_SECRETS_RETIRED_KEYS,
    dataDir: settings.dataDir,
  });

async function withSubscriptions<T>(
  settings: Settings,
  action: (subscriptions: WebhookSubscriptions, ring: WebhooksKeyRing) => Promise<T>,
): Promise<T> {
  const ring = ringOf(settings);
  const storage = openServiceStorage('webhooks', { dataDir: settings.dataDir, eventStoreUrl: settings.EVENTSTORE_URL });
  try {
    const host = new ServiceHost({ store: storage.store, db: storage.db });
    // URLs are not checked by a re-seal; the server's own rule applies to what clients send.
    const subscriptions = new WebhookSubscriptions(host.context, { key: ring, allowPrivateUrls: true });
    host.add(subscriptions);
    await host.catchUp();
    return await action(subscriptions, ring);
  } finally {
    await storage.close();
  }
}

type Status = WebhooksKeyStatus & { readonly retired_key_ids: string[] };

const withRetired = (status: WebhooksKeyStatus, ring: WebhooksKeyRing): Status => ({
  ...status,
  retired_key_ids: ring.retired.map((key) => key.id),
});

export const webhooksKeyStatus = (settings: Settings): Promise<Status> =>
  withSubscriptions(settings, async (subscriptions, ring) => withRetired(subscriptions.keyStatus(), ring));

/** Every value not under the active key sealed again under it. Safe to repeat. */
export const webhooksReseal = (
  settings: Settings,
): Promise<Status & { readonly resealed: number; readonly subscriptions: number }> =>
  withSubscriptions(settings, async (subscriptions, ring) => {
    const outcome = await subscriptions.resealAll();
    return { ...outcome, retired_key_ids: ring.retired.map((key) => key.id) };
  });

/**
 * Key file installations (no WEBHOOK_SECRETS_KEY): a new `webhooks.key`, the old one appended to
 * `webhooks.retired-keys`, then a re-seal. A running server reads both files again when it meets a value under the
 * new key, and from then on seals under it too; run `webhooks key-status` afterwards (and `reseal` again if a value
 * is still under the old key), then the old key's lines can be deleted.
 */
export async function webhooksRotateKey(
  settings: Settings,
): Promise<Status & { readonly resealed: number; readonly previous_key_id: string }> {
  if (settings.WEBHOOK_SECRETS_KEY) {
    throw new Error(
      'WEBHOOK_SECRETS_KEY is configured: put the new key in WEBHOOK_SECRETS_KEY and the old one in WEBHOOK_SECRETS_RETIRED_KEYS, restart webhooks, then run `webhooks reseal` (docs/operations.md)',
    );
  }
  const keyFile = path.join(settings.dataDir, 'webhooks.key');
  if (!fs.existsSync(keyFile)) throw new Error(`${keyFile} does not exist: there is no key to rotate`);
  const previous = ringOf(settings).active;
  const next = randomBytes(32);
  // The old key goes to the retired file first, so that no moment exists where it is in neither file.
  fs.appendFileSync(
    path.join(settings.dataDir, WEBHOOKS_RETIRED_KEYS_FILE),
    `# retired ${new Date().toISOString()} (key id ${previous.id})\n${previous.key.toString('base64')}\n`,
    { mode: 0o600 },
  );
  const temporary = `${keyFile}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${next.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, keyFile);
  const outcome = await webhooksReseal(settings);
  if (outcome.active_key_id !== webhooksKeyId(next)) throw new Error('the new webhooks key was not picked up');
  return { ...outcome, previous_key_id: previous.id };
}
