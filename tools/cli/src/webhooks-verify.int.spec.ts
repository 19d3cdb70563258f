/** `webhooks verify` as an operator runs it: a separate process, a body file, headers as received, the exit code. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '@switchyard/testing';
import { signatureHeaders } from '@switchyard/webhook-signature';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-webhooks-verify-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const rawBody = '{"type":"event","id":"e1","name":"refund.succeeded","target":{"note":"café ☕"}}';
const bodyFile = path.join(dir, 'body.json');
fs.writeFileSync(bodyFile, rawBody);
const headerArgs = (headers: Record<string, string>) =>
  Object.entries(headers).flatMap(([name, value]) => ['--header', `${name}: ${value}`]);
const signedNow = (secrets: string[]) =>
  signatureHeaders({ webhookId: 'wh_42', secrets, rawBody, timestamp: Math.floor(Date.now() / 1000) });
const verify = (...args: string[]) => runCli({}, 'webhooks', 'verify', ...args);

describe('webhooks verify', () => {
  it('prints valid with the webhook id and exits 0, with the secret among several', async () => {
    const result = await verify(
      '--secret',
      'whsec_old',
      '--secret',
      'whsec_new',
      '--body-file',
      bodyFile,
      ...headerArgs(signedNow(['whsec_new'])),
    );
    expect(result).toEqual({ code: 0, stdout: 'valid (webhook id wh_42)\n', stderr: '' });
  });

  it('prints the reason and exits 1 for a wrong secret, with nothing on stdout', async () => {
    const result = await verify(
      '--secret',
      'whsec_wrong',
      '--body-file',
      bodyFile,
      ...headerArgs(signedNow(['whsec_new'])),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^invalid: no_matching_signature \(/);
  });

  it('refuses an old request unless --tolerance-seconds allows it', async () => {
    const old = signatureHeaders({
      webhookId: 'wh_42',
      secrets: ['s'],
      rawBody,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    const stale = await verify('--secret', 's', '--body-file', bodyFile, ...headerArgs(old));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(
      /^invalid: stale_timestamp \(signed at .*, 36\d\d s ago, beyond the tolerance of 300 s/,
    );
    expect(
      (await verify('--secret', 's', '--body-file', bodyFile, '--tolerance-seconds', '7200', ...headerArgs(old))).code,
    ).toBe(0);
  });

  it('exits non-zero on usage errors: no secret, a malformed header, a missing body file', async () => {
    const noSecret = await verify('--body-file', bodyFile, ...headerArgs(signedNow(['s'])));
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toMatch(/required option '--secret/);
    const badHeader = await verify('--secret', 's', '--body-file', bodyFile, '--header', 'x-service-webhook-id=wh_42');
    expect(badHeader.code).toBe(2);
    expect(badHeader.stderr).toMatch(/expected 'name: value'/);
    const noFile = await verify(
      '--secret',
      's',
      '--body-file',
      path.join(dir, 'absent.json'),
      ...headerArgs(signedNow(['s'])),
    );
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toMatch(/ENOENT/);
  });
});
