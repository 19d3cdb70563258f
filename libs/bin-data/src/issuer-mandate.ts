/**
 * Issuer-mandated 3-D Secure: under PSD2 strong customer authentication, issuers in the European Economic Area and
 * the United Kingdom require it. Gibraltar and the Crown Dependencies are left to the operator's BIN file (their
 * issuers can be listed with a GB country there).
 */
import type { CardBinInfo } from './bin-data';

/** The 27 EU member states, Iceland, Liechtenstein and Norway (the EEA), and the United Kingdom. */
export const strongCustomerAuthenticationCountries: ReadonlySet<string> = new Set([
  'AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL',
  'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE', 'IS', 'LI', 'NO', 'GB',
]);

/** true: the issuer mandates authentication; false: a known issuer that does not; null: the BIN data cannot tell. */
export function issuerMandatesAuthentication(info: CardBinInfo): boolean | null {
  if (info.issuerCountry === null) return null;
  return strongCustomerAuthenticationCountries.has(info.issuerCountry);
}
