/**
 * Issue 23, item 3: the webhook signature as docs/events.md states it — the HMAC key is the whole secret string — is
 * what the sender computes, on the documented test vector; and examples/webhook-receiver-python verifies it, run with
 * python3 when there is one (otherwise a SKIP line says why).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeWithInfra, freePort, repoRoot, waitFor, type Availability } from '@switchyard/testing';
import { signatureHeaders, signPayload, verifyWebhook } from '@switchyard/webhook-signature';

const documented = fs.readFileSync(path.join(repoRoot, 'docs/events.md'), 'utf8');
const field = (name: string): string => {
  const match = new RegExp(`^${name}:\\s+(.+)$`, 'm').exec(documented);
  if (!match?.[1]) throw new Error(`docs/events.md has no "${name}:" line in its test vector`);
  return match[1];
};
const vector = {
  secret: field('secret'),
  timestamp: Number(field('timestamp')),
  body: field('body'),
  signature: field('signature'),
};
const receiverDir = path.join(repoRoot, 'examples/webhook-receiver-python');

describe('the documented webhook signature', () => {
  it('is the sender’s, on the test vector: HMAC-SHA256 keyed with the whole secret string', () => {
    expect(vector.secret.startsWith('whsec_')).toBe(true);
    expect(signPayload(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature);
    const headers = signatureHeaders({
      webhookId: 'wh_vector',
      secrets: [vector.secret],
      rawBody: vector.body,
      timestamp: vector.timestamp,
    });
    expect(headers['x-service-webhook-signatures']).toBe(vector.signature);
    expect(
      verifyWebhook({
        rawBody: vector.body,
        headers,
        secrets: [vector.secret],
        now: () => new Date(vector.timestamp * 1000),
      }),
    ).toEqual({ ok: true, webhookId: 'wh_vector', timestamp: vector.timestamp });
  });
});

const python: Availability =
  spawnSync('python3', ['--version']).status === 0
    ? { available: true }
    : { available: false, reason: 'python3 is not installed: the Python receiver example is not run' };

function runPython(code: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('python3', ['-c', code, ...args], { cwd: receiverDir }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describeWithInfra(
  'examples/webhook-receiver-python',
  python,
  () => {
    it('signs and verifies the documented test vector', async () => {
      const code = [
        'import sys, receiver',
        'secret, timestamp, body = sys.argv[1], sys.argv[2], sys.argv[3].encode()',
        'print(receiver.sign(secret, timestamp, body))',
        "headers = {'x-service-webhook-id': 'wh_vector', 'x-service-webhook-timestamp': timestamp, 'x-service-webhook-signatures': sys.argv[4]}",
        'print(receiver.verify(headers, body, [secret], now=int(timestamp)))',
        "print(receiver.verify(headers, body, ['whsec_other'], now=int(timestamp)))",
        'print(receiver.verify(headers, body, [secret]))',
      ].join('\n');
      const result = await runPython(code, vector.secret, String(vector.timestamp), vector.body, vector.signature);
      expect(result.stderr).toBe('');
      expect(result.stdout.split('\n')).toEqual([
        vector.signature,
        "(True, 'wh_vector')",
        "(False, 'no_matching_signature')",
        "(False, 'stale_timestamp')",
        '',
      ]);
    });

    it('behind its server: handles a signed delivery once, refuses a forged one', async () => {
      const port = await freePort();
      const receiver = spawn('python3', [path.join(receiverDir, 'receiver.py')], {
        env: { ...process.env, WEBHOOK_SECRETS: 'whsec_old,whsec_new', PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      receiver.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      receiver.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await waitFor(
          'the Python receiver listening',
          async () => (output.includes('listening') ? true : undefined),
          15_000,
          () => output,
        );
        const deliver = (body: string, secrets: string[], webhookId = 'wh_py_1') =>
          fetch(`http://127.0.0.1:${port}/`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...signatureHeaders({ webhookId, secrets, rawBody: body, timestamp: Math.floor(Date.now() / 1000) }),
            },
            body,
          });
        const first = await deliver(vector.body, ['whsec_new']);
        expect([first.status, await first.text()]).toEqual([200, 'ok\n']);
        const again = await deliver(vector.body, ['whsec_new']);
        expect([again.status, await again.text()]).toEqual([200, 'duplicate: already handled\n']);
        const forged = await deliver(vector.body.replace('capture_succeeded', 'refunded'), ['whsec_forger'], 'wh_py_2');
        expect([forged.status, await forged.text()]).toEqual([400, 'invalid webhook: no_matching_signature\n']);
        await waitFor(
          'the event printed',
          async () => (output.includes('transaction.captured') ? true : undefined),
          5_000,
          () => output,
        );
        expect(output).toContain(
          '2025-03-01T10:00:00.000Z transaction.captured transaction 6f1c2e8b-0a01-4c61-9d11-5b3ac0a47e2a (capture_succeeded) [webhook wh_py_1]',
        );
        expect(output.match(/transaction\.captured/g)).toHaveLength(1);
      } finally {
        receiver.kill('SIGTERM');
      }
    });
  },
  { optional: true },
);
