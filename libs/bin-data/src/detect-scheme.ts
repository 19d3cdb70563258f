/**
 * A card's scheme from its number's pattern alone, by credit-card-type, in wire scheme names. Used for numbers the
 * BIN data does not know, and by the card vault for the scheme it stores — one function, so both give the same answer.
 */
import creditCardType from 'credit-card-type';

/**
 * credit-card-type's names → the API's card scheme names; brands the API does not list (troy, naranja, verve, hiper)
 * map to null.
 */
const wireSchemes: Readonly<Record<string, string>> = {
  visa: 'visa',
  mastercard: 'mastercard',
  'american-express': 'amex',
  'diners-club': 'diners-club',
  discover: 'discover',
  jcb: 'jcb',
  unionpay: 'unionpay',
  maestro: 'maestro',
  elo: 'elo',
  hipercard: 'hipercard',
  mir: 'mir',
};

/**
 * The library's only candidate, or its first one when that one is a strong match allowing this length; else null
 * (a short prefix such as `6` fits several schemes and says nothing).
 */
export function detectScheme(cardNumber: string): string | null {
  // credit-card-type's longest pattern is 8 digits: the answer depends on those and on the length only.
  const key = `${cardNumber.slice(0, PATTERN_DIGITS)}:${cardNumber.length}`;
  const known = answers.get(key);
  if (known !== undefined) return known;
  const answer = schemeOf(cardNumber);
  if (answers.size >= KEPT_ANSWERS) answers.delete(answers.keys().next().value as string);
  answers.set(key, answer);
  return answer;
}

/** The longest prefix credit-card-type matches (checked by `detect-scheme.unit.spec.ts`). */
export const PATTERN_DIGITS = 8;
/** Answers kept by prefix and length: credit-card-type clones its whole table on every call (~50 µs). */
const KEPT_ANSWERS = 10_000;
const answers = new Map<string, string | null>();

function schemeOf(cardNumber: string): string | null {
  const candidates = creditCardType(cardNumber);
  const first = candidates[0];
  if (!first) return null;
  if (candidates.length > 1 && !(first.matchStrength !== undefined && first.lengths.includes(cardNumber.length)))
    return null;
  return wireSchemes[first.type] ?? null;
}
