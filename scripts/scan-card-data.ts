/**
 * The data-protection scan (issue 11, item 5), run by `.ci/run` after the whole test run: every kept data directory
 * (event stores, read models, vaults, idempotency records), every log line the services wrote, every webhook body
 * the test receivers got (all under SWITCHYARD_TEST_ARTIFACTS, see libs/testing/src/artifacts.ts) and every message
 * of every Kafka topic on the test broker are searched for every test card number (each Luhn-valid 13–19 digit
 * literal of the test sources) and for any security code value (`security_code`, `cvv`, `cvc` with digits).
 * Prints what it read; exits 1, naming each place (the number masked), when anything is found.
 *
 * A number is also found in UTF-16, JSON-escaped or base64 form. Exits 2 when it read nothing (no file under the
 * artifacts folder, or no message on the broker it scanned): an empty scan is not a clean one.
 *
 *   node -r ./scripts/register.cjs scripts/scan-card-data.ts [--artifacts DIR]
 *     [--brokers 127.0.0.1:9092 [--topics PREFIX] | --no-kafka] [--out FILE]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';

const root = path.resolve(__dirname, '..');
const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const artifactsDir = arg('artifacts') ?? process.env.SWITCHYARD_TEST_ARTIFACTS;
const brokers = (arg('brokers') ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const outFile = arg('out');
/** Files only (the scan's own test plants card numbers in a directory; the test broker is other tests' business). */
const skipKafka = process.argv.includes('--no-kafka');
/** Only the topics whose name starts with this (the scan's own test scans the topic it planted a number in). */
const topicPrefix = arg('topics') ?? '';

function luhn(digits: string): boolean {
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
function testCardNumbers(): string[] {
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

interface Finding {
  readonly where: string;
  readonly what: string;
}

const mask = (pan: string) => `${pan.slice(0, 6)}…${pan.slice(-4)}`;

/**
 * The forms a number can hide in besides plain text: UTF-16 (either byte order, at either byte offset), JSON
 * `\u00XX` escapes, and base64 runs (decoded: a number inside an encoded payload or header).
 */
function decodedForms(bytes: Buffer): Array<{ readonly form: string; readonly text: string }> {
  const latin1 = bytes.toString('latin1');
  const forms = [{ form: '', text: latin1 }];
  if (bytes.includes(0)) {
    forms.push({ form: ' (UTF-16)', text: bytes.toString('utf16le') });
    // Big-endian, or little-endian at an odd offset: read one byte on (padded, so the last character stays).
    forms.push({ form: ' (UTF-16)', text: Buffer.concat([bytes.subarray(1), Buffer.alloc(1)]).toString('utf16le') });
  }
  if (/\\u00[0-9a-f]{2}/i.test(latin1)) {
    const unescaped = latin1.replace(/\\u00([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    forms.push({ form: ' (JSON-escaped)', text: unescaped });
  }
  const base64Runs = latin1.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [];
  if (base64Runs.length > 0) {
    const decoded = base64Runs.map((run) =>
      Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'),
    );
    forms.push({ form: ' (base64)', text: decoded.join('\n') });
  }
  return forms;
}

function scanText(text: string, where: string, pans: readonly string[], findings: Finding[]): void {
  scanBytes(Buffer.from(text, 'latin1'), where, pans, findings);
}

function scanBytes(bytes: Buffer, where: string, pans: readonly string[], findings: Finding[]): void {
  for (const { form, text } of decodedForms(bytes)) {
    for (const pan of pans) if (text.includes(pan)) findings.push({ where, what: `card number ${mask(pan)}${form}` });
    // Security codes in plain text only: three or four digits turn up by chance in decoded binary.
    if (form !== '') continue;
    for (const match of text.matchAll(securityCodePattern)) {
      findings.push({ where, what: `security code (${match[0].replace(/\d/g, '•')})` });
    }
  }
}

function scanFiles(dir: string, pans: readonly string[], findings: Finding[]): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) {
        const content = fs.readFileSync(file);
        files += 1;
        bytes += content.length;
        // latin1 keeps every byte: a number inside a SQLite page or a WAL frame is found as well.
        scanBytes(content, path.relative(dir, file), pans, findings);
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

async function scanKafka(pans: readonly string[], findings: Finding[]): Promise<{ topics: number; messages: number }> {
  const kafka = new Kafka({ clientId: 'card-data-scan', brokers, logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter(
      (topic) => !topic.startsWith('__') && topic.startsWith(topicPrefix),
    );
    const ends = new Map<string, Map<number, bigint>>();
    let expected = 0n;
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(topic);
      const byPartition = new Map<number, bigint>();
      for (const o of offsets) {
        byPartition.set(o.partition, BigInt(o.high));
        expected += BigInt(o.high) - BigInt(o.low);
      }
      ends.set(topic, byPartition);
    }
    if (topics.length === 0 || expected === 0n) return { topics: topics.length, messages: 0 };
    const consumer = kafka.consumer({ groupId: `card-data-scan-${Date.now()}` });
    await consumer.connect();
    let messages = 0;
    const done = new Set<string>();
    const partitions = [...ends.entries()].flatMap(([topic, byPartition]) =>
      [...byPartition.entries()].filter(([, high]) => high > 0n).map(([partition]) => `${topic}/${partition}`),
    );
    await consumer.subscribe({ topics, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Kafka scan incomplete after 120 s: ${messages} messages read`)),
        120_000,
      );
      consumer
        .run({
          eachMessage: async ({ topic, partition, message }) => {
            messages += 1;
            const where = `kafka ${topic}/${partition}@${message.offset}`;
            scanText(
              `${message.key?.toString('latin1') ?? ''}\n${message.value?.toString('latin1') ?? ''}\n${JSON.stringify(message.headers ?? {})}`,
              where,
              pans,
              findings,
            );
            if (BigInt(message.offset) + 1n >= (ends.get(topic)?.get(partition) ?? 0n))
              done.add(`${topic}/${partition}`);
            if (partitions.every((p) => done.has(p))) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();
    return { topics: topics.length, messages };
  } finally {
    await admin.disconnect();
  }
}

async function main(): Promise<void> {
  const pans = testCardNumbers();
  const findings: Finding[] = [];
  const files =
    artifactsDir && fs.existsSync(artifactsDir) ? scanFiles(artifactsDir, pans, findings) : { files: 0, bytes: 0 };
  const kafka = skipKafka ? { topics: 0, messages: 0 } : await scanKafka(pans, findings);
  const summary = {
    test_card_numbers: pans.length,
    files_scanned: files.files,
    bytes_scanned: files.bytes,
    kafka_topics: kafka.topics,
    kafka_messages: kafka.messages,
    findings: findings.length,
    at: new Date().toISOString(),
  };
  console.log(
    `card data scan: ${pans.length} test card numbers and every security code value, over ${files.files} files (${(files.bytes / 1e6).toFixed(1)} MB: data directories, service logs, webhook bodies) and ${kafka.messages} Kafka messages in ${kafka.topics} topics: ${findings.length} found`,
  );
  if (outFile) {
    fs.mkdirSync(path.dirname(outFile), { recursive: true });
    fs.writeFileSync(outFile, `${JSON.stringify({ ...summary, found: findings.slice(0, 50) }, null, 2)}\n`);
  }
  if (!artifactsDir) console.log('card data scan: SWITCHYARD_TEST_ARTIFACTS is not set, so only Kafka was scanned');
  // "0 found" over nothing proves nothing: a scan that read no file, or no message of the broker it was asked to
  // scan, fails.
  const readNothing = [
    ...(artifactsDir && files.files === 0 ? [`no file under ${artifactsDir}`] : []),
    ...(!skipKafka && kafka.messages === 0 ? [`no Kafka message on ${brokers.join(',')}`] : []),
  ];
  if (readNothing.length > 0) {
    console.error(`card data scan read nothing: ${readNothing.join('; ')}`);
    process.exit(2);
  }
  if (findings.length > 0) {
    for (const finding of findings.slice(0, 50)) console.error(`  FOUND ${finding.what} in ${finding.where}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(`card data scan failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
});
