/**
 * The BIN data port: what a card number's first digits say about the card — its scheme, its type, the country and
 * name of its issuer. The transactions service asks it for issuer-mandated 3-D Secure (is the issuer in the EEA or
 * the UK?) and for flow-rule conditions (card type). Adapters: `CsvBinData` (a CSV of BIN ranges, the shipped
 * sample or an operator's licensed file). docs/bin-data.md describes the format.
 */
import creditCardType from 'credit-card-type';

export type CardType = 'credit' | 'debit' | 'prepaid';

export interface CardBinInfo {
  /** The first 6 digits of the card number ('' when the number is too short): safe to log and to show. */
  readonly bin: string;
  /** Wire scheme name (`visa`, `mastercard`, `amex`, ...); null when unknown. */
  readonly scheme: string | null;
  readonly cardType: CardType | null;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly issuerCountry: string | null;
  readonly issuerName: string | null;
  /** `bin_file`: a row of the BIN data matched; `detected`: only the scheme, from the number's pattern; `unknown`: nothing. */
  readonly source: 'bin_file' | 'detected' | 'unknown';
}

export interface BinData {
  lookup(cardNumber: string): CardBinInfo;
}

/** credit-card-type's names → the API's card scheme names; brands the API does not list (troy, naranja, verve, hiper) map to null. */
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
 * The scheme from the number's pattern alone (credit-card-type): the library's only candidate, or its first one
 * when that one is a strong match allowing this length; else null.
 */
export function detectScheme(cardNumber: string): string | null {
  const candidates = creditCardType(cardNumber);
  const first = candidates[0];
  if (!first) return null;
  if (candidates.length > 1 && !(first.matchStrength !== undefined && first.lengths.includes(cardNumber.length))) return null;
  return wireSchemes[first.type] ?? null;
}
