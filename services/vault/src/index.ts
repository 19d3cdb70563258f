/**
 * The vault service (issue 19): the card vault and its keys, buyers, their stored payment methods, network tokens,
 * the account updater, checkout sessions and digital wallets (Paze's decryption). The only code that holds the
 * vault's keys and cipher.
 */
export { CardVault, loadVaultKey, type StoredCard } from './vault/card-vault';
export {
  associatedData,
  giftCardLegacyKeysOf,
  giftCardVaultLabels,
  VaultCipher,
  type GiftCardLegacyKeys,
} from './vault/vault-cipher';
export {
  kekId,
  keyRing,
  loadKeyRing,
  openVaultKeys,
  RETIRED_KEYS_FILE,
  VaultKeys,
  type KeyRing,
} from './vault/vault-keys';
export { Buyers } from './buyers/buyers.slice';
export { buyerDirectory } from './payment-methods/buyer-directory';
export { PaymentMethods, type BuyerDirectory } from './payment-methods/payment-methods.slice';
export { NetworkTokens, type NetworkTokenMerchantAccounts } from './network-tokens/network-tokens.slice';
export { AccountUpdater } from './account-updater/account-updater.slice';
export { accountUpdaterServiceFor } from './account-updater/account-updater-service';
export { CheckoutSessions } from './checkout-sessions/checkout-sessions.slice';
export { DigitalWallets } from './digital-wallets/digital-wallets.slice';
export type { DigitalWalletView } from './digital-wallets/digital-wallets.read-model';
export { decryptPazePayload, PazeError, pazeEligibility } from './digital-wallets/paze';
export { PazePayments, type PazeConnection } from './digital-wallets/paze-payments';
export {
  loadPazeSigningKeys,
  pazeDevelopmentSigningKeys,
  type PazeSigningKeys,
} from './digital-wallets/paze-signing-keys';
export { VaultSlices, type VaultSlicesOptions } from './vault-slices';
export { InProcessVault, type VaultCardAliases, type VaultCardSummary, type VaultStoredCard } from './in-process-vault';
export { vaultOptionsFrom } from './vault-options';
export {
  CardAliasError,
  CardAliases,
  DEFAULT_CARD_ALIAS_TTL_MS,
  type CardAliasRefusal,
  type IssuedCardAliases,
} from './forwarder/card-aliases';
export { ForwarderRefusedError, OutboundForwarder, type ForwarderRefusal } from './forwarder/outbound-forwarder';
export { VaultService, type TransactionsVaultKeys, type VaultServiceOptions } from './vault-service';
export { openVaultStorage, VAULT_MIGRATION, type VaultStorage } from './vault-storage';
export { vaultRelay } from './vault-relay';
export { startVaultThread, type VaultThread } from './vault-thread-host';
