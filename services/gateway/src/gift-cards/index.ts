/** The gateway's gift card endpoints. */
export { GiftCardsController } from './gift-cards.controller';
export { BuyerGiftCardsController } from './buyer-gift-cards.controller';
