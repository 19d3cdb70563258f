/**
 * The gateway's flow rule endpoints over HTTP, with a fake RPC client standing in for the transactions service: the
 * pattern and payload each route sends, and what the edge refuses (422, 400, 401, 403, 405) before any service is
 * asked.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { generateP521KeyPair, thumbprint, type KeyRecord } from '@switchyard/auth';
import { InProcessMessageBus } from '@switchyard/bus';
import { flowRulePatterns } from '@switchyard/contracts';
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
let admin: TestKey;
/** A key limited to merchant account `shop-1`. */
let shopKey: TestKey;
let token: string;

async function newKey(merchantAccountIds: readonly string[] = []): Promise<{ key: TestKey; record: KeyRecord }> {
  const pair = generateP521KeyPair();
  const kid = await thumbprint(pair.publicJwk);
  return {
    key: { kid, privateKeyPem: pair.privateKeyPem },
    record: {
      id: randomUUID(),
      kid,
      publicJwk: pair.publicJwk,
      active: true,
      permissions: ['*.read', '*.write'],
      merchantAccountIds: [...merchantAccountIds],
    },
  };
}

beforeAll(async () => {
  const adminKey = await newKey();
  const shop = await newKey(['shop-1']);
  admin = adminKey.key;
  shopKey = shop.key;
  rpc = new FakeRpc([adminKey.record, shop.record]);
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

const ruleId = randomUUID();
const base = '/flows/card-transaction/rules';
const scope = (merchantAccountId = 'default') => ({ merchant_account_id: merchantAccountId, flow: 'card-transaction' });
const ruleBody = {
  action: 'route-transaction',
  conditions: [{ name: 'bin_range', operator: 'in_range', value: [{ from: '411111', to: '411119' }] }],
  outcome: { type: 'list', result: [randomUUID()] },
};

describe('routes', () => {
  it('creates (201) in the merchant account of the header, and passes the body as validated', async () => {
    await http
      .post(base)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .send(ruleBody)
      .expect(201);
    expect(rpc.onlyPayloadTo(flowRulePatterns.create)).toStrictEqual({ ...scope('acct-1'), body: ruleBody });
  });

  it('lists 20 by default in the default merchant account, with the action filter and cursor when given', async () => {
    await http.get(base).set('authorization', bearer()).expect(200);
    await http.get(base).query({ action: 'skip-3ds', limit: 5 }).set('authorization', bearer()).expect(200);
    expect(rpc.payloadsTo(flowRulePatterns.list)).toStrictEqual([
      { ...scope(), limit: 20 },
      { ...scope(), limit: 5, action: 'skip-3ds' },
    ]);
  });

  it('gets, updates and deletes (204) by id', async () => {
    await http.get(`${base}/${ruleId}`).set('authorization', bearer()).expect(200);
    await http
      .put(`${base}/${ruleId}`)
      .set('authorization', bearer())
      .send({ position: 2, description: null })
      .expect(200);
    const deleted = await http.delete(`${base}/${ruleId}`).set('authorization', bearer()).expect(204);
    expect(deleted.text).toBe('');
    expect(rpc.onlyPayloadTo(flowRulePatterns.get)).toStrictEqual({ ...scope(), id: ruleId });
    expect(rpc.onlyPayloadTo(flowRulePatterns.update)).toStrictEqual({
      ...scope(),
      id: ruleId,
      body: { position: 2, description: null },
    });
    expect(rpc.onlyPayloadTo(flowRulePatterns.delete)).toStrictEqual({ ...scope(), id: ruleId });
  });

  it("renders the service's errors as it meant them", async () => {
    rpc.answer(flowRulePatterns.get, () => {
      throw ApiError.notFound();
    });
    expectErrorBody(
      (await http.get(`${base}/${ruleId}`).set('authorization', bearer()).expect(404)).body,
      404,
      'not_found',
    );
    rpc.answer(flowRulePatterns.get, undefined);
  });

  it('answers 405 with Allow for a method a path does not have', async () => {
    expect(
      (await http.patch(`${base}/${ruleId}`).set('authorization', bearer()).send({}).expect(405)).headers.allow,
    ).toBe('GET, PUT, DELETE');
    expect((await http.delete(base).set('authorization', bearer()).expect(405)).headers.allow).toBe('GET, POST');
  });
});

describe('flows', () => {
  it.each(['checkout', 'non-card-transaction', 'redirect-transaction'])(
    'refuses the %s flow with a 400 unsupported_flow',
    async (flow) => {
      const response = await http.get(`/flows/${flow}/rules`).set('authorization', bearer()).expect(400);
      expectErrorBody(response.body, 400, 'bad_request');
      expect(response.body.details).toEqual([
        { location: 'path', pointer: '/flow', message: expect.stringContaining(flow), type: 'unsupported_flow' },
      ]);
      await http.post(`/flows/${flow}/rules`).set('authorization', bearer()).send(ruleBody).expect(400);
      expect(rpc.calls).toEqual([]);
    },
  );

  it('refuses a flow that does not exist as path validation does (422)', async () => {
    const response = await http.get('/flows/card/rules').set('authorization', bearer()).expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'flow'], type: 'enum', input: 'card' }),
    ]);
    await http.get('/flows/card-transaction/rules/not-a-uuid').set('authorization', bearer()).expect(422);
    expect(rpc.calls).toEqual([]);
  });
});

describe('validation', () => {
  it.each<[string, unknown, (string | number)[], string]>([
    [
      'an operator the condition does not have',
      { name: 'amount', operator: 'one_of', value: 100 },
      ['body', 'conditions', 0, 'operator'],
      'enum',
    ],
    [
      'an unknown condition',
      { name: 'colour', operator: 'one_of', value: ['red'] },
      ['body', 'conditions', 0, 'name'],
      'union_tag_invalid',
    ],
    [
      'a negative amount',
      { name: 'amount', operator: 'less_than', value: -1 },
      ['body', 'conditions', 0, 'value'],
      'greater_than_equal',
    ],
    [
      'a lower-case currency',
      { name: 'currency', operator: 'one_of', value: ['eur'] },
      ['body', 'conditions', 0, 'value', 0],
      'string_pattern_mismatch',
    ],
    [
      'an empty country list',
      { name: 'country', operator: 'not_one_of', value: [] },
      ['body', 'conditions', 0, 'value'],
      'too_short',
    ],
    [
      'an unknown card scheme',
      { name: 'card_scheme', operator: 'one_of', value: ['visa', 'vise'] },
      ['body', 'conditions', 0, 'value', 1],
      'enum',
    ],
    [
      'an unknown card type',
      { name: 'card_type', operator: 'one_of', value: ['charge'] },
      ['body', 'conditions', 0, 'value', 0],
      'enum',
    ],
    [
      'a BIN of 5 digits',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '41111', to: '411119' }] },
      ['body', 'conditions', 0, 'value', 0, 'from'],
      'string_pattern_mismatch',
    ],
    [
      'BIN bounds of different lengths',
      { name: 'bin_range', operator: 'in_range', value: [{ from: '4111110', to: '411119' }] },
      ['body', 'conditions', 0, 'value', 0, 'to'],
      'value_error',
    ],
    [
      'a BIN range upside down',
      { name: 'bin_range', operator: 'not_in_range', value: [{ from: '411119', to: '411111' }] },
      ['body', 'conditions', 0, 'value', 0, 'to'],
      'value_error',
    ],
    [
      'metadata without values',
      { name: 'metadata', operator: 'one_of', value: { key: 'tier', values: [] } },
      ['body', 'conditions', 0, 'value', 'values'],
      'too_short',
    ],
    [
      'merchant_initiated as a string',
      { name: 'merchant_initiated', operator: 'equal', value: 'yes' },
      ['body', 'conditions', 0, 'value'],
      'bool_type',
    ],
  ])('refuses %s with a 422 naming the field', async (_case, condition, loc, type) => {
    const response = await http
      .post(base)
      .set('authorization', bearer())
      .send({ ...ruleBody, conditions: [condition] })
      .expect(422);
    expect(response.body.detail).toEqual([
      { loc, msg: expect.any(String), type, input: expect.anything(), ctx: expect.any(Object) },
    ]);
    expect(rpc.calls).toEqual([]);
  });

  it('refuses more than 20 conditions, a route naming a payment service twice, and fields it does not know', async () => {
    const many = Array.from({ length: 21 }, () => ({ name: 'merchant_initiated', operator: 'equal', value: true }));
    const twice = { type: 'list', result: [ruleId, ruleId] };
    const refusals = [
      [{ ...ruleBody, conditions: many }, ['body', 'conditions']],
      [{ ...ruleBody, outcome: twice }, ['body', 'outcome', 'result']],
      [{ ...ruleBody, flow: 'checkout' }, ['body', 'flow']],
      [{ outcome: ruleBody.outcome }, ['body', 'action']],
    ] as const;
    for (const [body, loc] of refusals) {
      const response = await http.post(base).set('authorization', bearer()).send(body).expect(422);
      expect(response.body.detail.map((issue: { loc: unknown }) => issue.loc)).toContainEqual(loc);
    }
    expect(rpc.calls).toEqual([]);
  });
});

describe('access', () => {
  const routes = [
    { method: 'get', path: base, pattern: flowRulePatterns.list },
    { method: 'get', path: `${base}/${ruleId}`, pattern: flowRulePatterns.get },
    { method: 'post', path: base, pattern: flowRulePatterns.create, body: ruleBody },
    { method: 'put', path: `${base}/${ruleId}`, pattern: flowRulePatterns.update, body: { position: 1 } },
    { method: 'delete', path: `${base}/${ruleId}`, pattern: flowRulePatterns.delete },
  ] as const;
  const send = (route: (typeof routes)[number], authorization?: string) => {
    const pending = http[route.method](route.path);
    if (authorization) pending.set('authorization', authorization);
    return 'body' in route ? pending.send(route.body) : pending;
  };

  it('is 401 without a token on every route', async () => {
    for (const route of routes) expectErrorBody((await send(route).expect(401)).body, 401, 'unauthorized');
    expect(rpc.calls).toEqual([]);
  });

  it('reads with flows.read, and needs flows.write for every change', async () => {
    const readOnly = `Bearer ${await tokenFor(admin, ['flows.read'])}`;
    for (const route of routes) {
      const response = await send(route, readOnly).expect(route.method === 'get' ? 200 : 403);
      if (route.method !== 'get') expectErrorBody(response.body, 403, 'forbidden');
    }
    expect(rpc.calls.map((call) => call.pattern)).toEqual([flowRulePatterns.list, flowRulePatterns.get]);
  });

  it('is 403 for a token without the flows scopes', async () => {
    const other = `Bearer ${await tokenFor(admin, ['payment-services.read', 'payment-services.write'])}`;
    for (const route of routes) expectErrorBody((await send(route, other).expect(403)).body, 403, 'forbidden');
    expect(rpc.calls).toEqual([]);
  });

  it('is 403 for a key limited to other merchant accounts, and sends the account of the header otherwise', async () => {
    const shop = `Bearer ${await tokenFor(shopKey, ['flows.read', 'flows.write'])}`;
    await http.get(base).set('authorization', shop).expect(403);
    await http.get(base).set('authorization', shop).set('x-service-merchant-account-id', 'acct-1').expect(403);
    expect(rpc.calls).toEqual([]);
    await http
      .delete(`${base}/${ruleId}`)
      .set('authorization', shop)
      .set('x-service-merchant-account-id', 'shop-1')
      .expect(204);
    expect(rpc.onlyPayloadTo(flowRulePatterns.delete)).toStrictEqual({ ...scope('shop-1'), id: ruleId });
  });
});

describe('the OpenAPI document', () => {
  it('describes every flow rule endpoint with its schemas', async () => {
    const document = (await http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { operationId?: string; description?: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(document.paths['/flows/{flow}/rules'] ?? {})).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/flows/{flow}/rules/{rule_id}'] ?? {})).toEqual(['get', 'put', 'delete']);
    expect(document.paths['/flows/{flow}/rules']?.post?.description).toContain('flows.write');
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'FlowRule',
        'FlowRules',
        'FlowRuleCreate',
        'FlowRuleUpdate',
        'FlowRuleCondition',
        'FlowRuleOutcome',
      ]),
    );
  });
});
