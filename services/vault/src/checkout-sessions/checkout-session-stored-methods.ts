/**
 * A stored payment method chosen in the buyer's browser for a checkout session, with its security code typed again
 * (`{"method":"id","id":…,"security_code":…}`): how the session shows it, and how its code is sealed — for this
 * session only, since the card outlives the session and the code must not.
 */
import { ApiError } from '@switchyard/api';
import type { CheckoutSessionCard } from './checkout-session';

/** A stored payment method as a session shows it (the payment methods slice's view). */
export interface StoredPaymentMethodShown {
  readonly id: string;
  readonly scheme: string | null;
  readonly bin: string;
  readonly last4: string;
  readonly expirationDate: string;
  readonly fingerprint: string;
  readonly cardType: string | null;
  readonly cardIssuerName: string | null;
  readonly country: string | null;
}

/** The payment methods slice: a method the account has and may pay with, else the 400 naming `/payment_method/id`. */
export interface StoredPaymentMethodLookup {
  usable(merchantAccountId: string, id: string): StoredPaymentMethodShown;
}

/** What `CardVault.sealWithCard` binds a stored method's code to: the card, and this one session. */
export const storedMethodCodePurpose = (sessionId: string): string => `security_code/checkout-session/${sessionId}`;

export function storedMethodCard(stored: StoredPaymentMethodShown): CheckoutSessionCard {
  return {
    cardId: stored.id,
    scheme: stored.scheme,
    bin: stored.bin,
    last4: stored.last4,
    expirationDate: stored.expirationDate,
    fingerprint: stored.fingerprint,
    cardType: stored.cardType,
    issuerCountry: stored.country,
    issuerName: stored.cardIssuerName,
    storedPaymentMethod: true,
  };
}

/** The method is listed but its card is no longer in the vault (deleted meanwhile): as if it did not exist. */
export const paymentMethodGone = (): ApiError =>
  ApiError.badRequest('The payment method does not exist', [
    {
      location: 'body',
      pointer: '/payment_method/id',
      message: 'no stored payment method with this id',
      type: 'payment_method_not_found',
    },
  ]);
