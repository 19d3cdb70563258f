/** The buyers slice as stored payment methods and transactions see it: who a request names, and how a buyer is shown. */
import type { Buyers } from '../buyers/buyers.slice';
import { toBuyer } from '../buyers/buyer-wire';
import type { BuyerDirectory } from './payment-methods.slice';

export const buyerDirectory = (buyers: Pick<Buyers, 'resolve' | 'find'>): BuyerDirectory => ({
  resolve: (merchantAccountId, ref, pointer) => buyers.resolve(merchantAccountId, ref, pointer),
  wire: (merchantAccountId, buyerId) => {
    const buyer = buyers.find(merchantAccountId, buyerId);
    return buyer ? toBuyer(buyer) : null;
  },
});
