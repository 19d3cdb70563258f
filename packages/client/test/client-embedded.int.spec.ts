/**
 * Issue 23, item 1: the client built from the sources (ESM and CommonJS) drives a payment, capture, refund, a stored
 * card, a gift card balance and a webhook subscription through the embedded runtime (`npm start`'s), in process.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../../services/standalone/src/embedded.fixture';
import { buildClientForTest, createKeyFile } from './built-client';
import { driveClientFlows } from './client-flows';

let fixture: EmbeddedFixture;
let build: Awaited<ReturnType<typeof buildClientForTest>>;
let baseUrl: string;
let keyFile: string;
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-client-key-'));

beforeAll(async () => {
  build = await buildClientForTest();
  fixture = await startEmbeddedFixture(
    'client',
    { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_WORKER_INTERVAL_MS: '50' },
    { listen: true },
  );
  baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
  keyFile = await createKeyFile({ DATA_DIR: fixture.dataDir }, keyDir);
}, 180_000);

afterAll(async () => {
  await fixture?.stop();
  build?.remove();
  fs.rmSync(keyDir, { recursive: true, force: true });
});

describe('@switchyard/client against the embedded runtime', () => {
  it('the ES module build drives every flow', async () => {
    await driveClientFlows(await build.esm(), { baseUrl, keyFile });
  }, 90_000);

  it('the CommonJS build drives every flow', async () => {
    await driveClientFlows(build.cjs(), { baseUrl, keyFile });
  }, 90_000);

  it('the build has declarations for its entry point', () => {
    expect(fs.readFileSync(build.built.types, 'utf8')).toContain("from './client.js'");
  });
});
