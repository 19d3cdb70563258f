/**
 * The card data scan that CI runs over the whole test run's data directories, logs, webhook bodies and Kafka
 * messages (scripts/scan-card-data.ts) must be able to fail: a test card number hidden in a SQLite page, a log line
 * or a nested directory, and a security code value, are each found and named (masked); a clean directory passes.
 * So are numbers in UTF-16, JSON-escaped and base64 form, numbers known only from the simulator's value files or
 * `packages/`, and a number in a Kafka message; a scan that read nothing fails.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { kafkaBrokersForTests } from '@switchyard/testing';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();

const root = path.resolve(__dirname, '../..');
const runScan = (args: string[]) =>
  spawnSync(process.execPath, ['-r', './scripts/register.cjs', 'scripts/scan-card-data.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
  });
const scan = (dir: string) => runScan(['--artifacts', dir, '--no-kafka']);

const dirs: string[] = [];
const fresh = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-scan-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

it('passes a directory without card data', () => {
  const dir = fresh();
  fs.writeFileSync(path.join(dir, 'service.log'), '{"level":30,"msg":"card 411111…1111 authorized"}\n');
  const result = scan(dir);
  expect(result.status).toBe(0);
  expect(result.stdout).toMatch(/card data scan: \d+ test card numbers .* 1 files .*: 0 found/);
});

it('finds a test card number in a SQLite file and a log, and a security code value, naming where (masked)', () => {
  const dir = fresh();
  fs.mkdirSync(path.join(dir, 'data', 'nested'), { recursive: true });
  const db = new Database(path.join(dir, 'data', 'nested', 'transactions.db'));
  db.exec('CREATE TABLE t (v TEXT)');
  db.prepare('INSERT INTO t VALUES (?)').run('pan 5555555555554444 kept by mistake');
  db.close();
  fs.writeFileSync(path.join(dir, 'embedded.log'), '{"msg":"request","body":{"security_code":"123"}}\n');
  const result = scan(dir);
  expect(result.status).toBe(1);
  expect(result.stderr).toContain('FOUND card number 555555…4444 in data/nested/transactions.db');
  expect(result.stderr).toMatch(/FOUND security code \(.*•••.*\) in embedded\.log/);
  expect(result.stderr).not.toContain('5555555555554444');
});

it('fails when it read nothing: an empty or missing artifacts directory is not a clean scan', () => {
  const empty = scan(fresh());
  expect(empty.status).toBe(2);
  expect(empty.stderr).toContain('card data scan read nothing: no file under');
  expect(scan(path.join(fresh(), 'missing')).status).toBe(2);
});

it('finds a number written as UTF-16, as JSON \\u escapes and inside base64', () => {
  const pan = '4111111111111111';
  for (const [name, content] of [
    ['utf16le.bin', Buffer.from(`card ${pan}`, 'utf16le')],
    ['utf16be.bin', Buffer.from(`card ${pan}`, 'utf16le').swap16()],
    ['escaped.json', Buffer.from(`{"n":"${[...pan].map((d) => `\\u00${d.charCodeAt(0).toString(16)}`).join('')}"}`)],
    ['header.log', Buffer.from(`authorization: Basic ${Buffer.from(`x:${pan}`).toString('base64')}\n`)],
    ['payload.log', Buffer.from(`{"data":"${Buffer.from(`{"pan":"${pan}"}`).toString('base64url')}"}\n`)],
  ] as const) {
    const dir = fresh();
    fs.writeFileSync(path.join(dir, name), content);
    const result = scan(dir);
    expect(result.status, `${name}: ${result.stdout}`).toBe(1);
    expect(result.stderr).toContain(`FOUND card number 411111…1111`);
  }
});

it("knows the numbers of the simulator's value files and of packages/, not only those of the specs", () => {
  // 4111111111150036: only in the simulator's account updater values (and docs/simulator.md).
  // 4455667711111110: in packages/secure-fields and its docs.
  const dir = fresh();
  fs.writeFileSync(path.join(dir, 'service.log'), 'a 4111111111150036 b 4455667711111110\n');
  const result = scan(dir);
  expect(result.status).toBe(1);
  expect(result.stderr).toContain('FOUND card number 411111…0036');
  expect(result.stderr).toContain('FOUND card number 445566…1110');
});

it('finds a number in a Kafka message, and fails when the topics it scans hold no message', async () => {
  const topic = `scan-card-data-${process.pid}-${Date.now()}`;
  const kafka = new Kafka({
    clientId: 'scan-card-data-spec',
    brokers: kafkaBrokersForTests(),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer();
  try {
    const noMessages = runScan(['--brokers', kafkaBrokersForTests().join(','), '--topics', `${topic}-none`]);
    expect(noMessages.status, noMessages.stdout + noMessages.stderr).toBe(2);
    expect(noMessages.stderr).toContain('no Kafka message');

    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await producer.connect();
    await producer.send({
      topic,
      messages: [
        { key: 'k', value: '{"clean":true}' },
        { key: 'k', value: '{"pan":"5555555555554444"}' },
      ],
    });
    const dir = fresh();
    fs.writeFileSync(path.join(dir, 'clean.log'), 'nothing here\n');
    const result = runScan(['--artifacts', dir, '--brokers', kafkaBrokersForTests().join(','), '--topics', topic]);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain('2 Kafka messages in 1 topics');
    expect(result.stderr).toContain(`FOUND card number 555555…4444 in kafka ${topic}/0@1`);
  } finally {
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}, 60_000);
