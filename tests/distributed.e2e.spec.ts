/**
 * The distributed runtime: the gateway and the identity service as separate OS processes, talking over NestJS
 * TCP (request/reply), Kafka (identity.events, which the gateway's key cache follows) and Redis (the shared cache
 * of verified tokens). The operator CLI writes a key into identity's store; the gateway serves it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaAvailability } from '@switchyard/bus/src/contract';
import { defaultRedisUrl } from '@switchyard/kv';
import { probeRedis } from '@switchyard/kv/src/contract';
import {
  describeWithInfra,
  freePort,
  kafkaBrokersForTests,
  runCli,
  signToken,
  startTsProcess,
  waitFor,
  type Availability,
  type RunningProcess,
} from '@switchyard/testing';

const [kafka, redis] = await Promise.all([kafkaAvailability(kafkaBrokersForTests()), probeRedis()]);
const infrastructure: Availability = !kafka.available ? kafka : redis;

describeWithInfra('distributed runtime: gateway, identity and transactions as separate processes', infrastructure, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-distributed-'));
  let identity: RunningProcess;
  let transactions: RunningProcess;
  let gateway: RunningProcess;
  let secondGateway: RunningProcess;
  let baseUrl: string;
  let secondUrl: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const [rpcPort, transactionsPort, httpPort, secondPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    env = {
      DATA_DIR: dataDir,
      IDENTITY_RPC_URL: `tcp://127.0.0.1:${rpcPort}`,
      TRANSACTIONS_RPC_URL: `tcp://127.0.0.1:${transactionsPort}`,
      KAFKA_BROKERS: kafkaBrokersForTests().join(','),
      REDIS_URL: defaultRedisUrl(),
      PORT: String(httpPort),
      LOG_LEVEL: 'warn',
    };
    baseUrl = `http://127.0.0.1:${httpPort}`;
    identity = startTsProcess('services/identity/src/main.ts', env);
    transactions = startTsProcess('services/transactions/src/main.ts', env);
    gateway = startTsProcess('services/gateway/src/main.ts', env);
    secondGateway = startTsProcess('services/gateway/src/main.ts', { ...env, PORT: String(secondPort) });
    secondUrl = `http://127.0.0.1:${secondPort}`;
    for (const url of [baseUrl, secondUrl]) {
      await waitFor(
        `gateway ${url} ready`,
        async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
        60_000,
        () => `identity:\n${identity.output()}\ntransactions:\n${transactions.output()}\ngateway:\n${gateway.output()}\nsecond gateway:\n${secondGateway.output()}`,
      );
    }
  });

  afterAll(async () => {
    await Promise.all([gateway?.kill('SIGTERM'), secondGateway?.kill('SIGTERM'), identity?.kill('SIGTERM'), transactions?.kill('SIGTERM')]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports every adapter on /readyz', async () => {
    const body = await (await fetch(`${baseUrl}/readyz`)).json();
    expect(body).toEqual({ status: 'ready', checks: { identity: 'ok', transactions: 'ok', bus: 'ok', cache: 'ok' } });
  });

  it('lists roles through the gateway with a key the CLI made while both run', async () => {
    const { stdout } = await runCli(env, 'api-keys', 'create', '--display-name', 'e2e', '--role', 'analyst');
    const key = JSON.parse(stdout) as { id: string; kid: string; private_key: string };
    const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['*.read'] });

    const roles = await waitFor(
      'the new key accepted',
      async () => {
        const response = await fetch(`${baseUrl}/roles`, { headers: { authorization: `Bearer ${token}` } });
        return response.status === 200 ? ((await response.json()) as { items: { slug: string }[] }) : undefined;
      },
      2_000,
    );
    expect(roles.items).toHaveLength(6);

    const forbidden = await signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['buyers.read'] });
    expect((await fetch(`${baseUrl}/roles`, { headers: { authorization: `Bearer ${forbidden}` } })).status).toBe(403);

    // The identity process relayed the key's event to Kafka, where the gateway's key cache follows it.
    const consumer = new Kafka({ clientId: 'e2e-check', brokers: kafkaBrokersForTests(), logLevel: logLevel.NOTHING }).consumer({
      groupId: `e2e-check-${Date.now()}`,
      maxWaitTimeInMs: 50,
    });
    await consumer.connect();
    await consumer.subscribe({ topic: 'identity.events', fromBeginning: true });
    const seen = new Promise<string>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const event = JSON.parse(message.value?.toString() ?? '{}') as { type: string; data: { id?: string } };
          if (event.type === 'ApiKeyPairCreated' && event.data.id === key.id) resolve(message.headers?.['event-id']?.toString() ?? '');
        },
      });
    });
    const eventId = await Promise.race([seen, new Promise<string>((_, reject) => setTimeout(() => reject(new Error('no ApiKeyPairCreated on identity.events within 15 s')), 15_000))]);
    expect(eventId).toMatch(/.+/);
    await consumer.disconnect();
  });

  it('revokes a key on its very next request, and on another gateway instance through identity.events', async () => {
    const cli = async (...args: string[]) => JSON.parse((await runCli(env, ...args)).stdout) as { id: string; kid: string; private_key: string };
    const manager = await cli('api-keys', 'create', '--display-name', 'manager', '--role', 'key-manager', '--role', 'analyst');
    const target = await cli('api-keys', 'create', '--display-name', 'target', '--role', 'integration');
    const managerToken = await signToken({ kid: manager.kid, privateKeyPem: manager.private_key });
    const targetToken = await signToken({ kid: target.kid, privateKeyPem: target.private_key, scopes: ['roles.read'] });
    const roles = (url: string) => fetch(`${url}/roles`, { headers: { authorization: `Bearer ${targetToken}` } }).then((r) => r.status);

    // Both gateways know (and cache) the key.
    await waitFor('the key accepted by both gateways', async () => ((await roles(baseUrl)) === 200 && (await roles(secondUrl)) === 200 ? true : undefined), 5_000);

    const revoked = await fetch(`${baseUrl}/api-key-pairs/${target.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${managerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ active: false }),
    });
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();
    expect(await roles(baseUrl)).toBe(401); // the gateway that made the change: the very next request
    await waitFor('the other gateway refusing the key', async () => ((await roles(secondUrl)) === 401 ? true : undefined), 5_000);
    console.log(`revocation reached the second gateway through identity.events in ${Date.now() - revokedAt} ms`);
  });

  it('answers 401 in the spec body through the separate processes', async () => {
    const response = await fetch(`${baseUrl}/roles`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'error', code: 'unauthorized', status: 401 });
  });
});
