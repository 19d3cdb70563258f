/**
 * The simulated account updater's deterministic outcomes (Switchyard's own; the reference publishes none): the last
 * four digits of the card number decide. The four endings all add the same to the Luhn sum, so a test card keeps
 * passing the Luhn check when one ending is swapped for another. docs/simulator.md "Account updater" lists them;
 * `simulator-account-updater-values.unit.spec.ts` keeps the two in step.
 */
import type { AccountUpdaterOutcome } from '../account-updater';
import { passesLuhn } from './luhn';
export { passesLuhn } from './luhn';

/** Last four digits → outcome; any other ending → `no_change`. */
export const accountUpdaterOutcomeSuffixes: Readonly<Record<string, Exclude<AccountUpdaterOutcome, 'no_change'>>> = {
  '0010': 'updated_expiry',
  '0028': 'updated_number',
  '0036': 'closed',
  '0044': 'contact_cardholder',
};

/** Full test PANs per outcome (Visa, Mastercard, American Express, Discover), each passing the Luhn check. */
export const accountUpdaterExamplePans: Readonly<Record<AccountUpdaterOutcome, readonly string[]>> = {
  updated_expiry: ['4111111111150010', '5555555555570010', '378282246340010', '6011111111110010'],
  updated_number: ['4111111111150028', '5555555555570028', '378282246340028', '6011111111110028'],
  closed: ['4111111111150036', '5555555555570036', '378282246340036', '6011111111110036'],
  contact_cardholder: ['4111111111150044', '5555555555570044', '378282246340044', '6011111111110044'],
  no_change: ['4111111111111111', '5555555555554444', '378282246310005'],
};

/** How far a new expiry moves the old one (`updated_expiry`, `updated_number`). */
export const accountUpdaterExpiryYears = 3;

/**
 * The last four digits of every replacement number: an ending of no outcome, so the new card updates to `no_change`.
 */
export const replacementNumberSuffix = '0002';

export function accountUpdaterOutcomeForCard(number: string): AccountUpdaterOutcome {
  return accountUpdaterOutcomeSuffixes[number.slice(-4)] ?? 'no_change';
}

/** MM/YY moved forward by `years` (the century wraps: 11/99 + 3 → 11/02). */
export function extendedExpiry(expirationDate: string, years = accountUpdaterExpiryYears): string {
  const [month = '', year = ''] = expirationDate.split('/');
  return `${month}/${String((Number(year) + years) % 100).padStart(2, '0')}`;
}

/**
 * A reissued card's number: the same first six digits (so the same scheme) and length; every digit after them up to
 * the last five is replaced by 9 minus itself; then the digit that makes the number pass the Luhn check; then `0002`.
 */
export function replacementNumber(number: string): string {
  const head = number.slice(0, 6);
  const account = [...number.slice(6, -5)].map((digit) => String(9 - Number(digit))).join('');
  for (let check = 0; check <= 9; check++) {
    const candidate = `${head}${account}${check}${replacementNumberSuffix}`;
    if (passesLuhn(candidate)) return candidate;
  }
  // Unreachable: the fifth digit from the right is not doubled by Luhn, so exactly one value of it passes.
  throw new Error('no Luhn digit found');
}
