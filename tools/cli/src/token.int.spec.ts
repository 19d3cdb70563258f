/** `token --embed / --checkout-session-id` (docs/embed-tokens.md): the pins reach the gateway; a bad pin is refused before signing. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { startEmbedded, type EmbeddedService } from '@switchyard/standalone';
import { runCli } from '@switchyard/testing';
import pino from 'pino';

const BUYER = 'b6a0a8a4-0c3e-4d43-8f43-93d3f2a7c111';
const OTHER_BUYER = 'c1d2e3f4-0000-4000-8000-000000000002';
const SESSION = '7d0cf9bc-58f5-4b1c-9a0c-2a4b8f3f6e01';

let dataDir: string;
let keyFile: string;
const cli = (...args: string[]) => runCli({ DATA_DIR: dataDir }, ...args);
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.trim().split('.')[1]!, 'base64url').toString('utf8'));

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-cli-token-'));
  const created = await cli('api-keys', 'create', '--display-name', 'checkout backend', '--role', 'integration');
  expect(created.code, created.stderr).toBe(0);
  keyFile = path.join(dataDir, 'key.json');
  fs.writeFileSync(keyFile, created.stdout);
});

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it('signs the pins and the session binding into the token, which the gateway applies', async () => {
  const signed = await cli(
    'token',
    '--key-file',
    keyFile,
    '--scope',
    'embed',
    '--embed',
    JSON.stringify({ amount: 1299, currency: 'USD', buyer_id: BUYER, metadata: { order: 'A-1' } }),
    '--checkout-session-id',
    SESSION,
  );
  expect(signed.code, signed.stderr).toBe(0);
  expect(signed.stderr).toBe('');
  expect(claimsOf(signed.stdout)).toMatchObject({
    scopes: ['embed'],
    embed: { amount: 1299, currency: 'USD', buyer_id: BUYER, metadata: { order: 'A-1' } },
    checkout_session_id: SESSION,
  });

  const service: EmbeddedService = await startEmbedded(
    loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
    pino({ level: 'silent' }),
  );
  try {
    await service.gateway.app.listen(0, '127.0.0.1');
    const url = await service.gateway.app.getUrl();
    const list = (buyer: string) =>
      fetch(`${url}/buyers/gift-cards?buyer_id=${buyer}`, {
        headers: { authorization: `Bearer ${signed.stdout.trim()}` },
      });
    expect((await list(BUYER)).status).toBe(200);
    const other = await list(OTHER_BUYER);
    expect(other.status).toBe(403);
    expect((await other.json()) as { message: string }).toMatchObject({
      code: 'forbidden',
      message: `buyer_id ${OTHER_BUYER} does not match the buyer_id ${BUYER} this embed token is limited to`,
    });
  } finally {
    await service.stop();
  }
});

it('says that pins apply to embed-scoped calls only when the token has no embed scope', async () => {
  const signed = await cli('token', '--key-file', keyFile, '--embed', '{"amount":5}');
  expect(signed.code).toBe(0);
  expect(signed.stderr).toMatch(/pin only calls made through the embed scope/);
  expect(claimsOf(signed.stdout)).toMatchObject({ scopes: ['*.read', '*.write'], embed: { amount: 5 } });
});

it.each([
  [['--embed', '{amount: 1299}'], /option '--embed <json>' argument .* is invalid\. not valid JSON/],
  [['--embed', '{"amount":"1299"}'], /the token claim embed is not valid \(amount: must be an integer/],
  [['--embed', '{"amout":1299}'], /unknown key "amout"/],
  [['--embed', '[1299]'], /it must be an object of amount, currency, buyer_id, buyer_external_identifier, metadata/],
  [['--embed', '{"currency":"usd"}'], /currency: must be an ISO 4217 code/],
  [
    ['--checkout-session-id', 'session-1'],
    /option '--checkout-session-id <uuid>' argument 'session-1' is invalid\. must be a checkout session id \(a UUID\)/,
  ],
])('refuses %j with a clear error, a non-zero exit and no token', async (args, reason) => {
  const result = await cli('token', '--key-file', keyFile, '--scope', 'embed', ...args);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(reason);
  expect(result.stdout).toBe('');
});
