import type { CardBinInfo } from './bin-data';
import { issuerMandatesAuthentication, strongCustomerAuthenticationCountries } from './issuer-mandate';

const issuedIn = (issuerCountry: string | null): CardBinInfo => ({
  bin: '411111',
  scheme: 'visa',
  cardType: 'credit',
  issuerCountry,
  issuerName: null,
  source: issuerCountry ? 'bin_file' : 'detected',
});

describe('issuerMandatesAuthentication', () => {
  it.each([
    ['GB', true],
    ['DE', true],
    ['NO', true],
    ['IS', true],
    ['LI', true],
    ['GR', true],
    ['US', false],
    ['CH', false],
    ['GI', false],
    [null, null],
  ])('issuer country %s → %s', (country, expected) => {
    expect(issuerMandatesAuthentication(issuedIn(country))).toBe(expected);
  });
});

describe('strongCustomerAuthenticationCountries', () => {
  it('holds the 27 EU member states, the 3 other EEA states and the UK', () => {
    expect(strongCustomerAuthenticationCountries.size).toBe(31);
  });
});
