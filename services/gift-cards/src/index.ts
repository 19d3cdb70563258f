export * from './gift-cards-service';
export * from './gift-cards-relay';
export * from './gift-cards-storage';
export type { GiftCardServiceDirectory } from './gift-cards/gift-cards.slice';
export type { GiftCardServiceRef } from './gift-cards/gift-card';
export { loadGiftCardsKey } from './vault/gift-cards-key';
export {
  giftCardConnectorFor,
  giftCardKeysOverRpc,
  giftCardServicesOverRpc,
  type GiftCardKeys,
  type GiftCardProviderSettings,
} from './gift-cards/gift-card-services-over-rpc';
