export * from './transactions-service';
export * from './transactions-relay';
export { IdempotencyStore, requestFingerprint } from './idempotency/idempotency-store';
export type { GiftCardSource } from './transactions/gift-card-payments';
export { PaymentServices } from './payment-services/payment-services.slice';
