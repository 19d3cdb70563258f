/**
 * Issuer-mandated 3-D Secure: under PSD2 strong customer authentication, issuers in the European Economic Area and
 * in the United Kingdom require it. Gibraltar (GI) and the Crown Dependencies (JE, GG, IM) are out of scope and not in
 * the list: an operator's BIN file decides for their issuers (e.g. by giving one that authenticates the country GB).
 */
import type { CardBinInfo } from './bin-data';

/**
 * The 27 EU member states (Greece as ISO's GR, not the EU's EL), Iceland, Liechtenstein and Norway (the EEA), and the
 * United Kingdom.
 */
export const strongCustomerAuthenticationCountries: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'IS',
  'LI',
  'NO',
  'GB',
]);

/** true: the issuer mandates authentication; false: a known issuer that does not; null: the BIN data cannot tell. */
export function issuerMandatesAuthentication(info: CardBinInfo): boolean | null {
  if (info.issuerCountry === null) return null;
  return strongCustomerAuthenticationCountries.has(info.issuerCountry);
}
