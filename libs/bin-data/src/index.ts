export { detectScheme, type BinData, type CardBinInfo, type CardType } from './bin-data';
export { CsvBinData, loadBinData, sampleBinFile } from './csv-bin-data';
export { issuerMandatesAuthentication, strongCustomerAuthenticationCountries } from './issuer-mandate';
