/**
 * The BIN data port: what a card number's first digits say about the card — its scheme, its type, the country and
 * name of its issuer. The transactions service asks it whether the issuer mandates 3-D Secure (an EEA or UK issuer,
 * `issuer-mandate.ts`) and for flow-rule conditions (card type). Adapter: `CsvBinData` (a CSV of BIN ranges, the
 * shipped sample or an operator's licensed file). docs/bin-data.md describes the format.
 */

export type CardType = 'credit' | 'debit' | 'prepaid';

export interface CardBinInfo {
  /** The first 6 digits of the card number ('' when the input is not a number of at least 6 digits): safe to log. */
  readonly bin: string;
  /** Wire scheme name (`visa`, `mastercard`, `amex`, ...); null when unknown. */
  readonly scheme: string | null;
  readonly cardType: CardType | null;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly issuerCountry: string | null;
  readonly issuerName: string | null;
  /**
   * `bin_file`: a row of the BIN data matched; `detected`: only the scheme, from the number's pattern;
   * `unknown`: nothing.
   */
  readonly source: 'bin_file' | 'detected' | 'unknown';
}

export interface BinData {
  /** Never throws: a number the data does not know (or not a card number at all) is answered with nulls. */
  lookup(cardNumber: string): CardBinInfo;
}
