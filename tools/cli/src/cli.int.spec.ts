/** The operator CLI as an operator runs it: a separate process writing to the data directory of a server. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { startEmbedded, type EmbeddedService } from '@switchyard/standalone';
import { signToken, runCli } from '@switchyard/testing';
import pino from 'pino';

const cli = (dataDir: string, ...args: string[]) => runCli({ DATA_DIR: dataDir }, ...args);

const dirs: string[] = [];
const freshDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-cli-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

async function startServer(dataDir: string): Promise<{ service: EmbeddedService; url: string }> {
  const service = await startEmbedded(
    loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', POLL_INTERVAL_MS: '100' }),
    pino({ level: 'silent' }),
  );
  await service.gateway.app.listen(0, '127.0.0.1');
  return { service, url: await service.gateway.app.getUrl() };
}

describe('api-keys create', () => {
  it('prints exactly one JSON object whose key works against a running server within 2 seconds', async () => {
    const dataDir = freshDir();
    const { service, url } = await startServer(dataDir);
    try {
      const result = await cli(dataDir, 'api-keys', 'create', '--display-name', 'ops', '--role', 'administrator');
      expect(result.code).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(Object.keys(printed).sort()).toEqual(['id', 'kid', 'merchant_account_ids', 'private_key', 'role_ids']);
      expect(printed.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(printed.merchant_account_ids).toEqual([]);

      const token = await signToken({ kid: printed.kid, privateKeyPem: printed.private_key, scopes: ['*.read'] });
      const createdAt = Date.now();
      let status = 0;
      while (Date.now() - createdAt < 2_000) {
        status = (await fetch(`${url}/roles`, { headers: { authorization: `Bearer ${token}` } })).status;
        if (status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it('works with the server stopped; the key works once it starts', async () => {
    const dataDir = freshDir();
    const account = await cli(dataDir, 'merchant-accounts', 'create', '--id', 'shop-1', '--display-name', 'Shop one');
    expect(account.code).toBe(0);
    expect(JSON.parse(account.stdout)).toMatchObject({
      type: 'merchant-account',
      id: 'shop-1',
      display_name: 'Shop one',
    });
    const result = await cli(
      dataDir,
      'api-keys',
      'create',
      '--display-name',
      'shop',
      '--role',
      'integration',
      '--merchant-account',
      'shop-1',
    );
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed.merchant_account_ids).toEqual(['shop-1']);

    const { service, url } = await startServer(dataDir);
    try {
      const token = await signToken({ kid: printed.kid, privateKeyPem: printed.private_key, scopes: ['roles.read'] });
      expect((await fetch(`${url}/roles`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it.each([
    [['--role', 'key-manager'], /stand alone/],
    [['--role', 'administrator', '--role', 'analyst'], /administrator must be the only role/],
    [['--role', 'pii-viewer', '--role', 'integration'], /needs one of these roles beside it: analyst/],
    [['--role', 'no-such-role'], /unknown role/],
    [['--role', 'integration', '--merchant-account', 'nowhere'], /unknown merchant account: nowhere/],
  ])('refuses %j with the reason and a non-zero exit, printing nothing on stdout', async (args, reason) => {
    const result = await cli(freshDir(), 'api-keys', 'create', '--display-name', 'bad', ...args);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(reason);
    expect(result.stdout).toBe('');
  });

  it('refuses a duplicate merchant account', async () => {
    const dataDir = freshDir();
    expect((await cli(dataDir, 'merchant-accounts', 'create', '--id', 'm1', '--display-name', 'M')).code).toBe(0);
    const again = await cli(dataDir, 'merchant-accounts', 'create', '--id', 'm1', '--display-name', 'M');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already exists/);
  });
});

describe('api-keys revoke', () => {
  it('revokes a key of a running server: its tokens are refused within 2 seconds, and an unknown id is an error', async () => {
    const dataDir = freshDir();
    const { service, url } = await startServer(dataDir);
    try {
      const created = JSON.parse(
        (await cli(dataDir, 'api-keys', 'create', '--display-name', 'leaked', '--role', 'administrator')).stdout,
      );
      const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key, scopes: ['*.read'] });
      const status = () =>
        fetch(`${url}/roles`, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status);
      await vi.waitFor(async () => expect(await status()).toBe(200), { timeout: 2_000, interval: 50 });

      const revoked = await cli(dataDir, 'api-keys', 'revoke', '--id', created.id);
      expect(revoked.code).toBe(0);
      expect(JSON.parse(revoked.stdout)).toMatchObject({ id: created.id, active: false });
      const revokedAt = Date.now();
      await vi.waitFor(async () => expect(await status()).toBe(401), { timeout: 2_000, interval: 50 });
      expect(Date.now() - revokedAt).toBeLessThan(2_000);

      const unknown = await cli(dataDir, 'api-keys', 'revoke', '--id', '00000000-0000-4000-8000-000000000000');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/could not be found/);
      expect(unknown.stdout).toBe('');
    } finally {
      await service.stop();
    }
  });
});
