/**
 * Issue 23, item 1, distributed runtime: the client built from the sources (ESM) drives a payment, capture, refund, a
 * stored card, a gift card balance and a webhook subscription through the gateway of identity, transactions,
 * webhooks and the simulator as separate processes (Kafka, Redis), as the other distributed specs start them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeWithInfra } from '@switchyard/testing';
import { buildClientForTest, createKeyFile } from '../packages/client/test/built-client';
import { driveClientFlows } from '../packages/client/test/client-flows';
import { distributedInfrastructure, startDistributedRuntime, type DistributedRuntime } from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

describeWithInfra('@switchyard/client against the distributed runtime', infrastructure, () => {
  let runtime: DistributedRuntime;
  let build: Awaited<ReturnType<typeof buildClientForTest>>;
  let keyFile: string;
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-client-key-'));

  beforeAll(async () => {
    build = await buildClientForTest();
    runtime = await startDistributedRuntime({
      name: 'client',
      mockCard: true,
      env: { WEBHOOK_WORKER_INTERVAL_MS: '50' },
    });
    keyFile = await createKeyFile({ ...runtime.env }, keyDir, (_env, ...args) => runtime.cli(...args));
  }, 240_000);

  afterAll(async () => {
    await runtime?.stop();
    build?.remove();
    fs.rmSync(keyDir, { recursive: true, force: true });
  });

  it('the ES module build drives every flow', async () => {
    try {
      await driveClientFlows(await build.esm(), { baseUrl: runtime.baseUrl, keyFile });
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${runtime.describe()}`);
    }
  }, 120_000);
});
