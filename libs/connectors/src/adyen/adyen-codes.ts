/**
 * Adyen's answer codes as ours: `refusalReasonCode` (and the refusal text notifications carry) → `error_code`,
 * `additionalData.avsResult` / `cvcResult` → the standardized AVS and CVV codes. The table is docs/connectors/adyen.md;
 * the raw code and text are always kept beside the mapped one.
 */
import type { AvsResponseCode, CvvResponseCode } from '../connector';

/** refusalReasonCode → [error_code, Adyen's refusal text]. Codes not listed map to `other_decline`. */
export const adyenRefusals: Readonly<Record<string, readonly [string, string]>> = {
  '0': ['other_decline', 'Unknown'],
  '2': ['refused_transaction', 'Refused'],
  '3': ['issuer_decline', 'Referral'],
  '4': ['service_decline', 'Acquirer Error'],
  '5': ['canceled_payment_method', 'Blocked Card'],
  '6': ['expired_payment_method', 'Expired Card'],
  '7': ['invalid_amount', 'Invalid Amount'],
  '8': ['unknown_payment_method', 'Invalid Card Number'],
  '9': ['issuer_decline', 'Issuer Unavailable'],
  '10': ['unsupported_payment_method', 'Not supported'],
  '11': ['requires_buyer_authentication', '3D Not Authenticated'],
  '12': ['insufficient_funds', 'Not enough balance'],
  '14': ['suspected_fraud', 'Acquirer Fraud'],
  '15': ['other_decline', 'Cancelled'],
  '16': ['cancelled_buyer_approval', 'Shopper Cancelled'],
  '20': ['suspected_fraud', 'FRAUD'],
  '21': ['service_decline', 'Not Submitted'],
  '22': ['suspected_fraud', 'FRAUD-CANCELLED'],
  '23': ['unsupported_transaction', 'Transaction Not Permitted'],
  '24': ['incorrect_cvv', 'CVC Declined'],
  '25': ['unavailable_payment_method', 'Restricted Card'],
  '26': ['canceled_payment_method', 'Revocation Of Auth'],
  '27': ['issuer_decline', 'Declined Non Generic'],
  '28': ['insufficient_funds', 'Withdrawal amount exceeded'],
  '29': ['insufficient_funds', 'Withdrawal count exceeded'],
  '31': ['suspected_fraud', 'Issuer Suspected Fraud'],
  '32': ['incorrect_billing_address', 'AVS Declined'],
  '34': ['unavailable_payment_method', 'No checking account available on Card'],
  '35': ['unavailable_payment_method', 'No savings account available on Card'],
  '38': ['requires_buyer_authentication', 'Authentication required'],
  '39': ['requires_buyer_authentication', 'RReq not received from DS'],
  '42': ['requires_buyer_authentication', '3DS Authentication Error'],
  '46': ['refused_transaction', 'Transaction blocked by Adyen to prevent excessive retry fees'],
};

/** The error_code of a refusal, by its code or (a notification has only the text) by Adyen's refusal text. */
export function adyenErrorCode(refusalReasonCode: string | undefined, refusalReason: string | undefined): string {
  if (refusalReasonCode !== undefined && adyenRefusals[refusalReasonCode]) return adyenRefusals[refusalReasonCode][0];
  const text = refusalReason?.trim().toLowerCase();
  const byText = Object.values(adyenRefusals).find(([, reason]) => reason.toLowerCase() === text);
  return byText ? byText[0] : 'other_decline';
}

/** The refusal code of a refusal text, when Adyen's table has it (notifications carry only the text). */
export function adyenRefusalCodeOf(refusalReason: string | undefined): string | undefined {
  const text = refusalReason?.trim().toLowerCase();
  return Object.entries(adyenRefusals).find(([, [, reason]]) => reason.toLowerCase() === text)?.[0];
}

/** `avsResult` is "<code> <text>", e.g. "7 Both postal code and address match". */
export function adyenAvs(avsResult: string | undefined): AvsResponseCode | undefined {
  if (avsResult === undefined) return undefined;
  const code = Number.parseInt(avsResult, 10);
  if ([7, 20, 24].includes(code)) return 'match';
  if ([2, 26].includes(code)) return 'no_match';
  if ([1, 9, 12, 21, 25].includes(code)) return 'partial_match_address';
  if ([6, 14, 15, 19, 23].includes(code)) return 'partial_match_postcode';
  if (code === 22) return 'partial_match_name';
  return 'unavailable';
}

/** `cvcResult` is "<code> <text>", e.g. "1 Matches". */
export function adyenCvc(cvcResult: string | undefined): CvvResponseCode | undefined {
  if (cvcResult === undefined) return undefined;
  const code = Number.parseInt(cvcResult, 10);
  if (code === 1) return 'match';
  if (code === 2) return 'no_match';
  if (code === 4 || code === 6) return 'not_provided';
  return 'unavailable';
}

/**
 * Our reference of an operation on a payment, as Adyen carries it (`reference`, at most 80 characters): the
 * transaction id, the kind of operation and our operation id, so a notification names both without a lookup.
 */
export const operationReference = (transactionId: string, kind: 'c' | 'r' | 'v' | 'i', operationId: string): string =>
  `${transactionId}/${kind}/${operationId}`;

export function parseOperationReference(reference: string): {
  readonly transactionId: string;
  readonly kind?: string;
  readonly operationId?: string;
} {
  const [transactionId = reference, kind, operationId] = reference.split('/');
  return kind && operationId ? { transactionId, kind, operationId } : { transactionId };
}
