/** `webhooks key-status | rotate-key | reseal` on a data directory whose webhooks service is running. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { runCli } from '@switchyard/testing';
import { loadWebhooksKeyRing, WebhookSubscriptions } from '@switchyard/webhooks';

describe('webhooks key rotation from the CLI', { timeout: 120_000 }, () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-webhooks-keys-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const cli = (env: Record<string, string>, ...args: string[]) =>
    runCli({ DATA_DIR: dataDir, ...env }, 'webhooks', ...args);

  it('rotates the key file while the service runs: everything is re-sealed, the service keeps opening it and seals under the new key', async () => {
    const storage = openServiceStorage('webhooks', { dataDir });
    const host = new ServiceHost({ store: storage.store, db: storage.db, pollIntervalMs: 50 });
    const keys = () => loadWebhooksKeyRing({ dataDir });
    const running = new WebhookSubscriptions(host.context, { key: keys(), reloadKeys: keys, allowPrivateUrls: false });
    host.add(running);
    await host.catchUpAndFollow();
    const caller = { merchant_account_id: 'shop-a' };
    try {
      const created = await running.create({
        ...caller,
        body: { url: 'https://hooks.example.com/in', basic_auth: { username: 'u', password: 'p-cli-rotate' } },
      });
      const secret = await running.createSecret({ ...caller, subscription_id: created.id });
      const before = JSON.parse((await cli({}, 'key-status')).stdout);
      expect(before).toEqual({
        active_key_id: expect.stringMatching(/^[0-9a-f]{16}$/),
        values_by_key_id: { [before.active_key_id]: 2 },
        deleted_subscriptions_skipped: 0,
        retired_key_ids: [],
      });

      const refused = await cli({ WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }, 'rotate-key');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/WEBHOOK_SECRETS_KEY is configured/);

      const rotated = await cli({}, 'rotate-key');
      expect(rotated.code).toBe(0);
      const outcome = JSON.parse(rotated.stdout);
      expect(outcome).toMatchObject({
        previous_key_id: before.active_key_id,
        retired_key_ids: [before.active_key_id],
        resealed: 2,
        subscriptions: 1,
      });
      expect(outcome.values_by_key_id).toEqual({ [outcome.active_key_id]: 2 });
      expect((fs.statSync(path.join(dataDir, 'webhooks.retired-keys')).mode & 0o777).toString(8)).toBe('600');

      // The running service reads the re-sealed values (its read model follows the log), under a key it had not loaded.
      await vi.waitFor(
        () => expect(running.activeSecrets(created.id)).toEqual([{ id: secret.id, secret: secret.secret }]),
        { timeout: 5_000 },
      );
      expect(running.find(created.id)?.basicAuth?.password).toBe('p-cli-rotate');
      await running.createSecret({ ...caller, subscription_id: created.id });
      expect(JSON.parse((await cli({}, 'key-status')).stdout).values_by_key_id).toEqual({ [outcome.active_key_id]: 3 });

      // With the old key's lines gone, a fresh start opens everything.
      fs.rmSync(path.join(dataDir, 'webhooks.retired-keys'));
      const reseal = await cli({}, 'reseal');
      expect(JSON.parse(reseal.stdout)).toMatchObject({ resealed: 0, retired_key_ids: [] });
    } finally {
      await host.stop();
      await storage.close();
    }
  });
});
