/**
 * The vault's settings, read in one place: its key-encryption keys (VAULT_KEY, VAULT_RETIRED_KEYS or
 * DATA_DIR/vault.key), the BIN data (BIN_DATA_FILE), Paze's signing keys, API provisioning of network tokens, how long a stored card waits
 * for a provider's vault token, and how long a card alias is valid. No other package reads these settings.
 */
import type { Settings } from '@switchyard/config';
import { loadBinData } from '@switchyard/bin-data';
import { connectorRegistry } from '@switchyard/connectors';
import { forwardHosts } from './forwarder/forward-hosts';
import { loadPazeSigningKeys } from './digital-wallets/paze-signing-keys';
import type { VaultSlicesOptions } from './vault-slices';
import { loadKeyRing } from './vault/vault-keys';

export function vaultOptionsFrom(
  settings: Settings,
): Required<
  Pick<
    VaultSlicesOptions,
    | 'keyRing'
    | 'binData'
    | 'pazeSigningKeys'
    | 'networkTokensApiProvisioning'
    | 'vaultTokenTimeoutMs'
    | 'cardAliasTtlMs'
    | 'forwardHosts'
  >
> {
  return {
    // Where the forwarder may send a card, whatever its caller declares.
    forwardHosts: forwardHosts({
      configured: settings.VAULT_FORWARD_HOSTS,
      settingsUrls: [settings.MOCK_CARD_URL, settings.THREE_DS_DIRECTORY_URL],
      definitions: connectorRegistry.list(),
    }),
    // Card summaries: scheme, card type, issuer country and name.
    binData: loadBinData(settings.BIN_DATA_FILE ? { file: settings.BIN_DATA_FILE } : {}),
    vaultTokenTimeoutMs: settings.VAULT_TOKEN_TIMEOUT_MS,
    cardAliasTtlMs: settings.CARD_ALIAS_TTL_MS,
    networkTokensApiProvisioning: settings.NETWORK_TOKENS_API_PROVISIONING ?? settings.NODE_ENV !== 'production',
    // Unset in production stops the start here: an unverified Paze payload could come from anyone.
    pazeSigningKeys: loadPazeSigningKeys(settings.PAZE_SIGNING_KEYS, settings.NODE_ENV),
    keyRing: loadKeyRing({
      ...(settings.VAULT_KEY ? { configured: settings.VAULT_KEY } : {}),
      ...(settings.VAULT_RETIRED_KEYS ? { retired: settings.VAULT_RETIRED_KEYS } : {}),
      dataDir: settings.dataDir,
    }),
  };
}
