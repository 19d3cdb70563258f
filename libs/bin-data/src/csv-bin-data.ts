/**
 * The default BIN data adapter: a CSV of BIN ranges held in memory, one map per prefix length (6 to 11 digits), the
 * longest matching prefix winning — a lookup is at most six map probes, whatever the file's size. Numbers no row
 * covers get their scheme from the number's pattern (`detectScheme`). Loading fails on the first bad row, naming
 * the file and the line: a licensed file with a broken row must not quietly lose issuers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { detectScheme, type BinData, type CardBinInfo, type CardType } from './bin-data';

const HEADER = 'bin,scheme,type,issuer_country,issuer_name';
const MIN_PREFIX = 6;
const MAX_PREFIX = 11;
const cardTypes: ReadonlySet<string> = new Set<CardType>(['credit', 'debit', 'prepaid']);
const schemes: ReadonlySet<string> = new Set([
  'accel', 'amex', 'bancontact', 'carte-bancaire', 'cirrus', 'culiance', 'dankort', 'diners-club', 'discover',
  'eftpos-australia', 'elo', 'hipercard', 'jcb', 'maestro', 'mastercard', 'mir', 'nyce', 'other', 'pulse', 'qcard',
  'rupay', 'star', 'uatp', 'unionpay', 'visa',
]);

/** The sample shipped with the library (fictitious issuers covering the simulator's test cards). */
export const sampleBinFile = path.resolve(__dirname, '../data/bin-ranges.sample.csv');

interface Row {
  readonly scheme: string;
  readonly cardType: CardType | null;
  readonly issuerCountry: string | null;
  readonly issuerName: string | null;
}

export class CsvBinData implements BinData {
  private constructor(private readonly byLength: ReadonlyMap<number, ReadonlyMap<string, Row>>, readonly rows: number) {}

  static fromFile(file: string): CsvBinData {
    return CsvBinData.fromString(fs.readFileSync(file, 'utf8'), file);
  }

  static fromString(text: string, sourceName: string): CsvBinData {
    const byLength = new Map<number, Map<string, Row>>();
    for (let length = MIN_PREFIX; length <= MAX_PREFIX; length += 1) byLength.set(length, new Map());
    let header = false;
    let rows = 0;
    text.split(/\r?\n/).forEach((line, index) => {
      const where = `${sourceName}:${index + 1}`;
      if (line.trim() === '' || line.startsWith('#')) return;
      if (!header) {
        if (line.trim() !== HEADER) throw new Error(`${where}: the header must be exactly "${HEADER}"`);
        header = true;
        return;
      }
      const cells = parseCsvLine(line, where);
      if (cells.length !== 5) throw new Error(`${where}: expected 5 columns (${HEADER}), found ${cells.length}`);
      const [bin = '', scheme = '', type = '', country = '', name = ''] = cells;
      if (!/^\d+$/.test(bin) || bin.length < MIN_PREFIX || bin.length > MAX_PREFIX) throw new Error(`${where}: bin "${bin}" must be ${MIN_PREFIX} to ${MAX_PREFIX} digits`);
      if (!schemes.has(scheme)) throw new Error(`${where}: scheme "${scheme}" is not a card scheme name (visa, mastercard, amex, ...)`);
      if (type !== '' && !cardTypes.has(type)) throw new Error(`${where}: type "${type}" must be credit, debit, prepaid or empty`);
      if (country !== '' && !/^[A-Z]{2}$/.test(country)) throw new Error(`${where}: issuer_country "${country}" must be an ISO 3166-1 alpha-2 code (upper case) or empty`);
      const table = byLength.get(bin.length) as Map<string, Row>;
      if (table.has(bin)) throw new Error(`${where}: bin ${bin} is listed twice`);
      table.set(bin, { scheme, cardType: type === '' ? null : (type as CardType), issuerCountry: country === '' ? null : country, issuerName: name === '' ? null : name });
      rows += 1;
    });
    if (!header) throw new Error(`${sourceName}: no header line "${HEADER}"`);
    return new CsvBinData(byLength, rows);
  }

  lookup(cardNumber: string): CardBinInfo {
    const digits = cardNumber.replace(/[\s-]/g, '');
    if (!/^\d+$/.test(digits) || digits.length < MIN_PREFIX) return { bin: '', scheme: null, cardType: null, issuerCountry: null, issuerName: null, source: 'unknown' };
    const bin = digits.slice(0, MIN_PREFIX);
    for (let length = Math.min(MAX_PREFIX, digits.length); length >= MIN_PREFIX; length -= 1) {
      const row = this.byLength.get(length)?.get(digits.slice(0, length));
      if (row) return { bin, ...row, source: 'bin_file' };
    }
    const scheme = detectScheme(digits);
    return { bin, scheme, cardType: null, issuerCountry: null, issuerName: null, source: scheme ? 'detected' : 'unknown' };
  }
}

/** One CSV line: commas separate, double quotes enclose a cell that may hold commas, `""` is a quote. */
function parseCsvLine(line: string, where: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"' && cell === '') quoted = true;
    else if (char === ',') {
      cells.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  if (quoted) throw new Error(`${where}: a quoted cell is not closed`);
  cells.push(cell.trim());
  return cells;
}

/** The operator's file when given (BIN_DATA_FILE), else the shipped sample. */
export function loadBinData(options: { file?: string }): CsvBinData {
  return CsvBinData.fromFile(options.file ?? sampleBinFile);
}
