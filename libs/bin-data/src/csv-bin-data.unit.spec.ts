import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CsvBinData, loadBinData, sampleBinFile } from './csv-bin-data';

const header = 'bin,scheme,type,issuer_country,issuer_name';
const csv = (...rows: string[]) => csvOf(rows);
const csvOf = (rows: readonly string[]) => CsvBinData.fromString([header, ...rows].join('\n'), 'test.csv');

describe('CsvBinData: reading the file', () => {
  it('skips comments and blank lines, reads quoted names and empty cells', () => {
    const data = CsvBinData.fromString(
      [
        '\uFEFF# a comment, with a comma',
        '',
        header,
        '  # an indented comment',
        '411111,visa,credit,US,"Bank, ""One"""',
        '',
        '520000,mastercard,,,',
        ' 601100 , discover , credit , US , "" ',
      ].join('\r\n'),
      'x.csv',
    );
    expect(data.size).toBe(3);
    expect(data.lookup('4111111111111111')).toEqual({
      bin: '411111',
      scheme: 'visa',
      cardType: 'credit',
      issuerCountry: 'US',
      issuerName: 'Bank, "One"',
      source: 'bin_file',
    });
    expect(data.lookup('5200000000001203')).toEqual({
      bin: '520000',
      scheme: 'mastercard',
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: 'bin_file',
    });
    expect(data.lookup('6011000990139424')).toEqual({
      bin: '601100',
      scheme: 'discover',
      cardType: 'credit',
      issuerCountry: 'US',
      issuerName: null,
      source: 'bin_file',
    });
  });

  it.each([
    [
      'a missing column',
      '411111,visa,credit,US',
      'test.csv:2: expected 5 columns (bin,scheme,type,issuer_country,issuer_name), found 4',
    ],
    [
      'an extra column',
      '411111,visa,credit,US,x,y',
      'test.csv:2: expected 5 columns (bin,scheme,type,issuer_country,issuer_name), found 6',
    ],
    ['a bin of 5 digits', '41111,visa,credit,US,x', 'test.csv:2: bin "41111" must be 6 to 11 digits'],
    ['a bin of 12 digits', '411111111111,visa,credit,US,x', 'test.csv:2: bin "411111111111" must be 6 to 11 digits'],
    ['a bin with a letter', '41111a,visa,credit,US,x', 'test.csv:2: bin "41111a" must be 6 to 11 digits'],
    [
      'an unknown scheme',
      '411111,vissa,credit,US,x',
      'test.csv:2: scheme "vissa" is not a card scheme name (visa, mastercard, amex, ...)',
    ],
    [
      'a library name that is not a wire name',
      '340000,american-express,credit,US,x',
      'test.csv:2: scheme "american-express" is not a card scheme name',
    ],
    ['an unknown type', '411111,visa,charge,US,x', 'test.csv:2: type "charge" must be credit, debit, prepaid or empty'],
    [
      'a lower-case country',
      '411111,visa,credit,us,x',
      'test.csv:2: issuer_country "us" must be an ISO 3166-1 alpha-2 code in upper case, or empty',
    ],
    ['an alpha-3 country', '411111,visa,credit,USA,x', 'test.csv:2: issuer_country "USA" must be'],
    ['an unclosed quote', '411111,visa,credit,US,"Bank', 'test.csv:2: column 5: a quoted cell is not closed'],
    [
      'a quote inside a cell',
      '411111,visa,credit,US,Bank "One"',
      'test.csv:2: column 5: a quote may only enclose a whole cell',
    ],
    [
      'text after a closing quote',
      '411111,visa,credit,US,"Bank" One',
      'test.csv:2: column 5: a quote may only enclose a whole cell',
    ],
  ])('refuses %s, naming the file and the line', (_, row, message) => {
    expect(() => csv(row)).toThrow(message);
  });

  it('names the line of a bad row further down, counting comments and blank lines', () => {
    expect(() =>
      CsvBinData.fromString(
        ['# c', header, '411111,visa,credit,US,x', '', '# c', '520000,mastercard,credit,gb,y'].join('\n'),
        'f.csv',
      ),
    ).toThrow('f.csv:6: issuer_country "gb"');
  });

  it('refuses a bin listed twice', () => {
    expect(() => csv('411111,visa,credit,US,x', '520000,mastercard,credit,GB,y', '411111,visa,debit,US,z')).toThrow(
      'test.csv:4: bin 411111 is listed twice',
    );
  });

  it('refuses a wrong or missing header', () => {
    expect(() => CsvBinData.fromString('# c\nbin,scheme\n411111,visa', 'h.csv')).toThrow(
      'h.csv:2: the header must be exactly "bin,scheme,type,issuer_country,issuer_name"',
    );
    expect(() => CsvBinData.fromString('411111,visa,credit,US,x\n', 'h.csv')).toThrow(
      'h.csv:1: the header must be exactly',
    );
    expect(() => CsvBinData.fromString('# only comments\n\n', 'e.csv')).toThrow(
      'e.csv: no header line "bin,scheme,type,issuer_country,issuer_name"',
    );
  });

  it('names the file it read in its errors', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bin-data-')), 'licensed.csv');
    fs.writeFileSync(file, `${header}\n411111,visa,credit,US,x\n411111,visa,credit,US,x\n`);
    expect(() => CsvBinData.fromFile(file)).toThrow(`${file}:3: bin 411111 is listed twice`);
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});

describe('CsvBinData: looking a number up', () => {
  const data = csv(
    '411111,visa,credit,US,Six',
    '41111112,visa,debit,IE,Eight',
    '4111111234,visa,prepaid,FR,Ten',
    '520000,mastercard,credit,GB,Other',
  );

  it('answers the longest matching prefix', () => {
    expect(data.lookup('4111111111111111')).toMatchObject({
      issuerName: 'Six',
      issuerCountry: 'US',
      cardType: 'credit',
    });
    expect(data.lookup('4111111211111110')).toMatchObject({
      issuerName: 'Eight',
      issuerCountry: 'IE',
      cardType: 'debit',
    });
    expect(data.lookup('4111111234000000')).toMatchObject({
      issuerName: 'Ten',
      issuerCountry: 'FR',
      cardType: 'prepaid',
    });
    expect(data.lookup('4111111235000000')).toMatchObject({ issuerName: 'Eight' });
  });

  it('reports the first 6 digits as the bin, whatever prefix matched', () => {
    expect(data.lookup('4111111234000000').bin).toBe('411111');
  });

  it('ignores spaces and dashes', () => {
    expect(data.lookup('4111 1112 1111 1110')).toMatchObject({
      bin: '411111',
      issuerName: 'Eight',
      source: 'bin_file',
    });
    expect(data.lookup('4111-1111-1111-1111')).toMatchObject({ bin: '411111', issuerName: 'Six', source: 'bin_file' });
  });

  it('matches a number as short as its prefix, and not a prefix longer than the number', () => {
    expect(data.lookup('411111')).toMatchObject({ issuerName: 'Six', source: 'bin_file' });
    expect(data.lookup('4111111')).toMatchObject({ issuerName: 'Six', source: 'bin_file' });
  });

  it('detects only the scheme of a number no row covers', () => {
    expect(data.lookup('4000056655665556')).toEqual({
      bin: '400005',
      scheme: 'visa',
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: 'detected',
    });
    expect(data.lookup('378282246310005')).toEqual({
      bin: '378282',
      scheme: 'amex',
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: 'detected',
    });
  });

  it('knows nothing of a number whose scheme cannot be detected either', () => {
    expect(data.lookup('9999999999999999')).toEqual({
      bin: '999999',
      scheme: null,
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: 'unknown',
    });
  });

  it.each(['', '41111', '4111 1', '4111111111x11111', 'not a card'])(
    'knows nothing of %j: not a number of 6 digits or more',
    (input) => {
      expect(data.lookup(input)).toEqual({
        bin: '',
        scheme: null,
        cardType: null,
        issuerCountry: null,
        issuerName: null,
        source: 'unknown',
      });
    },
  );

  it('finds the rows of a licensed-size file (300,000 ranges of 6 and 8 digits)', () => {
    const rows: string[] = [];
    for (let i = 0; i < 150_000; i += 1) {
      const six = String(300_000 + i);
      rows.push(
        `${six},visa,credit,US,Bank ${six}`,
        `${six}${String(i % 100).padStart(2, '0')},mastercard,debit,DE,"Bank ${six}, refined"`,
      );
    }
    const large = csvOf(rows);
    expect(large.size).toBe(300_000);
    for (const i of [0, 1, 74_999, 149_999]) {
      const six = String(300_000 + i);
      const eight = `${six}${String(i % 100).padStart(2, '0')}`;
      expect(large.lookup(`${eight}12345678`)).toMatchObject({
        bin: six,
        scheme: 'mastercard',
        issuerCountry: 'DE',
        issuerName: `Bank ${six}, refined`,
        source: 'bin_file',
      });
      expect(large.lookup(`${six}${String((i + 1) % 100).padStart(2, '0')}12345678`)).toMatchObject({
        bin: six,
        scheme: 'visa',
        issuerCountry: 'US',
        issuerName: `Bank ${six}`,
      });
    }
    expect(large.lookup('4500001234567890')).toMatchObject({
      bin: '450000',
      scheme: 'visa',
      issuerCountry: null,
      source: 'detected',
    });
  });
});

describe('the shipped sample', () => {
  const sample = loadBinData({});

  it('is the file sampleBinFile names, and loads', () => {
    expect(path.isAbsolute(sampleBinFile)).toBe(true);
    expect(fs.existsSync(sampleBinFile)).toBe(true);
    expect(CsvBinData.fromFile(sampleBinFile).size).toBeGreaterThanOrEqual(14);
  });

  it.each([
    ['4111111111111111', 'visa', 'credit', 'US'],
    ['4111111111101203', 'visa', 'credit', 'US'],
    ['4111111111181072', 'visa', 'credit', 'US'],
    ['4111111211111110', 'visa', 'debit', 'IE'],
    ['4000058260000005', 'visa', 'debit', 'GB'],
    ['4012000033330026', 'visa', 'credit', 'FR'],
    ['4242424242424242', 'visa', 'credit', 'US'],
    ['5200000000001203', 'mastercard', 'credit', 'GB'],
    ['5240000000001072', 'mastercard', 'credit', 'DE'],
    ['5555555555554444', 'mastercard', 'credit', 'US'],
    ['2223000048400011', 'mastercard', 'prepaid', 'NL'],
    ['340000000022003', 'amex', 'credit', 'US'],
    ['340000000082072', 'amex', 'credit', 'US'],
    ['378282246310005', 'amex', 'credit', 'US'],
    ['3558111111121203', 'jcb', 'credit', 'JP'],
    ['3558111111121872', 'jcb', 'credit', 'JP'],
    ['8171998927611203', 'unionpay', 'debit', 'CN'],
    ['8171998927611872', 'unionpay', 'debit', 'CN'],
    ['6011000990139424', 'discover', 'credit', 'US'],
  ])('covers the test card %s: %s %s, issuer in %s', (number, scheme, cardType, issuerCountry) => {
    expect(sample.lookup(number)).toMatchObject({ scheme, cardType, issuerCountry, source: 'bin_file' });
  });

  it('leaves out 4000 0566 5566 5556, the "unknown issuer" card: visa, country unknown', () => {
    expect(sample.lookup('4000 0566 5566 5556')).toEqual({
      bin: '400005',
      scheme: 'visa',
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: 'detected',
    });
  });
});
