/**
 * The card data scan that CI runs over the whole test run's data directories, logs, webhook bodies and Kafka
 * messages (scripts/scan-card-data.ts) must be able to fail: a test card number hidden in a SQLite page, a log line
 * or a nested directory, and a security code value, are each found and named (masked); a clean directory passes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

const root = path.resolve(__dirname, '../..');
const scan = (dir: string) =>
  spawnSync(process.execPath, ['-r', './scripts/register.cjs', 'scripts/scan-card-data.ts', '--artifacts', dir, '--no-kafka'], { cwd: root, encoding: 'utf8' });

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
