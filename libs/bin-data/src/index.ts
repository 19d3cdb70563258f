export type { BinData, CardBinInfo, CardType } from './bin-data';
export { CsvBinData, loadBinData, sampleBinFile } from './csv-bin-data';
export { detectScheme } from './detect-scheme';
export { issuerMandatesAuthentication, strongCustomerAuthenticationCountries } from './issuer-mandate';
