/**
 * The enumeration-prevention rate limit at the gateway's HTTP edge, with a fake RPC client standing in for the
 * services and an in-memory limiter on a clock the test moves, so every boundary is exact: which requests count,
 * against which bucket, the 429 body and its Retry-After.
 */
import { randomUUID } from 'node:crypto';
import { generateP521KeyPair, thumbprint, type KeyRecord } from '@switchyard/auth';
import { InProcessMessageBus } from '@switchyard/bus';
import { FallbackRateLimiter, InMemoryRateLimiter, RedisRateLimiter } from '@switchyard/kv';
import { expectErrorBody, signToken } from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../start-gateway';
import { FakeRpc } from '../testing/fake-rpc';

const PER_MINUTE = 3;

let now = 0;
let limiter: InMemoryRateLimiter;
let gateway: RunningGateway;
let bus: InProcessMessageBus;
let http: () => request.Agent;
let rpc: FakeRpc;
let integration: { kid: string; privateKeyPem: string };
let noEmbed: { kid: string; privateKeyPem: string };

async function keyRecord(
  permissions: string[],
): Promise<{ record: KeyRecord; signing: { kid: string; privateKeyPem: string } }> {
  const pair = generateP521KeyPair();
  const kid = await thumbprint(pair.publicJwk);
  return {
    record: { id: randomUUID(), kid, publicJwk: pair.publicJwk, active: true, permissions, merchantAccountIds: [] },
    signing: { kid, privateKeyPem: pair.privateKeyPem },
  };
}

beforeAll(async () => {
  // As the integration role: processing scopes and `embed`.
  const withEmbed = await keyRecord([
    'transactions.read',
    'transactions.write',
    'gift-cards.read',
    'gift-cards.write',
    'embed',
  ]);
  const withoutEmbed = await keyRecord(['gift-cards.read', 'gift-cards.write']);
  integration = withEmbed.signing;
  noEmbed = withoutEmbed.signing;
  rpc = new FakeRpc([withEmbed.record, withoutEmbed.record]);
  bus = new InProcessMessageBus();
  limiter = new InMemoryRateLimiter({ clock: () => now });
  gateway = await startGateway({
    rpc,
    bus,
    clockSkewSeconds: 30,
    keyUsageFlushMs: 60_000,
    rateLimiter: limiter,
    enumerationLimitPerMinute: PER_MINUTE,
  });
  const server = gateway.app.getHttpServer();
  http = () => request.agent(server);
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
  await limiter?.close();
});

beforeEach(() => {
  now += 3_600_000; // every bucket of an earlier test is full again
});

const embedToken = () => signToken({ ...integration, scopes: ['embed'], expiresIn: 600 });
const serverToken = () =>
  signToken({ ...integration, scopes: ['transactions.write', 'gift-cards.read', 'gift-cards.write'], expiresIn: 600 });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const giftCard = { number: '7000001234567890123', pin: '1234' };
/** The three embed-token endpoints, each with a body it accepts. */
const embedEndpoints: readonly ((token: string) => request.Test)[] = [
  (token) =>
    http()
      .post('/gift-cards/balances')
      .set(bearer(token))
      .send({ items: [giftCard] }),
  (token) => http().post('/gift-cards').set(bearer(token)).send(giftCard),
  (token) =>
    http()
      .post('/transactions')
      .set(bearer(token))
      .send({ amount: 1299, currency: 'USD', payment_method: { method: 'checkout-session', id: randomUUID() } }),
];
const fields = (sessionId: string, method: 'post' | 'put' = 'post') =>
  http()
    [method](`/checkout/sessions/${sessionId}/fields`)
    .send({ payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30' } });

function expectTooManyRequests(response: request.Response, retryAfterSeconds: number): void {
  expect(response.status).toBe(429);
  expectErrorBody(response.body, 429, 'too_many_requests');
  expect(response.headers['retry-after']).toBe(String(retryAfterSeconds));
}

describe('an embed token', () => {
  it('gets PER_MINUTE requests across the three endpoints together, then 429 with Retry-After in whole seconds', async () => {
    const token = await embedToken();
    const statuses = [];
    for (let call = 0; call < PER_MINUTE; call += 1) statuses.push((await embedEndpoints[call % 3]!(token)).status);
    expect(statuses).toEqual([200, 201, 201]);
    for (const endpoint of embedEndpoints) {
      const refused = await endpoint(token);
      // One request comes back every 60 / 3 = 20 s.
      expectTooManyRequests(refused, 20);
      expect(refused.body.message).toMatch(/at most 3 a minute for an embed token/);
    }
  });

  it('gets one request back per emission interval, and Retry-After counts down, rounded up', async () => {
    const token = await embedToken();
    for (let call = 0; call < PER_MINUTE; call += 1) await embedEndpoints[0]!(token).expect(200);
    now += 12_500;
    expectTooManyRequests(await embedEndpoints[1]!(token), 8); // 7.5 s left
    now += 7_499;
    expectTooManyRequests(await embedEndpoints[1]!(token), 1); // 1 ms left
    now += 1;
    await embedEndpoints[1]!(token).expect(201);
    expectTooManyRequests(await embedEndpoints[2]!(token), 20);
  });

  it('does not count against another embed token, even of the same key', async () => {
    const first = await embedToken();
    const second = await embedToken();
    for (let call = 0; call < PER_MINUTE; call += 1) await embedEndpoints[2]!(first).expect(201);
    expectTooManyRequests(await embedEndpoints[2]!(first), 20);
    for (let call = 0; call < PER_MINUTE; call += 1) await embedEndpoints[2]!(second).expect(201);
  });

  it('counts requests that fail validation: the guard runs before the body is read', async () => {
    const token = await embedToken();
    for (let call = 0; call < PER_MINUTE; call += 1)
      await http().post('/transactions').set(bearer(token)).send({}).expect(422);
    expectTooManyRequests(await embedEndpoints[0]!(token), 20);
  });

  it('does not count requests the auth guard refused, nor its requests to endpoints without the limit', async () => {
    const token = await embedToken();
    // A token of a key whose roles do not grant `embed`: 403 before the limit.
    const refusedByRoles = await signToken({ ...noEmbed, scopes: ['embed'], expiresIn: 600 });
    for (let call = 0; call < 2 * PER_MINUTE; call += 1)
      expect((await embedEndpoints[0]!(refusedByRoles)).status).toBe(403);
    // GET /buyers/gift-cards takes embed tokens but is not an enumeration endpoint.
    for (let call = 0; call < 2 * PER_MINUTE; call += 1) {
      expect(
        (await http().get('/buyers/gift-cards').query({ buyer_external_identifier: 'b-1' }).set(bearer(token))).status,
      ).not.toBe(429);
    }
    for (let call = 0; call < PER_MINUTE; call += 1) await embedEndpoints[0]!(token).expect(200);
    expectTooManyRequests(await embedEndpoints[0]!(token), 20);
  });
});

describe('a server-to-server token', () => {
  it('is never limited, on every endpoint of the limit', async () => {
    const token = await serverToken();
    for (let call = 0; call < 30 * PER_MINUTE; call += 1) {
      expect((await embedEndpoints[call % 3]!(token)).status).not.toBe(429);
    }
  });

  it('is not limited when it carries `embed` beside the scope the endpoint took it by', async () => {
    const token = await signToken({ ...integration, scopes: ['gift-cards.read', 'embed'], expiresIn: 600 });
    for (let call = 0; call < 10 * PER_MINUTE; call += 1) await embedEndpoints[0]!(token).expect(200);
  });
});

describe('a checkout session', () => {
  it('gets PER_MINUTE field requests (POST and PUT together), then 429, without a token', async () => {
    const session = randomUUID();
    await fields(session, 'post').expect(204);
    await fields(session, 'put').expect(204);
    await fields(session, 'post').expect(204);
    const refused = await fields(session, 'put');
    expectTooManyRequests(refused, 20);
    expect(refused.body.message).toMatch(/at most 3 a minute for a checkout session/);
  });

  it('is one bucket whatever the case of its id, apart from other sessions', async () => {
    const session = randomUUID();
    await fields(session).expect(204);
    await fields(session.toUpperCase()).expect(204);
    await fields(session).expect(204);
    expectTooManyRequests(await fields(session.toUpperCase()), 20);
    await fields(randomUUID()).expect(204);
  });

  it('does not count a path that is no session id (validation refuses it)', async () => {
    for (let call = 0; call < 2 * PER_MINUTE; call += 1) await fields('not-a-session').expect(422);
  });
});

describe('with Redis unreachable (the distributed runtime’s limiter, main.ts)', () => {
  let degraded: RunningGateway;
  let redis: RedisRateLimiter;
  let local: InMemoryRateLimiter;
  const warnings: unknown[] = [];

  beforeAll(async () => {
    redis = new RedisRateLimiter({ url: 'redis://127.0.0.1:1' });
    local = new InMemoryRateLimiter();
    const rateLimiter = new FallbackRateLimiter({
      primary: redis,
      fallback: local,
      onFallback: (report) => warnings.push(report.error),
    });
    degraded = await startGateway({
      rpc,
      bus,
      clockSkewSeconds: 30,
      keyUsageFlushMs: 60_000,
      rateLimiter,
      enumerationLimitPerMinute: PER_MINUTE,
    });
  });
  afterAll(async () => {
    await degraded?.stop();
    await redis?.close();
    await local?.close();
  });

  it('serves the requests and still limits each token and session, in this process, warning once', async () => {
    const server = degraded.app.getHttpServer();
    const token = await embedToken();
    for (let call = 0; call < PER_MINUTE; call += 1) {
      await request(server)
        .post('/gift-cards/balances')
        .set(bearer(token))
        .send({ items: [giftCard] })
        .expect(200);
    }
    const refused = await request(server).post('/gift-cards').set(bearer(token)).send(giftCard);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    const session = randomUUID();
    const card = { payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30' } };
    for (let call = 0; call < PER_MINUTE; call += 1)
      await request(server).post(`/checkout/sessions/${session}/fields`).send(card).expect(204);
    expect((await request(server).post(`/checkout/sessions/${session}/fields`).send(card)).status).toBe(429);

    const server2server = await serverToken();
    for (let call = 0; call < 3 * PER_MINUTE; call += 1) {
      await request(server)
        .post('/gift-cards/balances')
        .set(bearer(server2server))
        .send({ items: [giftCard] })
        .expect(200);
    }
    expect(warnings).toHaveLength(1);
  });
});
