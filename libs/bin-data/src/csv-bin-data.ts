/**
 * The default BIN data adapter: a CSV of BIN ranges held in memory, one map per prefix length (6 to 11 digits), the
 * longest matching prefix winning — a lookup is at most six map probes, whatever the file's size. Numbers no row
 * covers get their scheme from the number's pattern (`detectScheme`). Loading fails on the first bad row, naming
 * the file and the line: a licensed file with a broken row must not quietly lose issuers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cardSchemeValues } from '@switchyard/contracts';
import type { BinData, CardBinInfo, CardType } from './bin-data';
import { detectScheme } from './detect-scheme';

const header = 'bin,scheme,type,issuer_country,issuer_name';
const shortestPrefix = 6;
const longestPrefix = 11;
const cardTypes: ReadonlySet<string> = new Set<CardType>(['credit', 'debit', 'prepaid']);
/** The API's card scheme names (its `card_scheme` enum). */
const wireSchemes: ReadonlySet<string> = new Set(cardSchemeValues);
const nothingKnown: CardBinInfo = {
  bin: '',
  scheme: null,
  cardType: null,
  issuerCountry: null,
  issuerName: null,
  source: 'unknown',
};

/** The sample shipped with the library: fictitious issuers covering the simulator's test cards. */
export const sampleBinFile = path.resolve(__dirname, '../data/bin-ranges.sample.csv');

type Row = Pick<CardBinInfo, 'scheme' | 'cardType' | 'issuerCountry' | 'issuerName'>;

export class CsvBinData implements BinData {
  /** `prefixes[n]`: the rows whose bin has n digits. */
  private constructor(
    private readonly prefixes: ReadonlyArray<ReadonlyMap<string, Row>>,
    /** How many BIN ranges were loaded (for a start-up log line). */
    readonly size: number,
  ) {}

  static fromFile(file: string): CsvBinData {
    return CsvBinData.fromString(fs.readFileSync(file, 'utf8'), file);
  }

  /** `sourceName` names the text in errors (`<sourceName>:<line>: ...`). */
  static fromString(text: string, sourceName: string): CsvBinData {
    const prefixes = Array.from({ length: longestPrefix + 1 }, () => new Map<string, Row>());
    let headerSeen = false;
    let size = 0;
    text
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/)
      .forEach((line, index) => {
        const where = `${sourceName}:${index + 1}`;
        if (line.trim() === '' || line.trimStart().startsWith('#')) return;
        if (!headerSeen) {
          if (line.trim() !== header) throw new Error(`${where}: the header must be exactly "${header}"`);
          headerSeen = true;
          return;
        }
        const cells = parseCsvLine(line, where);
        if (cells.length !== 5) throw new Error(`${where}: expected 5 columns (${header}), found ${cells.length}`);
        const [bin = '', scheme = '', type = '', country = '', name = ''] = cells;
        if (!/^\d{6,11}$/.test(bin))
          throw new Error(`${where}: bin "${bin}" must be ${shortestPrefix} to ${longestPrefix} digits`);
        if (!wireSchemes.has(scheme))
          throw new Error(`${where}: scheme "${scheme}" is not a card scheme name (visa, mastercard, amex, ...)`);
        if (type !== '' && !cardTypes.has(type))
          throw new Error(`${where}: type "${type}" must be credit, debit, prepaid or empty`);
        if (country !== '' && !/^[A-Z]{2}$/.test(country))
          throw new Error(
            `${where}: issuer_country "${country}" must be an ISO 3166-1 alpha-2 code in upper case, or empty`,
          );
        const rows = prefixes[bin.length] as Map<string, Row>;
        if (rows.has(bin)) throw new Error(`${where}: bin ${bin} is listed twice`);
        rows.set(bin, {
          scheme,
          cardType: type === '' ? null : (type as CardType),
          issuerCountry: country === '' ? null : country,
          issuerName: name === '' ? null : name,
        });
        size += 1;
      });
    if (!headerSeen) throw new Error(`${sourceName}: no header line "${header}"`);
    return new CsvBinData(prefixes, size);
  }

  lookup(cardNumber: string): CardBinInfo {
    const digits = cardNumber.replace(/[\s-]/g, '');
    if (!/^\d{6,}$/.test(digits)) return nothingKnown;
    const bin = digits.slice(0, shortestPrefix);
    for (let length = Math.min(longestPrefix, digits.length); length >= shortestPrefix; length -= 1) {
      const row = this.prefixes[length]?.get(digits.slice(0, length));
      if (row) return { bin, ...row, source: 'bin_file' };
    }
    const scheme = detectScheme(digits);
    return {
      bin,
      scheme,
      cardType: null,
      issuerCountry: null,
      issuerName: null,
      source: scheme ? 'detected' : 'unknown',
    };
  }
}

/**
 * One CSV line (RFC 4180 within a line): commas separate cells; a cell may be enclosed in double quotes, then it
 * may hold commas and `""` stands for a quote. Cells are trimmed.
 */
function parseCsvLine(line: string, where: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  let closed = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line.charAt(i);
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') {
        quoted = false;
        closed = true;
      } else cell += char;
    } else if (char === ',') {
      cells.push(cell.trim());
      cell = '';
      closed = false;
    } else if (char === '"' && cell.trim() === '' && !closed) {
      quoted = true;
      cell = '';
    } else if (char === '"' || (closed && char.trim() !== '')) {
      throw new Error(`${where}: column ${cells.length + 1}: a quote may only enclose a whole cell`);
    } else cell += char;
  }
  if (quoted) throw new Error(`${where}: column ${cells.length + 1}: a quoted cell is not closed`);
  cells.push(cell.trim());
  return cells;
}

/** The operator's file when given (the BIN_DATA_FILE setting), else the shipped sample. */
export function loadBinData(options: { file?: string }): BinData {
  return CsvBinData.fromFile(options.file ?? sampleBinFile);
}
