/**
 * `vault status | rewrap | rotate-key`: the key-encryption key of the card vault (docs/vault.md). They open the
 * vault service's local database (`vault.db`; moved there from the transactions service's first, if the server has
 * not started since the move) directly, like the identity commands, so they work with the server running (a data
 * key's bytes never change, only their wrapping) or stopped.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from '@switchyard/config';
import { PRIVATE_FILE_MODE } from '@switchyard/eventstore';
import { openServiceStorage } from '@switchyard/readmodel';
import {
  CardVault,
  kekId,
  loadKeyRing,
  openVaultKeys,
  openVaultStorage,
  RETIRED_KEYS_FILE,
  type KeyRing,
} from '@switchyard/vault';

export interface VaultStatus {
  readonly active_key_id: string;
  readonly retired_key_ids: string[];
  /** Data keys (and the root) per key-encryption key id. */
  readonly data_keys_by_key_id: Record<string, number>;
  /** Card rows still in the format from before envelope encryption (`vault rewrap` moves them). */
  readonly legacy_card_rows: number;
}

export interface RewrapOutcome extends VaultStatus {
  readonly rewrapped: number;
  readonly legacy_card_rows_migrated: number;
}

const ringOf = (settings: Settings): KeyRing =>
  loadKeyRing({
    ...(settings.VAULT_KEY ? { configured: settings.VAULT_KEY } : {}),
    ...(settings.VAULT_RETIRED_KEYS ? { retired: settings.VAULT_RETIRED_KEYS } : {}),
    dataDir: settings.dataDir,
  });

async function withVault<T>(
  settings: Settings,
  action: (vault: { keys: ReturnType<typeof openVaultKeys>; cards: CardVault; ring: KeyRing }) => T,
): Promise<T> {
  const ring = ringOf(settings);
  // With EventStoreDB the vault's old streams are in the transactions service's store: read from there if they move now.
  const transactions = settings.EVENTSTORE_URL
    ? openServiceStorage('transactions', { dataDir: settings.dataDir, eventStoreUrl: settings.EVENTSTORE_URL })
    : null;
  const storage = await openVaultStorage({
    dataDir: settings.dataDir,
    keyRing: ring,
    ...(transactions ? { transactionEvents: transactions.store } : {}),
  }).finally(() => transactions?.close());
  try {
    const keys = openVaultKeys(storage.db, ring);
    return action({ keys, cards: new CardVault(storage.db, { keys }), ring });
  } finally {
    await storage.close();
  }
}

const statusOf = (vault: { keys: ReturnType<typeof openVaultKeys>; cards: CardVault; ring: KeyRing }): VaultStatus => ({
  active_key_id: vault.ring.active.id,
  retired_key_ids: vault.ring.retired.map((key) => key.id),
  data_keys_by_key_id: vault.keys.countsByKek(),
  legacy_card_rows: vault.cards.legacyRowCount(),
});

export const vaultStatus = (settings: Settings): Promise<VaultStatus> => withVault(settings, statusOf);

/** Every data key under the active key, and every legacy card row under a data key of its own. Safe to run again. */
export const vaultRewrap = (settings: Settings): Promise<RewrapOutcome> =>
  withVault(settings, (vault) => {
    const { rewrapped } = vault.keys.rewrap();
    const migrated = vault.cards.migrateLegacyRows();
    return { ...statusOf(vault), rewrapped, legacy_card_rows_migrated: migrated };
  });

/**
 * The key file installation's rotation (no VAULT_KEY configured): a new `vault.key`, the old one appended to
 * `vault.retired-keys`, then a rewrap. A server running meanwhile keeps wrapping new data keys under the old key
 * until it restarts: run `vault rewrap` once more after the restart, then the old key can be removed from the file.
 */
export async function vaultRotateKey(
  settings: Settings,
): Promise<RewrapOutcome & { readonly previous_key_id: string }> {
  if (settings.VAULT_KEY) {
    throw new Error(
      'VAULT_KEY is configured: put the new key in VAULT_KEY and the old one in VAULT_RETIRED_KEYS, restart, then run `vault rewrap` (docs/vault.md)',
    );
  }
  const keyFile = path.join(settings.dataDir, 'vault.key');
  if (!fs.existsSync(keyFile)) throw new Error(`${keyFile} does not exist: there is no key to rotate`);
  const previous = ringOf(settings).active;
  const next = randomBytes(32);
  const retiredFile = path.join(settings.dataDir, RETIRED_KEYS_FILE);
  // The old key goes to the retired file first, so that no moment exists where it is in neither file.
  fs.appendFileSync(
    retiredFile,
    `# retired ${new Date().toISOString()} (key id ${previous.id})\n${previous.key.toString('base64')}\n`,
    { mode: 0o600 },
  );
  fs.chmodSync(retiredFile, PRIVATE_FILE_MODE); // the mode above applies only on creation, and through the umask
  const temporary = `${keyFile}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${next.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  fs.chmodSync(temporary, PRIVATE_FILE_MODE);
  fs.renameSync(temporary, keyFile);
  const outcome = await vaultRewrap(settings);
  if (outcome.active_key_id !== kekId(next)) throw new Error('the new vault key was not picked up');
  return { ...outcome, previous_key_id: previous.id };
}
