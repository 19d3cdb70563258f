/**
 * Issue 9, item 1 acceptance on the distributed runtime: two gateway processes sharing Redis (one GCRA bucket per
 * embed token and per checkout session, decided by one Lua script on Redis' clock). 25 requests of one embed token
 * to each gateway pass, the 51st to either is 429 with Retry-After; another embed token is unaffected; a
 * server-to-server token does 500 requests through both, never throttled; a checkout session's fields and card
 * details are limited together across both gateways. See enumeration-limit.support.ts for how "the 51st" is asserted.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describeWithInfra, signToken, waitFor } from '@switchyard/testing';
import {
  distributedInfrastructure,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from '../distributed.fixture';
import {
  expectLimited,
  expectNeverLimited,
  fetchAnswer,
  LIMIT,
  sendUntilRefused,
  type Answer,
} from './enumeration-limit.support';

const infrastructure = await distributedInfrastructure();

describeWithInfra('the enumeration rate limit across two gateway processes sharing Redis', infrastructure, () => {
  const account = `edge-${randomBytes(4).toString('hex')}`;
  let runtime: DistributedRuntime;
  let admin: ApiKey;
  let integration: ApiKey;
  let gateways: readonly [string, string];

  const embedToken = () =>
    signToken({ kid: integration.kid, privateKeyPem: integration.private_key, scopes: ['embed'], expiresIn: 600 });
  const serverToken = () =>
    signToken({
      kid: integration.kid,
      privateKeyPem: integration.private_key,
      scopes: ['transactions.write', 'gift-cards.read', 'gift-cards.write', 'checkout-sessions.write'],
      expiresIn: 600,
    });

  const send = (
    gateway: 0 | 1,
    label: string,
    path: string,
    token: string | null,
    body: unknown,
    method = 'POST',
  ): Promise<Answer> =>
    fetchAnswer(`${label} via gateway ${gateway + 1}`, `${gateways[gateway]}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        'x-service-merchant-account-id': account,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });

  const giftCard = { number: '7000001234567890123', pin: '1234' };
  /** Alternating between the gateways (even: the first), and through the three endpoints in turn. */
  const acrossGatewaysAndEndpoints =
    (token: string) =>
    (index: number): Promise<Answer> => {
      const gateway = (index % 2) as 0 | 1;
      switch (Math.floor(index / 2) % 3) {
        case 0:
          return send(gateway, 'balances', '/gift-cards/balances', token, { items: [giftCard] });
        case 1:
          return send(gateway, 'gift-cards', '/gift-cards', token, giftCard);
        default:
          return send(gateway, 'transactions', '/transactions', token, {
            amount: 1299,
            currency: 'USD',
            payment_method: { method: 'checkout-session', id: randomUUID() },
          });
      }
    };

  beforeAll(async () => {
    runtime = await startDistributedRuntime({
      name: 'enumeration-limit',
      env: { ENUMERATION_RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    });
    gateways = [runtime.baseUrl, runtime.secondUrl];
    admin = await runtime.createApiKey('edge admin', ['administrator']);
    integration = await runtime.createApiKey('shop backend', ['integration']);
    const adminToken = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key, expiresIn: 600 });
    const created = await fetchAnswer('create account', `${runtime.baseUrl}/merchant-accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ id: account, display_name: 'Edge e2e' }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const token = await serverToken();
    for (const gateway of [0, 1] as const) {
      await waitFor(
        `the integration key accepted by gateway ${gateway + 1}`,
        async () =>
          (await send(gateway, 'probe', '/gift-cards/balances', token, { items: [giftCard] })).status === 400
            ? true
            : undefined,
        10_000,
        runtime.describe,
      );
    }
  });

  afterAll(() => runtime?.stop());

  it('lets 25 requests of one embed token through each gateway; the 51st, to either, is 429 with Retry-After', async () => {
    const token = await embedToken();
    // Until both gateways refused: on a slow run GCRA gives a request back every 1.2 s, which may land on either.
    const refusedBy = (answers: readonly Answer[]) =>
      new Set(answers.filter((answer) => answer.status === 429).map((answer) => answer.label.slice(-9)));
    const run = await sendUntilRefused(acrossGatewaysAndEndpoints(token), {
      until: (answers) => refusedBy(answers).size === 2,
    });
    expectLimited(run, runtime.describe);
    const through = run.answers.slice(0, LIMIT);
    expect(through.filter((answer) => answer.label.endsWith('gateway 1'))).toHaveLength(25);
    expect(through.filter((answer) => answer.label.endsWith('gateway 2'))).toHaveLength(25);
    // Both gateways refuse once the shared bucket is empty.
    expect(refusedBy(run.answers)).toEqual(new Set(['gateway 1', 'gateway 2']));
  });

  it('does not touch a second embed token', async () => {
    const first = await embedToken();
    expectLimited(await sendUntilRefused(acrossGatewaysAndEndpoints(first)), runtime.describe);
    expectLimited(await sendUntilRefused(acrossGatewaysAndEndpoints(await embedToken())), runtime.describe);
  });

  it('lets a server-to-server token do 500 requests through both gateways, never throttled', async () => {
    const token = await serverToken();
    const answers: Answer[] = [];
    for (let index = 0; index < 500; index += 1) answers.push(await acrossGatewaysAndEndpoints(token)(index));
    expectNeverLimited(answers);
  });

  it('limits a checkout session’s fields and card details across both gateways, per session id', async () => {
    const newSession = async (): Promise<string> => {
      const created = await send(0, 'create session', '/checkout/sessions', await serverToken(), {});
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return (created.body as { id: string }).id;
    };
    // Alternating gateways; fields, fields, card details in turn (a 2-and-3 cycle: each gateway serves both kinds).
    const fieldsOf =
      (session: string) =>
      (index: number): Promise<Answer> => {
        const gateway = (index % 2) as 0 | 1;
        if (index % 3 === 2)
          return fetchAnswer(
            `card details via gateway ${gateway + 1}`,
            `${gateways[gateway]}/checkout/sessions/${session}/card-details?bin=411111`,
            {},
          );
        return send(gateway, 'fields', `/checkout/sessions/${session}/fields`, null, {
          payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30' },
        });
      };
    const session = await newSession();
    const run = await sendUntilRefused(fieldsOf(session), { refusals: 2 });
    expectLimited(run, runtime.describe);
    expect(new Set(run.answers.slice(0, LIMIT).map((answer) => answer.status))).toEqual(new Set([204, 200]));
    expect((await fieldsOf(await newSession())(1)).status).toBe(204);
  });
});
