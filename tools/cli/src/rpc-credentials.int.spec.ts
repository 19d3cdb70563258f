/**
 * `rpc-credentials create` as an operator runs it: a private directory of private files, one certificate per service
 * that each service loads through its settings, and `--ca-from` for new certificates under a running CA.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadRpcCredentials, rpcServiceNames } from '@switchyard/rpc';
import { runCli } from '@switchyard/testing';

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-rpc-credentials-cli-'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const mode = (file: string) => fs.statSync(file).mode & 0o777;

it('writes a CA and a certificate per service: directory 0700, files 0600, each loadable by its service', async () => {
  const out = path.join(root, 'first');
  const result = await runCli({}, 'rpc-credentials', 'create', '--out', out, '--days', '30');
  expect(result.code, result.stderr).toBe(0);
  const printed = JSON.parse(result.stdout) as { files: string[] };
  expect(printed.files.map((file) => path.basename(file)).sort()).toEqual(
    ['ca.crt', 'ca.key', ...rpcServiceNames.flatMap((name) => [`${name}.crt`, `${name}.key`])].sort(),
  );
  expect(mode(out)).toBe(0o700);
  for (const file of printed.files) expect(mode(file), file).toBe(0o600);
  for (const service of rpcServiceNames)
    expect(loadRpcCredentials(service, { RPC_CREDENTIALS_DIR: out }).service).toBe(service);
  // A certificate valid for 30 days, not a year.
  const validTo = new (await import('node:crypto')).X509Certificate(fs.readFileSync(path.join(out, 'identity.crt')))
    .validTo;
  expect(Date.parse(validTo) - Date.now()).toBeLessThan(31 * 24 * 3600 * 1000);
});

it('refuses to write over a set, and issues new certificates under an earlier CA with --ca-from', async () => {
  const first = path.join(root, 'first');
  const again = await runCli({}, 'rpc-credentials', 'create', '--out', first);
  expect(again.code).not.toBe(0);
  expect(again.stderr).toContain('already holds');

  const renewed = path.join(root, 'renewed');
  const result = await runCli({}, 'rpc-credentials', 'create', '--out', renewed, '--ca-from', first);
  expect(result.code, result.stderr).toBe(0);
  expect(fs.readFileSync(path.join(renewed, 'ca.crt'), 'utf8')).toBe(
    fs.readFileSync(path.join(first, 'ca.crt'), 'utf8'),
  );
  // A renewed certificate with the first set's CA file: the two sets interoperate during a rollout.
  const mixed = {
    RPC_TLS_CA_FILE: path.join(first, 'ca.crt'),
    RPC_TLS_CERT_FILE: path.join(renewed, 'gateway.crt'),
    RPC_TLS_KEY_FILE: path.join(renewed, 'gateway.key'),
  };
  expect(loadRpcCredentials('gateway', mixed).service).toBe('gateway');
});

it('names what is wrong with a service’s credentials', () => {
  const first = path.join(root, 'first');
  expect(() => loadRpcCredentials('identity', {})).toThrow(/needs its RPC credentials/);
  expect(() => loadRpcCredentials('identity', { RPC_CREDENTIALS_DIR: path.join(root, 'missing') })).toThrow(
    /cannot read .*ca\.crt \(ENOENT\)/,
  );
  const swapped = { RPC_CREDENTIALS_DIR: first, RPC_TLS_CERT_FILE: path.join(first, 'gateway.crt') };
  expect(() => loadRpcCredentials('identity', swapped)).toThrow(/names gateway, not identity/);
  const otherKey = { RPC_CREDENTIALS_DIR: first, RPC_TLS_KEY_FILE: path.join(first, 'gateway.key') };
  expect(() => loadRpcCredentials('identity', otherKey)).toThrow(/is not the certificate's/);
  expect(() =>
    loadRpcCredentials('identity', { RPC_CREDENTIALS_DIR: first }, new Date(Date.now() + 40 * 24 * 3600 * 1000)),
  ).toThrow(/expired/);
});
