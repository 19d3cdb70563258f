import { detectScheme } from './bin-data';
import { CsvBinData, loadBinData } from './csv-bin-data';
import { issuerMandatesAuthentication } from './issuer-mandate';

const HEADER = 'bin,scheme,type,issuer_country,issuer_name';
const load = (...rows: string[]) => loadRows(rows);
const loadRows = (rows: readonly string[]) => CsvBinData.fromString([HEADER, ...rows].join('\n'), 'test.csv');

describe('CsvBinData', () => {
  it('reads rows with quotes, comments and blank lines; the longest prefix wins', () => {
    const data = CsvBinData.fromString(['# a comment', '', HEADER, '411111,visa,credit,US,"Bank, ""One"""', '41111112,visa,debit,IE,', '', '520000,mastercard,,,'].join('\r\n'), 'x.csv');
    expect(data.lookup('4111111111111111')).toEqual({ bin: '411111', scheme: 'visa', cardType: 'credit', issuerCountry: 'US', issuerName: 'Bank, "One"', source: 'bin_file' });
    expect(data.lookup('4111 1112 1111 1110')).toMatchObject({ bin: '411111', cardType: 'debit', issuerCountry: 'IE', issuerName: null });
    expect(data.lookup('5200000000001203')).toEqual({ bin: '520000', scheme: 'mastercard', cardType: null, issuerCountry: null, issuerName: null, source: 'bin_file' });
  });

  it('detects the scheme of a number no row covers, and knows nothing of garbage', () => {
    const data = load('411111,visa,credit,US,x');
    expect(data.lookup('4000056655665556')).toEqual({ bin: '400005', scheme: 'visa', cardType: null, issuerCountry: null, issuerName: null, source: 'detected' });
    expect(data.lookup('9999999999999999')).toMatchObject({ scheme: null, source: 'unknown' });
    expect(data.lookup('41111')).toMatchObject({ bin: '', source: 'unknown' });
    expect(data.lookup('4111-11xx')).toMatchObject({ bin: '', source: 'unknown' });
  });

  it.each([
    ['411111,visa,credit,US', /test\.csv:2: expected 5 columns/],
    ['41111,visa,credit,US,x', /test\.csv:2: bin "41111" must be 6 to 11 digits/],
    ['411111111111,visa,credit,US,x', /must be 6 to 11 digits/],
    ['411111,vissa,credit,US,x', /test\.csv:2: scheme "vissa"/],
    ['411111,visa,charge,US,x', /type "charge"/],
    ['411111,visa,credit,us,x', /issuer_country "us"/],
    ['411111,visa,credit,US,"unclosed', /quoted cell is not closed/],
  ])('refuses a bad row, naming the line: %s', (row, message) => {
    expect(() => load(row)).toThrow(message);
  });

  it('refuses a duplicate bin and a missing or wrong header', () => {
    expect(() => load('411111,visa,credit,US,x', '411111,visa,debit,US,y')).toThrow(/test\.csv:3: bin 411111 is listed twice/);
    expect(() => CsvBinData.fromString('bin,scheme\n411111,visa', 'h.csv')).toThrow(/h\.csv:1: the header must be exactly/);
    expect(() => CsvBinData.fromString('# only comments\n', 'e.csv')).toThrow(/e\.csv: no header line/);
  });

  it('finds rows of a licensed-size file by prefix (300,000 rows)', () => {
    const rows: string[] = [];
    for (let i = 0; i < 300_000; i += 1) rows.push(`${String(400000 + i).padStart(6, '0')}${String(i % 100).padStart(2, '0')},visa,${i % 2 ? 'debit' : 'credit'},${i % 3 ? 'US' : 'DE'},Bank ${i}`);
    const data = loadRows(rows);
    expect(data.rows).toBe(300_000);
    for (const i of [0, 1, 149_999, 299_999]) {
      const prefix = `${400000 + i}${String(i % 100).padStart(2, '0')}`;
      expect(data.lookup(`${prefix}12345678`)).toMatchObject({ issuerName: `Bank ${i}`, issuerCountry: i % 3 ? 'US' : 'DE', source: 'bin_file' });
    }
  });
});

describe('the shipped sample', () => {
  const sample = loadBinData({});

  it.each([
    ['4111111111111111', 'visa', 'US'],
    ['4111111111101203', 'visa', 'US'],
    ['4111111111181072', 'visa', 'US'],
    ['5200000000001203', 'mastercard', 'GB'],
    ['5240000000001072', 'mastercard', 'DE'],
    ['340000000022003', 'amex', 'US'],
    ['378282246310005', 'amex', 'US'],
    ['3558111111121203', 'jcb', 'JP'],
    ['8171998927611872', 'unionpay', 'CN'],
    ['5555555555554444', 'mastercard', 'US'],
  ])('covers the test card %s (%s, %s)', (number, scheme, country) => {
    expect(sample.lookup(number)).toMatchObject({ scheme, issuerCountry: country, source: 'bin_file' });
  });

  it('leaves 4000056655665556 out: the "unknown issuer" card of the tests', () => {
    expect(sample.lookup('4000056655665556')).toMatchObject({ scheme: 'visa', issuerCountry: null, source: 'detected' });
  });
});

describe('issuerMandatesAuthentication', () => {
  const info = (issuerCountry: string | null) => ({ bin: '411111', scheme: 'visa', cardType: null, issuerCountry, issuerName: null, source: 'bin_file' as const });
  it.each([
    ['GB', true],
    ['DE', true],
    ['NO', true],
    ['IS', true],
    ['US', false],
    ['CH', false],
    [null, null],
  ])('%s → %s', (country, expected) => expect(issuerMandatesAuthentication(info(country))).toBe(expected));
});

describe('detectScheme', () => {
  it.each([
    ['4111111111111111', 'visa'],
    ['5555555555554444', 'mastercard'],
    ['378282246310005', 'amex'],
    ['6011111111111117', 'discover'],
    ['3530111333300000', 'jcb'],
    ['9999999999999999', null],
  ])('%s → %s', (number, scheme) => expect(detectScheme(number)).toBe(scheme));
});
