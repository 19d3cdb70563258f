/**
 * `examples/first-payment/first-payment.mjs`, as its README says to run it: the client built into
 * `packages/client/dist`, a key file from the CLI, `node first-payment.mjs` against the embedded runtime. Its code is
 * the client README's "first payment in ten lines", word for word.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../../services/standalone/src/embedded.fixture';
import { buildClient, clientRoot } from '../build/bundle';
import { createKeyFile } from './built-client';

const example = path.resolve(clientRoot, '../../examples/first-payment/first-payment.mjs');

describe('examples/first-payment', () => {
  it('is the client README’s first payment, in ten lines', () => {
    const code = fs.readFileSync(example, 'utf8').trimEnd();
    expect(code.split('\n')).toHaveLength(10);
    expect(fs.readFileSync(path.join(clientRoot, 'README.md'), 'utf8')).toContain(`\`\`\`js\n${code}\n\`\`\``);
  });

  describe('run against the embedded runtime', () => {
    let fixture: EmbeddedFixture;
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-first-payment-'));

    beforeAll(async () => {
      await buildClient();
      fixture = await startEmbeddedFixture('first-payment', {}, { listen: true });
      const keyFile = await createKeyFile({ DATA_DIR: fixture.dataDir }, workDir);
      fs.renameSync(keyFile, path.join(workDir, 'demo-key.json'));
    }, 180_000);

    afterAll(async () => {
      await fixture?.stop();
      fs.rmSync(workDir, { recursive: true, force: true });
    });

    it('pays, captures and refunds', async () => {
      const baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
      // The key reaches the running server within its poll interval; the example is run as a merchant would, once.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [example],
          { cwd: workDir, env: { ...process.env, SWITCHYARD_URL: baseUrl } },
          (error, out, err) =>
            resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout: out, stderr: err }),
        ),
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/^[0-9a-f-]{36} authorization_succeeded (succeeded|processing)\n$/);
    }, 60_000);
  });
});
