export * from './transactions-service';
export * from './transactions-relay';
export { IdempotencyStore, requestFingerprint, type IdempotencyBinding } from './idempotency/idempotency-store';
export type { GiftCardSource } from './transactions/gift-card-payments';
export { PaymentServices } from './payment-services/payment-services.slice';
export { vaultDirectoryRpcHandlers, vaultOverRpc } from './vault-over-rpc';
