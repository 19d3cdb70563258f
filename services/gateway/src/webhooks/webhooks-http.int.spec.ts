/**
 * The gateway's webhook endpoints over HTTP, with a fake RPC client standing in for the webhooks service: the
 * pattern and payload each route sends, and what the edge refuses (422, 401, 403, 405) before any service is asked.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { generateP521KeyPair, thumbprint, type KeyRecord } from '@switchyard/auth';
import { InProcessMessageBus } from '@switchyard/bus';
import { webhookPatterns } from '@switchyard/contracts';
import { expectErrorBody, signToken } from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../start-gateway';
import { FakeRpc } from '../testing/fake-rpc';

interface TestKey {
  readonly kid: string;
  readonly privateKeyPem: string;
}

let rpc: FakeRpc;
let gateway: RunningGateway;
let bus: InProcessMessageBus;
let http: request.Agent;
/** A key whose roles grant everything. */
let admin: TestKey;
/** A key whose roles grant only `webhook-subscriptions.read` (as an analyst's do, among others). */
let reader: TestKey;
/** A key limited to merchant account `shop-1`. */
let shopKey: TestKey;
let token: string;

async function newKey(
  permissions: readonly string[],
  merchantAccountIds: readonly string[] = [],
): Promise<{ key: TestKey; record: KeyRecord }> {
  const pair = generateP521KeyPair();
  const kid = await thumbprint(pair.publicJwk);
  return {
    key: { kid, privateKeyPem: pair.privateKeyPem },
    record: {
      id: randomUUID(),
      kid,
      publicJwk: pair.publicJwk,
      active: true,
      permissions: [...permissions],
      merchantAccountIds: [...merchantAccountIds],
    },
  };
}

beforeAll(async () => {
  const adminKey = await newKey(['*.read', '*.write']);
  const readerKey = await newKey(['webhook-subscriptions.read', 'transactions.read', 'transactions.write']);
  const shop = await newKey(['*.read', '*.write'], ['shop-1']);
  admin = adminKey.key;
  reader = readerKey.key;
  shopKey = shop.key;
  rpc = new FakeRpc([adminKey.record, readerKey.record, shop.record]);
  bus = new InProcessMessageBus();
  gateway = await startGateway({ rpc, bus, clockSkewSeconds: 30, keyUsageFlushMs: 60_000 });
  http = request.agent(gateway.app.getHttpServer());
  token = await tokenFor(admin, ['*.read', '*.write']);
});

afterAll(async () => {
  await gateway.stop();
  await bus.close();
});

beforeEach(() => rpc.reset());

const tokenFor = (key: TestKey, scopes: readonly string[]) => signToken({ ...key, scopes, expiresIn: 600 });
const bearer = () => `Bearer ${token}`;

/** Who asks, as every payload says it: the request's merchant account and the accounts the key is limited to. */
const who = (merchantAccountId: string, callerMerchantAccountIds: readonly string[] = []) => ({
  merchant_account_id: merchantAccountId,
  caller_merchant_account_ids: callerMerchantAccountIds,
});

const subscriptionId = randomUUID();
const secretId = randomUUID();
const deliveryId = 'whd_01J9ZK3M4N5P6Q7R8S9T0V1W2X';
const base = `/webhook-subscriptions/${subscriptionId}`;
const subscriptionBody = {
  url: 'https://hooks.example.com/switchyard',
  event_names: ['transaction.captured', 'refund.succeeded'],
  description: 'orders',
};

describe('subscriptions', () => {
  it('lists 20 by default in the merchant account of the header, at most 100, with the cursor when given', async () => {
    await http
      .get('/webhook-subscriptions')
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.list)).toStrictEqual({ ...who('acct-1'), limit: 20 });
    rpc.reset();
    const cursor = Buffer.from(JSON.stringify({ after: 'x' })).toString('base64url');
    await http.get('/webhook-subscriptions').query({ limit: 100, cursor }).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.list)).toStrictEqual({ ...who('default'), limit: 100, cursor });
    const tooMany = await http.get('/webhook-subscriptions?limit=101').set('authorization', bearer()).expect(422);
    expect(tooMany.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'limit'] })]);
    await http.get('/webhook-subscriptions?cursor=not-a-cursor').set('authorization', bearer()).expect(422);
    expect(rpc.payloadsTo(webhookPatterns.list)).toHaveLength(1);
  });

  it('creates with 201 and answers what the service answers', async () => {
    const created = { type: 'webhook-subscription', id: subscriptionId, ...subscriptionBody };
    rpc.answer(webhookPatterns.create, () => created);
    try {
      const response = await http
        .post('/webhook-subscriptions')
        .set('authorization', bearer())
        .set('x-service-merchant-account-id', 'acct-1')
        .send({ ...subscriptionBody, basic_auth: { username: 'u', password: 'p' }, merchant_account_id: null })
        .expect(201);
      expect(response.body).toEqual(created);
    } finally {
      rpc.answer(webhookPatterns.create, undefined);
    }
    expect(rpc.onlyPayloadTo(webhookPatterns.create)).toStrictEqual({
      ...who('acct-1'),
      billing_details_visible: true, // an administrator key's token with *.read reads them (issue 22, item 4)
      body: { ...subscriptionBody, basic_auth: { username: 'u', password: 'p' }, merchant_account_id: null },
    });
  });

  it.each([
    ['no url', { event_names: null }, ['body', 'url']],
    ['a URL that is not http(s)', { url: 'ftp://hooks.example.com/x' }, ['body', 'url']],
    [
      'an unknown event name',
      { url: 'https://hooks.example.com/x', event_names: ['transaction.exploded'] },
      ['body', 'event_names', 0],
    ],
    ['an unknown key', { url: 'https://hooks.example.com/x', secret: 'mine' }, ['body', 'secret']],
    [
      'basic auth without a password',
      { url: 'https://hooks.example.com/x', basic_auth: { username: 'u' } },
      ['body', 'basic_auth', 'password'],
    ],
  ])('refuses to create with %s: 422, asking nobody', async (_case, body, loc) => {
    const response = await http.post('/webhook-subscriptions').set('authorization', bearer()).send(body).expect(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc })]);
    expect(rpc.calls).toEqual([]);
  });

  it('gets, updates and deletes (204) by uuid', async () => {
    await http.get(base).set('authorization', bearer()).set('x-service-merchant-account-id', 'acct-1').expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.get)).toStrictEqual({ ...who('acct-1'), subscription_id: subscriptionId });

    await http.put(base).set('authorization', bearer()).send({ active: false, event_names: null }).expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.update)).toStrictEqual({
      ...who('default'),
      billing_details_visible: true,
      subscription_id: subscriptionId,
      body: { active: false, event_names: null },
    });
    await http.put(base).set('authorization', bearer()).send({ url: 'mailto:ops@example.com' }).expect(422);

    const deleted = await http.delete(base).set('authorization', bearer()).expect(204);
    expect(deleted.text).toBe('');
    expect(rpc.onlyPayloadTo(webhookPatterns.delete)).toStrictEqual({
      ...who('default'),
      subscription_id: subscriptionId,
    });

    const notUuid = await http.get('/webhook-subscriptions/not-a-uuid').set('authorization', bearer()).expect(422);
    expect(notUuid.body.detail[0].loc).toEqual(['path', 'subscription_id']);
    expect(rpc.payloadsTo(webhookPatterns.get)).toHaveLength(1);
  });

  it("answers the service's errors as they are (a subscription the caller may not see is 404)", async () => {
    rpc.answer(webhookPatterns.get, () => {
      throw ApiError.notFound(`webhook subscription ${subscriptionId} does not exist`);
    });
    try {
      expectErrorBody((await http.get(base).set('authorization', bearer()).expect(404)).body, 404, 'not_found');
    } finally {
      rpc.answer(webhookPatterns.get, undefined);
    }
  });

  it('answers 405 with Allow for a method a path does not have', async () => {
    expect((await http.patch(base).set('authorization', bearer()).send({}).expect(405)).headers.allow).toBe(
      'GET, PUT, DELETE',
    );
    expect((await http.delete('/webhook-subscriptions').set('authorization', bearer()).expect(405)).headers.allow).toBe(
      'GET, POST',
    );
    expect((await http.get(`${base}/replay`).set('authorization', bearer()).expect(405)).headers.allow).toBe('POST');
    expect(rpc.calls).toEqual([]);
  });
});

describe('signing secrets', () => {
  it('lists, creates (201) and revokes (204)', async () => {
    await http
      .get(`${base}/secrets`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.secretsList)).toStrictEqual({
      ...who('acct-1'),
      subscription_id: subscriptionId,
    });

    const secret = {
      type: 'webhook-secret',
      id: secretId,
      subscription_id: subscriptionId,
      secret: 'whsec_abc',
      masked: '••••_abc',
      active: true,
    };
    rpc.answer(webhookPatterns.secretCreate, () => secret);
    try {
      expect((await http.post(`${base}/secrets`).set('authorization', bearer()).expect(201)).body).toEqual(secret);
    } finally {
      rpc.answer(webhookPatterns.secretCreate, undefined);
    }
    expect(rpc.onlyPayloadTo(webhookPatterns.secretCreate)).toStrictEqual({
      ...who('default'),
      subscription_id: subscriptionId,
    });

    await http.delete(`${base}/secrets/${secretId}`).set('authorization', bearer()).expect(204);
    expect(rpc.onlyPayloadTo(webhookPatterns.secretRevoke)).toStrictEqual({
      ...who('default'),
      subscription_id: subscriptionId,
      secret_id: secretId,
    });

    const notUuid = await http.delete(`${base}/secrets/whsec_abc`).set('authorization', bearer()).expect(422);
    expect(notUuid.body.detail[0].loc).toEqual(['path', 'secret_id']);
    expect(rpc.payloadsTo(webhookPatterns.secretRevoke)).toHaveLength(1);
  });
});

describe('deliveries and replays', () => {
  it('lists deliveries with only the filters given', async () => {
    await http.get(`${base}/deliveries`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.deliveries)).toStrictEqual({
      ...who('default'),
      subscription_id: subscriptionId,
      limit: 20,
    });
    rpc.reset();
    await http
      .get(`${base}/deliveries`)
      .query({ status: 'failed', event_name: 'transaction.captured', limit: 50 })
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.deliveries)).toStrictEqual({
      ...who('acct-1'),
      subscription_id: subscriptionId,
      limit: 50,
      status: 'failed',
      event_name: 'transaction.captured',
    });
  });

  it.each([
    ['an unknown status', { status: 'lost' }, ['query', 'status']],
    ['a limit above 100', { limit: 101 }, ['query', 'limit']],
    ['an event name of 101 characters', { event_name: 'e'.repeat(101) }, ['query', 'event_name']],
  ])('refuses to list with %s: 422', async (_case, query, loc) => {
    const response = await http.get(`${base}/deliveries`).query(query).set('authorization', bearer()).expect(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc })]);
    expect(rpc.calls).toEqual([]);
  });

  it('gets and replays one delivery (200, the delivery)', async () => {
    await http.get(`${base}/deliveries/${deliveryId}`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(webhookPatterns.delivery)).toStrictEqual({
      ...who('default'),
      subscription_id: subscriptionId,
      delivery_id: deliveryId,
    });

    const delivery = { type: 'webhook-delivery', id: deliveryId, status: 'pending' };
    rpc.answer(webhookPatterns.replayEvent, () => delivery);
    try {
      const response = await http
        .post(`${base}/deliveries/${deliveryId}/replay`)
        .set('authorization', bearer())
        .set('x-service-merchant-account-id', 'acct-1')
        .expect(200);
      expect(response.body).toEqual(delivery);
    } finally {
      rpc.answer(webhookPatterns.replayEvent, undefined);
    }
    expect(rpc.onlyPayloadTo(webhookPatterns.replayEvent)).toStrictEqual({
      ...who('acct-1'),
      subscription_id: subscriptionId,
      delivery_id: deliveryId,
    });
  });

  it('replays a time range, 500 events at a time by default', async () => {
    const range = { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00.000+01:00' };
    await http.post(`${base}/replay`).set('authorization', bearer()).send(range).expect(200);
    const cursor = 'c1';
    await http
      .post(`${base}/replay`)
      .set('authorization', bearer())
      .send({ ...range, cursor, limit: 1000 })
      .expect(200);
    expect(rpc.payloadsTo(webhookPatterns.replayRange)).toStrictEqual([
      { ...who('default'), subscription_id: subscriptionId, body: { ...range, limit: 500 } },
      { ...who('default'), subscription_id: subscriptionId, body: { ...range, cursor, limit: 1000 } },
    ]);
  });

  it.each([
    ['no range', {}, ['body', 'from']],
    ['a date without a time', { from: '2025-01-01', to: '2025-01-02T00:00:00Z' }, ['body', 'from']],
    [
      'a limit above 1000',
      { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z', limit: 1001 },
      ['body', 'limit'],
    ],
    [
      'an unknown key',
      { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z', event_names: ['refund.failed'] },
      ['body', 'event_names'],
    ],
  ])('refuses a range replay with %s: 422', async (_case, body, loc) => {
    const response = await http.post(`${base}/replay`).set('authorization', bearer()).send(body).expect(422);
    expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
    expect(rpc.calls).toEqual([]);
  });
});

describe('authorization', () => {
  const routes: readonly {
    method: 'get' | 'post' | 'put' | 'delete';
    path: string;
    body?: object;
    scope: 'read' | 'write';
  }[] = [
    { method: 'get', path: '/webhook-subscriptions', scope: 'read' },
    { method: 'post', path: '/webhook-subscriptions', body: subscriptionBody, scope: 'write' },
    { method: 'get', path: base, scope: 'read' },
    { method: 'put', path: base, body: { active: true }, scope: 'write' },
    { method: 'delete', path: base, scope: 'write' },
    { method: 'get', path: `${base}/secrets`, scope: 'read' },
    { method: 'post', path: `${base}/secrets`, scope: 'write' },
    { method: 'delete', path: `${base}/secrets/${secretId}`, scope: 'write' },
    { method: 'get', path: `${base}/deliveries`, scope: 'read' },
    { method: 'get', path: `${base}/deliveries/${deliveryId}`, scope: 'read' },
    { method: 'post', path: `${base}/deliveries/${deliveryId}/replay`, scope: 'write' },
    {
      method: 'post',
      path: `${base}/replay`,
      body: { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z' },
      scope: 'write',
    },
  ];
  const readPatterns = [
    webhookPatterns.list,
    webhookPatterns.get,
    webhookPatterns.secretsList,
    webhookPatterns.deliveries,
    webhookPatterns.delivery,
  ].sort();
  const send = (route: (typeof routes)[number], authorization?: string) => {
    const pending = http[route.method](route.path);
    if (authorization) pending.set('authorization', authorization);
    return route.body ? pending.send(route.body) : pending;
  };

  it('is 401 without a token on every route', async () => {
    for (const route of routes) expectErrorBody((await send(route).expect(401)).body, 401, 'unauthorized');
    expect(rpc.calls).toEqual([]);
  });

  it('is 403 for a token without the webhook-subscriptions scopes', async () => {
    const other = `Bearer ${await tokenFor(admin, ['transactions.read', 'transactions.write', 'payment-services.write'])}`;
    for (const route of routes) expectErrorBody((await send(route, other).expect(403)).body, 403, 'forbidden');
    expect(rpc.calls).toEqual([]);
  });

  it('reads with webhook-subscriptions.read, and needs .write for every change', async () => {
    const readOnly = `Bearer ${await tokenFor(admin, ['webhook-subscriptions.read'])}`;
    for (const route of routes) await send(route, readOnly).expect(route.scope === 'read' ? 200 : 403);
    expect(rpc.calls.map((call) => call.pattern).sort()).toEqual(readPatterns);
  });

  it("is 403 for a write when the key's roles grant only the read scope, whatever the token says", async () => {
    const widened = `Bearer ${await tokenFor(reader, ['*.read', '*.write'])}`;
    for (const route of routes) await send(route, widened).expect(route.scope === 'read' ? 200 : 403);
    expect(rpc.calls.map((call) => call.pattern).sort()).toEqual(readPatterns);
  });

  it('is 403 for a key limited to other merchant accounts, and sends the account of the key otherwise', async () => {
    const shop = `Bearer ${await tokenFor(shopKey, ['*.read', '*.write'])}`;
    await http.get('/webhook-subscriptions').set('authorization', shop).expect(403);
    await http
      .get('/webhook-subscriptions')
      .set('authorization', shop)
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(403);
    expect(rpc.calls).toEqual([]);
    await http
      .post('/webhook-subscriptions')
      .set('authorization', shop)
      .set('x-service-merchant-account-id', 'shop-1')
      .send(subscriptionBody)
      .expect(201);
    expect(rpc.onlyPayloadTo(webhookPatterns.create)).toStrictEqual({
      ...who('shop-1', ['shop-1']),
      billing_details_visible: true,
      body: subscriptionBody,
    });
  });
});

describe('the OpenAPI document', () => {
  it('describes every webhook endpoint with its scope and schemas', async () => {
    const document = (await http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
      components?: { schemas?: Record<string, unknown> };
    };
    const expected: Record<string, string[]> = {
      '/webhook-subscriptions': ['get', 'post'],
      '/webhook-subscriptions/{subscription_id}': ['get', 'put', 'delete'],
      '/webhook-subscriptions/{subscription_id}/secrets': ['get', 'post'],
      '/webhook-subscriptions/{subscription_id}/secrets/{secret_id}': ['delete'],
      '/webhook-subscriptions/{subscription_id}/deliveries': ['get'],
      '/webhook-subscriptions/{subscription_id}/deliveries/{delivery_id}': ['get'],
      '/webhook-subscriptions/{subscription_id}/deliveries/{delivery_id}/replay': ['post'],
      '/webhook-subscriptions/{subscription_id}/replay': ['post'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(document.paths[path] ?? {}).sort(), path).toEqual([...methods].sort());
      for (const method of methods) expect(document.paths[path]![method]!.tags).toEqual(['Webhooks']);
    }
    expect(Object.keys(document.components?.schemas ?? {})).toEqual(
      expect.arrayContaining([
        'WebhookSubscription',
        'WebhookSubscriptions',
        'WebhookSubscriptionCreate',
        'WebhookSecret',
        'WebhookDelivery',
        'WebhookReplay',
      ]),
    );
  });
});
