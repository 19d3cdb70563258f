/**
 * The gateway when what it depends on is down: an unreachable Redis (its shared token cache) costs nothing but the
 * cache — requests are still verified and served; an unreachable identity service makes requests that need it fail
 * with 502 in the spec's body and /readyz report not ready, while /healthz stays up.
 */
import { InProcessMessageBus } from '@switchyard/bus';
import { IdentityService } from '@switchyard/identity';
import { RedisKeyValueStore } from '@switchyard/kv';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import {
  expectErrorBody,
  freePort,
  rpcCredentialsForTests,
  signToken,
  createTestDataDir,
  removeTestDataDir,
} from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from './start-gateway';

let dataDir: string;
let storage: ServiceStorage;
let identity: IdentityService;
let key: { kid: string; privateKeyPem: string };
const running: RunningGateway[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dataDir = createTestDataDir('degraded');
  storage = openServiceStorage('identity', { dataDir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.start();
  const created = await identity.apiKeyPairs.create(
    { display_name: 'reader', roles: ['analyst'] },
    { kind: 'operator' },
  );
  key = { kid: created.kid, privateKeyPem: created.private_key! };
});

afterAll(async () => {
  for (const gateway of running) await gateway.stop();
  for (const close of closers) await close();
  await identity.stop();
  await storage.close();
  removeTestDataDir(dataDir);
});

async function gatewayWith(rpc: InProcessRpc | TcpRpcClient, sharedCache?: RedisKeyValueStore): Promise<request.Agent> {
  const bus = new InProcessMessageBus();
  closers.push(
    () => bus.close(),
    () => rpc.close(),
    ...(sharedCache ? [() => sharedCache.close()] : []),
  );
  const gateway = await startGateway({
    rpc,
    bus,
    ...(sharedCache ? { sharedCache } : {}),
    clockSkewSeconds: 30,
    keyUsageFlushMs: 60_000,
  });
  running.push(gateway);
  return request.agent(gateway.app.getHttpServer());
}

describe('with Redis unreachable', () => {
  it('still verifies and serves requests (the shared cache is only an optimisation), and says so on /readyz', async () => {
    const rpc = new InProcessRpc();
    rpc.register(identity.rpcHandlers());
    const redis = new RedisKeyValueStore({ url: `redis://127.0.0.1:${await freePort()}` });
    const http = await gatewayWith(rpc, redis);
    const token = await signToken({ ...key, scopes: ['roles.read'] });
    for (let attempt = 0; attempt < 3; attempt += 1)
      await http.get('/roles').set('authorization', `Bearer ${token}`).expect(200);
    const readiness = await http.get('/readyz').expect(503);
    expect(readiness.body).toMatchObject({
      status: 'not_ready',
      checks: { identity: 'ok', bus: 'ok', cache: expect.stringMatching(/^unavailable/) },
    });
  });
});

describe('with the identity service unreachable', () => {
  it('answers 502 in the spec body, keeps /healthz up and /readyz not ready', async () => {
    const credentials = (await rpcCredentialsForTests()).of('gateway');
    const rpc = new TcpRpcClient({
      host: '127.0.0.1',
      port: await freePort(),
      service: 'identity',
      credentials,
      timeoutMs: 1_000,
    });
    const http = await gatewayWith(rpc);
    const token = await signToken({ ...key, scopes: ['roles.read'] });
    const response = await http.get('/roles').set('authorization', `Bearer ${token}`).expect(502);
    expectErrorBody(response.body, 502, 'bad_gateway');
    expect(response.body.message).toBe('Request could not be processed');
    await http.get('/healthz').expect(200);
    expect((await http.get('/readyz').expect(503)).body.checks.identity).toMatch(/^unavailable/);
  });
});
