export * from './transactions-service';
export * from './transactions-relay';
export { loadVaultKey } from './vault/card-vault';
export { CardVault } from './vault/card-vault';
export { kekId, loadKeyRing, openVaultKeys, RETIRED_KEYS_FILE, type KeyRing } from './vault/vault-keys';
export { IdempotencyStore, requestFingerprint } from './idempotency/idempotency-store';
export type { GiftCardCredentialSource } from './transactions/gift-card-payments';
export { PaymentServices } from './payment-services/payment-services.slice';
