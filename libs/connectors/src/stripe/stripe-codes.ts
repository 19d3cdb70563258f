/**
 * Stripe's answer codes as ours: a card error's `decline_code` (else its `code`) → `error_code`, a charge's
 * `payment_method_details.card.checks` → the standardized AVS and CVV codes. The table is docs/connectors/stripe.md;
 * the raw code and message are always kept beside the mapped one.
 */
import type { AvsResponseCode, CvvResponseCode } from '../connector';

/** decline_code or code → error_code. Codes not listed map to `other_decline`. */
export const stripeDeclines: Readonly<Record<string, string>> = {
  insufficient_funds: 'insufficient_funds',
  do_not_honor: 'issuer_decline',
  generic_decline: 'issuer_decline',
  call_issuer: 'issuer_decline',
  try_again_later: 'issuer_decline',
  issuer_not_available: 'issuer_decline',
  expired_card: 'expired_payment_method',
  incorrect_cvc: 'incorrect_cvv',
  invalid_cvc: 'incorrect_cvv',
  incorrect_number: 'unknown_payment_method',
  invalid_number: 'unknown_payment_method',
  invalid_expiry_month: 'incorrect_expiry_date',
  invalid_expiry_year: 'incorrect_expiry_date',
  incorrect_zip: 'incorrect_billing_address',
  lost_card: 'canceled_payment_method',
  stolen_card: 'canceled_payment_method',
  pickup_card: 'canceled_payment_method',
  fraudulent: 'suspected_fraud',
  merchant_blacklist: 'suspected_fraud',
  card_not_supported: 'unsupported_payment_method',
  currency_not_supported: 'incorrect_currency',
  restricted_card: 'unavailable_payment_method',
  transaction_not_allowed: 'unsupported_transaction',
  duplicate_transaction: 'duplicate_transaction',
  authentication_required: 'requires_buyer_authentication',
  card_velocity_exceeded: 'other_decline',
  withdrawal_count_limit_exceeded: 'insufficient_funds',
  processing_error: 'service_decline',
};

export const stripeErrorCode = (declineCode: string | null | undefined, code: string | null | undefined): string =>
  (declineCode && stripeDeclines[declineCode]) || (code && stripeDeclines[code]) || 'other_decline';

type Check = string | null | undefined;

export function stripeAvs(
  checks: { address_line1_check?: Check; address_postal_code_check?: Check } | null | undefined,
): AvsResponseCode | undefined {
  if (!checks) return undefined;
  const line1 = checks.address_line1_check;
  const postal = checks.address_postal_code_check;
  if (line1 === 'pass' && postal === 'pass') return 'match';
  if (line1 === 'fail' && postal === 'fail') return 'no_match';
  if (line1 === 'pass') return 'partial_match_address';
  if (postal === 'pass') return 'partial_match_postcode';
  if (line1 === 'fail' || postal === 'fail') return 'no_match';
  return 'unavailable';
}

export function stripeCvc(checks: { cvc_check?: Check } | null | undefined): CvvResponseCode | undefined {
  if (!checks) return undefined;
  if (checks.cvc_check === 'pass') return 'match';
  if (checks.cvc_check === 'fail') return 'no_match';
  if (checks.cvc_check === null || checks.cvc_check === undefined) return 'not_provided';
  return 'unavailable';
}

/** The metadata keys Switchyard writes on Stripe's objects, so a notification or a search names our records. */
export const referenceKey = 'switchyard_reference';
export const refundKey = 'switchyard_refund';
