/**
 * The simulator's deterministic test values, as pure tables. The reference ones (amount → error_code, postal
 * code → AVS, security code → CVV, 3-D Secure test cards) follow the Gr4vy sandbox simulators exactly; the scenario
 * amounts and the 3-D Secure last-digit rules are ours.
 * docs/simulator.md lists every value; `simulator-values.unit.spec.ts` keeps the two in step.
 */
import type { AvsResponseCode, CvvResponseCode } from '../connector';
import type { GiftCardErrorCode } from '../gift-card';
import type { ThreeDSecureTransactionStatus } from '../three-d-secure';

/** Reference: amounts 200001–200022 decline with these error codes. */
export const declineAmounts: Readonly<Record<number, string>> = {
  200001: 'canceled_payment_method',
  200002: 'disputed_transaction',
  200003: 'duplicate_transaction',
  200004: 'expired_authorization',
  200005: 'expired_payment_method',
  200006: 'incorrect_billing_address',
  200007: 'incorrect_country',
  200008: 'incorrect_currency',
  200009: 'incorrect_cvv',
  200010: 'incorrect_expiry_date',
  200011: 'insufficient_funds',
  200012: 'issuer_decline',
  200013: 'other_decline',
  200014: 'requires_buyer_authentication',
  200015: 'refused_transaction',
  200016: 'service_decline',
  200017: 'suspected_fraud',
  200018: 'unavailable_payment_method',
  200019: 'unknown_payment_method',
  200020: 'unsupported_transaction',
  200021: 'unsupported_payment_method',
  200022: 'cancelled_buyer_approval',
};

/** Reference: amounts 300001–300015 and 400001–400009 fail with these error codes. */
export const failureAmounts: Readonly<Record<number, string>> = {
  300001: 'insufficient_service_permissions',
  300002: 'invalid_amount',
  300003: 'invalid_payment_method',
  300004: 'invalid_service_configuration',
  300005: 'invalid_service_credentials',
  300006: 'invalid_service_response',
  300007: 'invalid_tax_identifier',
  300008: 'missing_billing_address',
  300009: 'missing_cvv',
  300010: 'missing_shipping_address',
  300011: 'missing_tax_identifier',
  300012: 'refund_period_expired',
  300013: 'service_error',
  300014: 'service_network_error',
  300015: 'service_rate_limit',
  400001: 'internal_error',
  400002: 'invalid_billing_address',
  400003: 'invalid_operation',
  400004: 'invalid_request_parameters',
  400005: 'invalid_service_request',
  400006: 'invalid_shipping_address',
  400007: 'service_resource_conflict',
  400008: 'unexpected_state',
  400009: 'unknown_error',
};

export type AmountDecision =
  | { readonly result: 'approved' }
  | { readonly result: 'declined' | 'failed'; readonly errorCode: string };

/** Reference: every amount not in the two tables is approved. */
export function decisionForAmount(amount: number): AmountDecision {
  const declined = declineAmounts[amount];
  if (declined !== undefined) return { result: 'declined', errorCode: declined };
  const failed = failureAmounts[amount];
  if (failed !== undefined) return { result: 'failed', errorCode: failed };
  return { result: 'approved' };
}

/**
 * Reference: a postal code containing 77 → no_match, 88 → partial_match_postcode, 99 → partial_match_address,
 * anything else → match. Ours: checked in that order (so '7788' → no_match); no postal code → unavailable.
 */
export function avsForPostalCode(postalCode: string | undefined): AvsResponseCode {
  if (postalCode === undefined || postalCode === '') return 'unavailable';
  if (postalCode.includes('77')) return 'no_match';
  if (postalCode.includes('88')) return 'partial_match_postcode';
  if (postalCode.includes('99')) return 'partial_match_address';
  return 'match';
}

/** Reference: 222 → not_provided, 333 → no_match, anything else → match. Ours: no security code → not_provided. */
export function cvvForSecurityCode(securityCode: string | undefined): CvvResponseCode {
  if (securityCode === undefined || securityCode === '') return 'not_provided';
  if (securityCode === '222') return 'not_provided';
  if (securityCode === '333') return 'no_match';
  return 'match';
}

/**
 * Our scenario amounts (5000xx, 501xxx): behaviours the reference simulator does not offer. Outside the reference
 * tables, so they would be approved by the reference rule; each is approved unless its row says otherwise.
 */
export const scenarioAmounts = {
  /** Authorization answers `pending`; an `authorization` notification `authorized` follows after `settleDelayMs`. */
  pendingThenAuthorized: 500001,
  /** Authorization answers `pending`; an `authorization` notification `declined` (issuer_decline) follows. */
  pendingThenDeclined: 500002,
  /**
   * A `failed` (service_error) notification is delivered while the authorize call is in flight, then it
   * answers `failed`.
   */
  failureNotifiedDuringRequest: 500003,
  /** Approved; the `authorized` notification is delivered twice with the same provider event id. */
  duplicateNotification: 500004,
  /**
   * Answers `pending`; then the `authorized` notification (sequence 2) is delivered before the `pending` one
   * (sequence 1).
   */
  outOfOrderNotifications: 500005,
  /**
   * The authorization is recorded as approved but the answer only comes after `unknownOutcomeDelayMs`
   * (client times out).
   */
  timeoutUnknownOutcome: 500006,
  /** Approved; every capture on it is declined (expired_authorization). */
  captureDeclined: 500007,
  /** Approved; every refund on it is `pending` until a settlement file is produced. */
  refundSettlesAsynchronously: 500008,
  /** Approved; every refund on it fails (refund_period_expired). */
  refundFails: 500009,
  /** HTTP 503 without recording anything: an infrastructure error that is safe to retry. */
  serviceUnavailable: 500010,
  /**
   * The provider contradicts itself: an `authorization` notification `failed` (service_error) and an approved answer,
   * each after its own random delay up to `raceWindowMs`, so either may arrive first. The ledger says `failed`.
   */
  failureNotifiedThenApproved: 500011,
  /**
   * Approved; the card is never vaulted: no `vault_token` notification even with `store_payment_method`
   * (spec, Events rule 3).
   */
  approvedWithoutVaultToken: 500012,
  /**
   * The request travels slowly: nothing is recorded for `unknownOutcomeDelayMs` (a sync meanwhile finds nothing),
   * then the authorization is approved and notified (`authorized`) and answered — long after the caller gave up.
   */
  lateAuthorization: 500013,
} as const;

/** Our slow-response band: 501000 + n (0 ≤ n ≤ 999) is approved after n × 10 ms. */
export const slowResponseBand = { from: 501_000, to: 501_999, stepMs: 10 } as const;

export function slowResponseDelayMs(amount: number): number {
  return amount >= slowResponseBand.from && amount <= slowResponseBand.to
    ? (amount - slowResponseBand.from) * slowResponseBand.stepMs
    : 0;
}

export type Scenario = keyof typeof scenarioAmounts;

export function scenarioForAmount(amount: number): Scenario | undefined {
  for (const [scenario, value] of Object.entries(scenarioAmounts) as [Scenario, number][]) {
    if (value === amount) return scenario;
  }
  return undefined;
}

/** What the directory server answers for a card: frictionless (Y, N, U, R) or a challenge (C). */
export interface ThreeDSecureCardOutcome {
  readonly transactionStatus: Exclude<ThreeDSecureTransactionStatus, 'A'>;
  /** transStatusReason, on N, U and R. */
  readonly statusReason?: string;
}

/** Reference: the 3-D Secure test cards (Mastercard, Visa, Amex, JCB, Diners/Discover). */
export const threeDSecureReferenceCards: Readonly<Record<string, 'Y' | 'C'>> = {
  '5200000000001203': 'Y',
  '4111111111101203': 'Y',
  '340000000022003': 'Y',
  '3558111111121203': 'Y',
  '8171998927611203': 'Y',
  '5240000000001072': 'C',
  '4111111111181072': 'C',
  '340000000082072': 'C',
  '3558111111121872': 'C',
  '8171998927611872': 'C',
};

/** Ours: a card number ending in these four digits gets a frictionless refusal. */
export const threeDSecureLastDigitOutcomes: Readonly<Record<string, ThreeDSecureCardOutcome>> = {
  '1004': { transactionStatus: 'N', statusReason: '01' },
  '1005': { transactionStatus: 'U', statusReason: '08' },
  '1006': { transactionStatus: 'R', statusReason: '11' },
};

/** Reference cards first, then our last-digit rules; every other card is authenticated frictionless (Y). */
export function threeDSecureOutcomeForCard(number: string): ThreeDSecureCardOutcome {
  const reference = threeDSecureReferenceCards[number];
  if (reference !== undefined) return { transactionStatus: reference };
  return threeDSecureLastDigitOutcomes[number.slice(-4)] ?? { transactionStatus: 'Y' };
}

/** ECI of an authenticated (Y or A) cardholder: Mastercard (first digit 5 or 2) '02', every other scheme '05'. */
export function eciForCard(number: string): string {
  return number.startsWith('5') || number.startsWith('2') ? '02' : '05';
}

/**
 * Reference: a gift card PIN's first digit picks the outcome category. `success` cards hold the PIN read as an
 * integer (PIN `01000` → 1000) the first time they are seen.
 */
export const giftCardPinCategories = {
  '0': 'success',
  '1': 'validation_error',
  '2': 'server_error',
  '3': 'client_error',
} as const;

export type GiftCardPinCategory = (typeof giftCardPinCategories)[keyof typeof giftCardPinCategories];
export type GiftCardFailureCategory = Exclude<GiftCardPinCategory, 'success'>;

/** Reference: after a failure digit, the next four digits pick the error code; any other four → unknown_error. */
export const giftCardErrorSuffixes: Readonly<Record<string, GiftCardErrorCode>> = {
  '0000': 'invalid_gift_card',
  '0001': 'expired_card',
  '0002': 'inactive_card',
  '0003': 'invalid_service_credentials',
  '0004': 'invalid_amount',
  '0005': 'incorrect_currency',
  '0006': 'insufficient_funds',
  '0007': 'invalid_service_configuration',
  '0008': 'operation_canceled',
  '0009': 'service_error',
  '0010': 'service_network_error',
  '0011': 'unknown_error',
};

/** Ours: a card number ending in these four digits is expired (expired_card), whatever its PIN. */
export const giftCardExpiredNumberSuffix = '0000';

const giftCardCategoryNames: Readonly<Record<GiftCardFailureCategory, string>> = {
  validation_error: 'Validation error',
  server_error: 'Server error',
  client_error: 'Client error',
};

const giftCardErrorMessages: Readonly<Record<GiftCardErrorCode, string>> = {
  invalid_gift_card: 'the gift card number or PIN is not valid.',
  expired_card: 'the gift card has expired.',
  inactive_card: 'the gift card has not been activated.',
  invalid_service_credentials: 'the merchant credentials were rejected.',
  invalid_amount: 'the amount is not valid for this operation.',
  incorrect_currency: "the currency is not the gift card's currency.",
  insufficient_funds: 'the gift card balance is too low.',
  invalid_service_configuration: 'the merchant account is not set up for gift cards.',
  operation_canceled: 'the operation was canceled.',
  service_error: 'the gift card service could not process the request.',
  service_network_error: 'the gift card service could not reach its network.',
  unknown_error: 'an unknown error occurred.',
  max_gift_cards_reached: 'too many gift cards in one payment.',
};

export interface GiftCardFailureOutcome {
  readonly result: 'failed';
  readonly category: GiftCardFailureCategory;
  readonly errorCode: GiftCardErrorCode;
  /** What a PIN spells: category digit and four digits, e.g. '10001'. */
  readonly rawErrorCode: string;
  readonly rawErrorMessage: string;
}

export type GiftCardPinOutcome = { readonly result: 'succeeded'; readonly balance: number } | GiftCardFailureOutcome;

const digitOf = (category: GiftCardFailureCategory): string =>
  Object.entries(giftCardPinCategories).find(([, c]) => c === category)?.[0] ?? '';

function failureOutcome(
  category: GiftCardFailureCategory,
  errorCode: GiftCardErrorCode,
  rawErrorCode: string,
  message?: string,
): GiftCardFailureOutcome {
  return {
    result: 'failed',
    category,
    errorCode,
    rawErrorCode,
    rawErrorMessage: `${giftCardCategoryNames[category]}: ${message ?? giftCardErrorMessages[errorCode]}`,
  };
}

/**
 * Ours: the failure the simulator's own rules answer (expired number, wrong currency, too little on the card, ...),
 * always a validation error, coded as the PIN that spells it would be (expired_card → raw '10001'). `message`
 * replaces the code's usual sentence.
 */
export function giftCardFailure(errorCode: GiftCardErrorCode, message?: string): GiftCardFailureOutcome {
  const suffix = Object.entries(giftCardErrorSuffixes).find(([, code]) => code === errorCode)?.[0] ?? '9999';
  return failureOutcome('validation_error', errorCode, digitOf('validation_error') + suffix, message);
}

/**
 * Reference: the PIN's first digit, then the four after it; the raw code is those five digits as given (`19999` →
 * unknown_error, raw '19999'). Ours: a PIN that is not all digits, or starts with 4–9, is a wrong PIN
 * (validation_error, invalid_gift_card).
 */
export function giftCardOutcomeForPin(pin: string): GiftCardPinOutcome {
  const categories: Readonly<Record<string, GiftCardPinCategory>> = giftCardPinCategories;
  const category = /^\d+$/.test(pin) ? categories[pin.charAt(0)] : undefined;
  if (category === undefined) return giftCardFailure('invalid_gift_card');
  if (category === 'success') return { result: 'succeeded', balance: Number.parseInt(pin, 10) };
  return failureOutcome(category, giftCardErrorSuffixes[pin.slice(1, 5)] ?? 'unknown_error', pin.slice(0, 5));
}
