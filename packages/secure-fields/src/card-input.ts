/**
 * The fields' light formatting and their checks, pure: card number in groups (4-6-5 for amex, 4-6-4 for a 14-digit
 * diners card, else fours), expiry as MM/YY, security code 3 or 4 digits. A field is `complete` when its length is one
 * it takes (the card number's scheme's lengths, 4 expiry digits, the scheme's security code length) and `valid` when
 * it also passes its check (Luhn; a month that exists and is not past; exactly the security code's length).
 */
import { detectScheme } from './card-details';

export const digitsOf = (text: string): string => text.replace(/\D/g, '');

export function passesLuhn(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let total = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    total += digit;
  }
  return total % 10 === 0;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);

/** Card number lengths per scheme; a scheme not told yet: 12 to 19 (what the API takes). */
const NUMBER_LENGTHS: Readonly<Record<string, readonly number[]>> = {
  visa: [13, 16, 19],
  mastercard: [16],
  amex: [15],
  discover: [16, 19],
  jcb: range(16, 19),
  'diners-club': [14, 16, 19],
  unionpay: range(14, 19),
};
const ANY_NUMBER_LENGTH = range(12, 19);
export const MAX_NUMBER_DIGITS = 19;

export const numberLengthsFor = (scheme: string | null): readonly number[] =>
  (scheme ? NUMBER_LENGTHS[scheme] : undefined) ?? ANY_NUMBER_LENGTH;

/** The most digits the field takes for what was typed so far. */
export const maxNumberDigits = (digits: string): number => Math.max(...numberLengthsFor(detectScheme(digits)));

export interface InputState {
  readonly empty: boolean;
  readonly complete: boolean;
  readonly valid: boolean;
}

export function cardNumberState(digits: string): InputState {
  const lengths = numberLengthsFor(detectScheme(digits));
  const complete = lengths.includes(digits.length);
  return { empty: digits.length === 0, complete, valid: complete && passesLuhn(digits) };
}

function groupsFor(digits: string): readonly number[] {
  const scheme = detectScheme(digits);
  if (scheme === 'amex') return [4, 6, 5];
  if (scheme === 'diners-club' && digits.length <= 14) return [4, 6, 4];
  return [4, 4, 4, 4, 3];
}

/** `4111111111111111` → `4111 1111 1111 1111`; `378282246310005` → `3782 822463 10005`. Digits past the scheme's longest length are dropped. */
export function formatCardNumber(text: string): string {
  const digits = digitsOf(text).slice(0, MAX_NUMBER_DIGITS);
  const kept = digits.slice(0, maxNumberDigits(digits));
  const parts: string[] = [];
  let at = 0;
  for (const size of groupsFor(kept)) {
    if (at >= kept.length) break;
    parts.push(kept.slice(at, at + size));
    at += size;
  }
  if (at < kept.length) parts.push(kept.slice(at));
  return parts.join(' ');
}

/**
 * Expiry as typed: `4` → `04` (no month starts with 4), `123` → `12/3`, `1228` → `12/28`; at most 4 digits. The slash
 * appears with the third digit, so deleting back over it needs no special case.
 */
export function formatExpiry(text: string): string {
  let digits = digitsOf(text).slice(0, 4);
  if (/^[2-9]/.test(digits)) digits = `0${digits}`.slice(0, 4);
  return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}

/** The latest expiry year accepted, counted from now. */
const MAX_YEARS_AHEAD = 20;

/**
 * `MM/YY` (or its digits): complete with 4 digits; valid when the month is 01–12, not past (a card is good through
 * the last day of its month) and at most 20 years ahead. `value` is what the API takes: `MM/YY`.
 */
export function expiryState(text: string, now: Date): InputState & { readonly value: string } {
  const digits = digitsOf(formatExpiry(text));
  const complete = digits.length === 4;
  const value = complete ? `${digits.slice(0, 2)}/${digits.slice(2)}` : '';
  if (!complete) return { empty: digits.length === 0, complete, valid: false, value };
  const month = Number(digits.slice(0, 2));
  const year = 2000 + Number(digits.slice(2));
  const nowMonths = now.getFullYear() * 12 + now.getMonth();
  const cardMonths = year * 12 + (month - 1);
  const valid = month >= 1 && month <= 12 && cardMonths >= nowMonths && cardMonths <= nowMonths + MAX_YEARS_AHEAD * 12;
  return { empty: false, complete, valid, value };
}

/** Digits the security code takes: 4 for amex, 3 for the other schemes; 3 or 4 while the scheme is not known. */
export const securityCodeLengthsFor = (scheme: string | null): readonly number[] =>
  scheme === 'amex' ? [4] : scheme ? [3] : [3, 4];

export const formatSecurityCode = (text: string): string => digitsOf(text).slice(0, 4);

export function securityCodeState(text: string, scheme: string | null): InputState {
  const digits = formatSecurityCode(text);
  const lengths = securityCodeLengthsFor(scheme);
  return {
    empty: digits.length === 0,
    complete: digits.length >= Math.min(...lengths),
    valid: lengths.includes(digits.length),
  };
}

/**
 * Where the caret goes after reformatting: after the same number of digits as before it. `digitsBefore` counts the
 * digits left of the caret in the raw text.
 */
export function caretAfter(formatted: string, digitsBefore: number): number {
  if (digitsBefore <= 0) return 0;
  let seen = 0;
  for (let i = 0; i < formatted.length; i += 1) {
    if (/\d/.test(formatted.charAt(i))) seen += 1;
    if (seen === digitsBefore) return i + 1;
  }
  return formatted.length;
}
