/**
 * What counts as card data when a test looks for it where it must not be (issues 11 and 19): every test card number
 * of the tree and any security code value, also in UTF-16, JSON-escaped or base64 form. Used by the CI scan
 * (`scripts/scan-card-data.ts`: data directories, logs, webhook bodies, Kafka) and by the isolation spec
 * (`tests/data-protection/card-isolation.e2e.spec.ts`: heap snapshots as well, through `heap-snapshots.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '../../..');

export interface CardDataFinding {
  readonly where: string;
  /** What was found, the number masked: `card number 411111…1111 (base64)`, `security code ("cvv": •••)`. */
  readonly what: string;
}

export function luhn(digits: string): boolean {
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    total += digit;
  }
  return total % 10 === 0;
}

/** Where test card numbers live in the tree (generated figures such as bench results are left out: timings). */
const sourceFile = /\.(ts|tsx|js|mjs|cjs|json|md|ya?ml|html)$/;
const notSources = new Set(['node_modules', 'dist', 'coverage', 'results', 'package-lock.json']);

/**
 * Every test card number in the tree: Luhn-valid 13–19 digit literals starting 2–6 in any source, document or
 * value file (test specs, the simulator's value files, `packages/`, docs, fixtures), not only in the specs.
 */
export function testCardNumbers(root: string = repoRoot): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (notSources.has(entry.name) || entry.name.startsWith('.')) continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (sourceFile.test(entry.name)) {
        for (const match of fs.readFileSync(file, 'utf8').matchAll(/(?<![\d])([2-6]\d{12,18})(?![\d])/g)) {
          const digits = match[1] as string;
          if (luhn(digits)) found.add(digits);
        }
      }
    }
  };
  walk(root);
  return [...found].sort();
}

/** A security code as a value: `"security_code":"123"`, `security_code=123`, `"cvv": "1234"`, `securityCode`. */
const securityCodePattern = /["']?(?:security_?code|securityCode|cvv|cvc|cvv2)["']?\s*[:=]\s*["']?\d{3,4}(?!\d)/gi;

/** The property names a security code is held under, in a request body or an object. */
export const securityCodeNames: ReadonlySet<string> = new Set(['security_code', 'securityCode', 'cvv', 'cvc', 'cvv2']);

export const maskCardNumber = (pan: string) => `${pan.slice(0, 6)}…${pan.slice(-4)}`;

/** A security code's match with its digits hidden, for a finding. */
export const maskSecurityCode = (match: string) => `security code (${match.replace(/\d/g, '•')})`;

type Form = { readonly form: string; readonly text: string };

/** JSON `\u00XX` escapes and base64 runs (decoded: a number inside an encoded payload or header). */
function textForms(text: string): Form[] {
  const forms: Form[] = [{ form: '', text }];
  if (/\\u00[0-9a-f]{2}/i.test(text)) {
    const unescaped = text.replace(/\\u00([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    forms.push({ form: ' (JSON-escaped)', text: unescaped });
  }
  const base64Runs = text.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [];
  if (base64Runs.length > 0) {
    const decoded = base64Runs.map((run) =>
      Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'),
    );
    forms.push({ form: ' (base64)', text: decoded.join('\n') });
  }
  return forms;
}

function scanForms(forms: readonly Form[], where: string, pans: readonly string[], findings: CardDataFinding[]): void {
  for (const { form, text } of forms) {
    for (const pan of pans)
      if (text.includes(pan)) findings.push({ where, what: `card number ${maskCardNumber(pan)}${form}` });
    // Security codes in plain text only: three or four digits turn up by chance in decoded binary.
    if (form !== '') continue;
    for (const match of text.matchAll(securityCodePattern)) findings.push({ where, what: maskSecurityCode(match[0]) });
  }
}

/** Card data in a text (a log line, a Kafka message, the strings of a heap), plain or encoded. */
export function scanText(text: string, where: string, pans: readonly string[], findings: CardDataFinding[]): void {
  scanForms(textForms(text), where, pans, findings);
}

/**
 * Card data in bytes (a file, a SQLite page, a WAL frame): read as latin1, which keeps every byte, and, when there
 * are zero bytes, as UTF-16 (either byte order, at either byte offset), besides the forms of `scanText`.
 */
export function scanBytes(bytes: Buffer, where: string, pans: readonly string[], findings: CardDataFinding[]): void {
  const forms = textForms(bytes.toString('latin1'));
  if (bytes.includes(0)) {
    forms.push({ form: ' (UTF-16)', text: bytes.toString('utf16le') });
    // Big-endian, or little-endian at an odd offset: read one byte on (padded, so the last character stays).
    forms.push({ form: ' (UTF-16)', text: Buffer.concat([bytes.subarray(1), Buffer.alloc(1)]).toString('utf16le') });
  }
  scanForms(forms, where, pans, findings);
}
