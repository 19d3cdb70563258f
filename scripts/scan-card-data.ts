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
 * What counts as card data, and its forms, is `libs/testing/src/card-data.ts` (the isolation spec scans with it too).
 *
 *   node -r ./scripts/register.cjs scripts/scan-card-data.ts [--artifacts DIR]
 *     [--brokers 127.0.0.1:9092 [--topics PREFIX] | --no-kafka] [--out FILE]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { scanBytes, testCardNumbers, type CardDataFinding } from '../libs/testing/src/card-data';

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

function scanFiles(
  dir: string,
  pans: readonly string[],
  findings: CardDataFinding[],
): { files: number; bytes: number } {
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

async function scanKafka(
  pans: readonly string[],
  findings: CardDataFinding[],
): Promise<{ topics: number; messages: number }> {
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
            scanBytes(
              Buffer.from(
                `${message.key?.toString('latin1') ?? ''}\n${message.value?.toString('latin1') ?? ''}\n${JSON.stringify(message.headers ?? {})}`,
                'latin1',
              ),
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
  const findings: CardDataFinding[] = [];
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
