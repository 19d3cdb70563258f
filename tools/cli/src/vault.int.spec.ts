/**
 * `vault rotate-key`, `vault rewrap`, `vault status` as an operator runs them (a separate process on the server's
 * data directory): after a rotation and a rewrap the old key can go, every card still opens, and fingerprints stay.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { startEmbedded } from '@switchyard/standalone';
import { runCli } from '@switchyard/testing';
import pino from 'pino';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const withServer = async <T>(
  dataDir: string,
  env: Record<string, string>,
  action: (service: Awaited<ReturnType<typeof startEmbedded>>) => T | Promise<T>,
): Promise<T> => {
  const service = await startEmbedded(
    // The spec stores and reads cards through `service.vault`: the vault in this thread.
    loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', MOCK_CARD_PORT: '0', VAULT_THREAD: 'false', ...env }),
    pino({ level: 'silent' }),
  );
  try {
    return await action(service);
  } finally {
    await service.stop();
  }
};

it('rotates the key file: the old key is retired, every data key re-wrapped, then the old key can be removed', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-vault-cli-'));
  dirs.push(dataDir);
  const card = { number: '4111111111111111', expirationDate: '12/30' };
  const stored = await withServer(dataDir, {}, (service) => [
    service.vault.slices.vault.store('default', card),
    service.vault.slices.vault.store(
      'default',
      { number: '5555555555554444', expirationDate: '01/31' },
      { buyerId: 'buyer-1' },
    ),
  ]);
  const before = JSON.parse((await runCli({ DATA_DIR: dataDir }, 'vault', 'status')).stdout);
  expect(before).toMatchObject({ retired_key_ids: [], legacy_card_rows: 0 });
  expect(before.data_keys_by_key_id).toEqual({ [before.active_key_id]: 3 }); // the root, one card's key, the buyer's key

  const rotated = await runCli({ DATA_DIR: dataDir }, 'vault', 'rotate-key');
  expect(rotated.code).toBe(0);
  const outcome = JSON.parse(rotated.stdout);
  expect(outcome).toMatchObject({
    previous_key_id: before.active_key_id,
    rewrapped: 3,
    retired_key_ids: [before.active_key_id],
  });
  expect(outcome.active_key_id).not.toBe(before.active_key_id);
  expect(outcome.data_keys_by_key_id).toEqual({ [outcome.active_key_id]: 3 });
  expect(fs.statSync(path.join(dataDir, 'vault.retired-keys')).mode & 0o777).toBe(0o600);
  expect(JSON.parse((await runCli({ DATA_DIR: dataDir }, 'vault', 'rewrap')).stdout)).toMatchObject({ rewrapped: 0 });

  // The old key is no longer needed: gone from the retired file, every card still opens and fingerprints alike.
  fs.rmSync(path.join(dataDir, 'vault.retired-keys'));
  await withServer(dataDir, {}, (service) => {
    expect(service.vault.slices.vault.reveal('default', stored[0]!.id)).toEqual(card);
    expect(service.vault.slices.vault.reveal('default', stored[1]!.id)?.number).toBe('5555555555554444');
    expect(service.vault.slices.vault.store('default', card).fingerprint).toBe(stored[0]!.fingerprint);
  });

  // With VAULT_KEY configured the file rotation is refused with what to do instead.
  const refused = await runCli(
    { DATA_DIR: dataDir, VAULT_KEY: Buffer.alloc(32, 3).toString('base64') },
    'vault',
    'rotate-key',
  );
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/VAULT_RETIRED_KEYS/);
});
