/** A checkout session as the wire shows it (CheckoutSession): details as given, the card as its summary only. */
import type { CheckoutSession, CheckoutSessionCreateInput, CheckoutSessionUpdateInput } from '@switchyard/contracts';
import type { CheckoutSessionCard, CheckoutSessionDetails } from './checkout-session';
import type { CheckoutSessionView } from './checkout-sessions.read-model';

export function toCheckoutSession(session: CheckoutSessionView): CheckoutSession {
  return {
    type: 'checkout-session',
    id: session.id,
    expires_at: session.expiresAt,
    cart_items: session.cartItems ? [...session.cartItems] : null,
    metadata: session.metadata ? { ...session.metadata } : null,
    buyer: session.buyer,
    airline: session.airline,
    amount: session.amount,
    currency: session.currency,
    payment_service_id: session.paymentServiceId,
    payment_method: session.card ? toPaymentMethod(session.card) : null,
  };
}

function toPaymentMethod(card: CheckoutSessionCard): NonNullable<CheckoutSession['payment_method']> {
  return {
    type: 'payment-method',
    id: card.cardId,
    method: 'card',
    scheme: card.scheme,
    label: card.last4,
    fingerprint: card.fingerprint,
    details: {
      bin: card.bin,
      card_type: card.cardType,
      card_country: card.issuerCountry,
      card_issuer_name: card.issuerName,
    },
  };
}

/** A create body's details; absent and null alike are "not given". */
export function detailsOf(body: CheckoutSessionCreateInput): CheckoutSessionDetails {
  return {
    cartItems: body.cart_items ?? null,
    metadata: body.metadata ?? null,
    buyer: body.buyer ?? null,
    airline: body.airline ?? null,
    amount: body.amount ?? null,
    currency: body.currency ?? null,
    paymentServiceId: body.payment_service_id ?? null,
  };
}

/** An update body's changes: the fields it holds (null clears one), none of those it leaves out. */
export function changesOf(body: CheckoutSessionUpdateInput): Partial<CheckoutSessionDetails> {
  const changes: { -readonly [K in keyof CheckoutSessionDetails]?: CheckoutSessionDetails[K] } = {};
  if (body.cart_items !== undefined) changes.cartItems = body.cart_items;
  if (body.metadata !== undefined) changes.metadata = body.metadata;
  if (body.buyer !== undefined) changes.buyer = body.buyer;
  if (body.airline !== undefined) changes.airline = body.airline;
  if (body.amount !== undefined) changes.amount = body.amount;
  if (body.currency !== undefined) changes.currency = body.currency;
  if (body.payment_service_id !== undefined) changes.paymentServiceId = body.payment_service_id;
  return changes;
}
