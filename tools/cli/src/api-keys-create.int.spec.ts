/**
 * Issue 23, item 3, the CLI's first-hour traps: `api-keys create --out FILE` writes the private key 0600 (and never
 * to standard output), and the CLI says so when it writes a key into a data directory no running server reads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IDENTITY_READER_FILE } from '@switchyard/config';
import { runCli } from '@switchyard/testing';
import { startEmbeddedFixture } from '../../../services/standalone/src/embedded.fixture';

const dirs: string[] = [];
const freshDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-cli-keys-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const create = (env: Record<string, string>, ...extra: string[]) =>
  runCli(env, 'api-keys', 'create', '--display-name', 'backend', '--role', 'administrator', ...extra);

describe('api-keys create --out FILE', () => {
  it('writes the key file readable by its owner only, and prints the key without its private key', async () => {
    const dataDir = freshDir();
    const keyFile = path.join(freshDir(), 'backend-key.json');
    const result = await create({ DATA_DIR: dataDir }, '--out', keyFile);
    expect(result.code, result.stderr).toBe(0);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const written = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({
      id: expect.any(String),
      kid: expect.any(String),
      private_key: expect.stringContaining('PRIVATE KEY'),
    });
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toEqual({
      id: written.id,
      kid: written.kid,
      role_ids: written.role_ids,
      merchant_account_ids: written.merchant_account_ids,
      key_file: keyFile,
    });
    expect(result.stdout).not.toContain('PRIVATE KEY');
  });

  it('replaces a file of looser mode instead of writing into it', async () => {
    const keyFile = path.join(freshDir(), 'key.json');
    fs.writeFileSync(keyFile, 'old', { mode: 0o644 });
    const result = await create({ DATA_DIR: freshDir() }, '--out', keyFile);
    expect(result.code, result.stderr).toBe(0);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(['key.json']);
  });
});

describe('a key written where no server reads', () => {
  it('is stored, with a note naming the data directory', async () => {
    const dataDir = freshDir();
    const result = await create({ DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`note: no running Switchyard server reads ${dataDir}`);
    expect(result.stderr).toContain(`DATA_DIR=${dataDir}`);
  });

  it('is noted too when the file was left by a server that is gone', async () => {
    const dataDir = freshDir();
    fs.writeFileSync(
      path.join(dataDir, IDENTITY_READER_FILE),
      JSON.stringify({ pid: 2 ** 22 + 17, runtime: 'embedded', started_at: new Date().toISOString() }),
    );
    const result = await create({ DATA_DIR: dataDir });
    expect(result.stderr).toContain('note: no running Switchyard server reads');
  });

  it('is not noted when a running server reads the data directory, whose file goes when it stops', async () => {
    const fixture = await startEmbeddedFixture('cli-keys-running');
    try {
      expect(JSON.parse(fs.readFileSync(path.join(fixture.dataDir, IDENTITY_READER_FILE), 'utf8'))).toMatchObject({
        pid: process.pid,
        runtime: 'embedded',
      });
      const result = await create({ DATA_DIR: fixture.dataDir });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    } finally {
      await fixture.stop();
    }
    expect(fs.existsSync(path.join(fixture.dataDir, IDENTITY_READER_FILE))).toBe(false);
  });
});
