/**
 * Key files: created once with mode 0600, reused, never replaced when corrupt, configured keys first,
 * race-safe creation.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeKey, loadOrCreateKey } from './keys';

let dir: string;
const repoRoot = path.resolve(__dirname, '../../..');

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-keys-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const options = { fileName: 'things.key', settingName: 'THINGS_KEY' };

it('creates <dataDir>/<fileName> with mode 0600 once and reuses it', () => {
  const dataDir = path.join(dir, 'data');
  const created = loadOrCreateKey({ ...options, dataDir });
  const file = path.join(dataDir, 'things.key');
  expect(created).toHaveLength(32);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64').equals(created)).toBe(true);
  expect(loadOrCreateKey({ ...options, dataDir }).equals(created)).toBe(true);
  expect(fs.readdirSync(dataDir)).toEqual(['things.key']);
  // Another file name in the same directory is another key.
  const other = loadOrCreateKey({ fileName: 'other.key', settingName: 'OTHER_KEY', dataDir });
  expect(other.equals(created)).toBe(false);
  expect(fs.readdirSync(dataDir).sort()).toEqual(['other.key', 'things.key']);
});

it('keeps an existing key file and refuses a corrupt one without replacing it or showing its content', () => {
  const existing = Buffer.alloc(32, 7);
  fs.writeFileSync(path.join(dir, 'things.key'), `${existing.toString('base64url')}\n`, { mode: 0o600 });
  expect(loadOrCreateKey({ ...options, dataDir: dir }).equals(existing)).toBe(true);

  fs.writeFileSync(path.join(dir, 'things.key'), 'not-a-key-but-a-secret-looking-value');
  let message = '';
  try {
    loadOrCreateKey({ ...options, dataDir: dir });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toMatch(/things\.key does not hold base64 of exactly 32 bytes/);
  expect(message).not.toContain('secret-looking');
  expect(fs.readFileSync(path.join(dir, 'things.key'), 'utf8')).toBe('not-a-key-but-a-secret-looking-value');
});

it('takes a configured key in base64 or base64url before any key file, and names the setting when it is malformed', () => {
  const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i));
  expect(loadOrCreateKey({ ...options, configured: bytes.toString('base64'), dataDir: dir }).equals(bytes)).toBe(true);
  expect(loadOrCreateKey({ ...options, configured: bytes.toString('base64url') }).equals(bytes)).toBe(true);
  expect(fs.existsSync(path.join(dir, 'things.key'))).toBe(false);

  for (const configured of [
    Buffer.alloc(31, 9).toString('base64'),
    Buffer.alloc(33, 9).toString('base64'),
    'my-secret-passphrase',
    '',
  ]) {
    let message = '';
    try {
      loadOrCreateKey({ ...options, configured });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^THINGS_KEY must be base64 or base64url of exactly 32 bytes/);
    if (configured) expect(message).not.toContain(configured);
  }
});

it('gives a random key per call without a data directory', () => {
  expect(loadOrCreateKey(options).equals(loadOrCreateKey(options))).toBe(false);
  expect(decodeKey(Buffer.alloc(32, 1).toString('base64'))).toEqual(Buffer.alloc(32, 1));
  expect(decodeKey('short')).toBeNull();
});

it('gives every process racing to create the file the same key', async () => {
  const racers = 4;
  const startAt = Date.now() + 2_500; // every child has compiled and loaded the module by then
  const script = `
    const { loadOrCreateKey } = require(${JSON.stringify(path.join(repoRoot, 'libs/service/src/keys.ts'))});
    setTimeout(() => process.stdout.write(loadOrCreateKey({ fileName: 'race.key', settingName: 'RACE_KEY', dataDir: ${JSON.stringify(dir)} }).toString('hex')),
      Math.max(0, ${startAt} - Date.now()));`;
  const run = () =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', path.join(repoRoot, 'scripts/register.cjs'), '-e', script], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`racer exited ${code}: ${err}`))));
    });
  const keys = await Promise.all(Array.from({ length: racers }, run));
  expect(new Set(keys).size).toBe(1);
  expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
  expect(fs.readdirSync(dir)).toEqual(['race.key']);
  expect(Buffer.from(fs.readFileSync(path.join(dir, 'race.key'), 'utf8').trim(), 'base64').toString('hex')).toBe(
    keys[0],
  );
});

it('keeps key files 0600 in a 0700 directory whatever the umask, and narrows a key file left wider', () => {
  const previousUmask = process.umask(0);
  try {
    const dataDir = path.join(dir, 'umask-0');
    loadOrCreateKey({ ...options, dataDir });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dataDir, 'things.key')).mode & 0o777).toBe(0o600);
    fs.chmodSync(path.join(dataDir, 'things.key'), 0o644);
    loadOrCreateKey({ ...options, dataDir });
    expect(fs.statSync(path.join(dataDir, 'things.key')).mode & 0o777).toBe(0o600);
  } finally {
    process.umask(previousUmask);
  }
});
