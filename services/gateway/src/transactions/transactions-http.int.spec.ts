/**
 * The gateway's transaction endpoints over HTTP, with a fake RPC client standing in for the services: the pattern and
 * payload each route sends, and what the edge refuses (422, 400, 401, 403, 405) before any service is asked.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { generateP521KeyPair, thumbprint } from '@switchyard/auth';
import { InProcessMessageBus } from '@switchyard/bus';
import {
  giftCardPatterns,
  identityTopic,
  merchantAccountPatterns,
  threeDsConfigurationPatterns,
  transactionsPatterns,
  vaultPatterns,
} from '@switchyard/contracts';
import { expectErrorBody, signToken, threeDsConfigurationBody } from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../start-gateway';
import { FakeRpc } from '../testing/fake-rpc';

const accounts: Record<string, object> = {
  'acct-multi': {
    type: 'merchant-account',
    id: 'acct-multi',
    multiple_captures_enabled: true,
    over_capture_amount: 500,
    over_capture_percentage: 10,
  },
  // As identity answers before it knows `multiple_captures_enabled`.
  'acct-legacy': {
    type: 'merchant-account',
    id: 'acct-legacy',
    over_capture_amount: null,
    over_capture_percentage: 25,
  },
};

let rpc: FakeRpc;
let gateway: RunningGateway;
let bus: InProcessMessageBus;
let http: request.Agent;
let key: { kid: string; privateKeyPem: string };
let token: string;
const keyPairId = randomUUID();
/** Who the writes are recorded as: the API key pair of the token. */
const actor = { type: 'api-key-pair', id: keyPairId };

/** Identity's answer: one configuration per merchant account; the default account does not exist there. */
function threeDsConfigurations(payload: unknown) {
  const id = (payload as { merchant_account_id: string }).merchant_account_id;
  if (id === 'default') throw ApiError.notFound(`merchant account ${id} does not exist`);
  return { items: [{ type: 'merchant-account.three-ds-configuration', id: 'c1', merchant_account_id: id }] };
}

beforeAll(async () => {
  const pair = generateP521KeyPair();
  const kid = await thumbprint(pair.publicJwk);
  key = { kid, privateKeyPem: pair.privateKeyPem };
  rpc = new FakeRpc([
    {
      id: keyPairId,
      kid,
      publicJwk: pair.publicJwk,
      active: true,
      permissions: ['*.read', '*.write'],
      merchantAccountIds: [],
    },
  ]);
  rpc.answer(merchantAccountPatterns.get, (payload) => {
    const id = (payload as { id: string }).id;
    if (id === 'acct-identity-down') throw ApiError.badGateway();
    const account = accounts[id];
    if (!account) throw ApiError.notFound(`merchant account ${id} does not exist`);
    return account;
  });
  rpc.answer(threeDsConfigurationPatterns.list, threeDsConfigurations);
  rpc.answer(vaultPatterns.handOverCard, () => handOver);
  bus = new InProcessMessageBus();
  gateway = await startGateway({ rpc, bus, clockSkewSeconds: 30, keyUsageFlushMs: 60_000 });
  http = request.agent(gateway.app.getHttpServer());
  token = await tokenWith(['*.read', '*.write']);
});

afterAll(async () => {
  await gateway.stop();
  await bus.close();
});

beforeEach(() => rpc.reset());

const tokenWith = (scopes: readonly string[]) => signToken({ ...key, scopes, expiresIn: 600 });
const bearer = () => `Bearer ${token}`;

const transactionId = randomUUID();
const card = { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' };
const transactionBody = { amount: 1299, currency: 'USD', payment_method: card };
/** What the vault answers the gateway's hand-over of the card data. */
const handOver = { card_id: randomUUID(), security_code_alias: `tok${'A1'.repeat(16)}`, digest: 'ab'.repeat(32) };
/** The body as the transactions service gets it: the card data went to the vault. */
const handedOverBody = { ...transactionBody, payment_method: { method: 'card', expiration_date: '12/30' } };
const transactionDefaults = {
  intent: 'authorize',
  store: false,
  merchant_initiated: false,
  is_subsequent_payment: false,
  is_amount_estimated: false,
};

describe('POST /transactions', () => {
  it('creates in the merchant account of the header, with the idempotency key whatever the case of its name', async () => {
    await http
      .post('/transactions')
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .set('IDEMPOTENCY-KEY', 'order-42')
      .send(transactionBody)
      .expect(201);
    // The card data goes to the vault first; the transactions service gets its id and the security code's alias.
    expect(rpc.onlyPayloadTo(vaultPatterns.handOverCard)).toStrictEqual({
      merchant_account_id: 'acct-1',
      card: { number: card.number, expiration_date: card.expiration_date, security_code: card.security_code },
      buyer: { buyer_id: null, buyer_external_identifier: null },
    });
    expect(rpc.onlyCallTo(transactionsPatterns.create)).toStrictEqual({
      payload: {
        merchant_account_id: 'acct-1',
        body: { ...handedOverBody, ...transactionDefaults },
        idempotency_key: 'order-42',
        // A card payment carries the account's 3-D Secure configurations, read from identity.
        three_ds_configurations: [
          { type: 'merchant-account.three-ds-configuration', id: 'c1', merchant_account_id: 'acct-1' },
        ],
        card_hand_over: handOver,
      },
      actor,
    });
    const forwarded = JSON.stringify(rpc.payloadsTo(transactionsPatterns.create));
    expect(forwarded).not.toContain(card.number);
    expect(forwarded).not.toContain(`"${card.security_code}"`);
  });

  it('asks identity for the 3-D Secure configurations while the vault takes the card, not after', async () => {
    let listAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      listAsked = resolve;
    });
    rpc.answer(threeDsConfigurationPatterns.list, () => {
      listAsked();
      return { items: [] };
    });
    // The vault answers once identity was asked: in sequence, the hand-over would wait for the list and fail.
    rpc.answer(vaultPatterns.handOverCard, async () => {
      const waited = await Promise.race([
        asked.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 2_000)),
      ]);
      if (!waited) throw ApiError.badGateway(new Error('identity was not asked while the vault took the card'));
      return handOver;
    });
    try {
      await http
        .post('/transactions')
        .set('authorization', bearer())
        .set('x-service-merchant-account-id', 'acct-3ds-beside-the-vault')
        .send(transactionBody)
        .expect(201);
    } finally {
      rpc.answer(vaultPatterns.handOverCard, () => handOver);
      rpc.answer(threeDsConfigurationPatterns.list, threeDsConfigurations);
    }
  });

  it("keeps an account's 3-D Secure configurations, and asks again once a change went through it or identity's event says so", async () => {
    const account = 'acct-3ds-cached';
    let configurations = [{ type: 'merchant-account.three-ds-configuration', id: 'c1', merchant_account_id: account }];
    rpc.answer(threeDsConfigurationPatterns.list, () => ({ items: configurations }));
    rpc.answer(threeDsConfigurationPatterns.create, () => {
      configurations = [...configurations, { ...configurations[0]!, id: 'c2' }];
      return configurations[1];
    });
    const pay = async () => {
      rpc.reset();
      await http
        .post('/transactions')
        .set('authorization', bearer())
        .set('x-service-merchant-account-id', account)
        .send(transactionBody)
        .expect(201);
      const sent = rpc.onlyPayloadTo(transactionsPatterns.create) as { three_ds_configurations: { id: string }[] };
      return {
        asked: rpc.callsTo(threeDsConfigurationPatterns.list).length,
        ids: sent.three_ds_configurations.map((c) => c.id),
      };
    };
    try {
      expect(await pay()).toEqual({ asked: 1, ids: ['c1'] });
      expect(await pay()).toEqual({ asked: 0, ids: ['c1'] });

      // A change through this gateway: its next payment reads it.
      await http
        .post(`/merchant-accounts/${account}/three-ds-configurations`)
        .set('authorization', bearer())
        .send(threeDsConfigurationBody)
        .expect(201);
      expect(await pay()).toEqual({ asked: 1, ids: ['c1', 'c2'] });
      expect(await pay()).toEqual({ asked: 0, ids: ['c1', 'c2'] });

      // A change through another gateway: identity's event reaches this one.
      configurations = configurations.slice(1);
      await bus.publish(identityTopic, [
        {
          key: 'three-ds-configuration-c1',
          value: JSON.stringify({
            id: randomUUID(),
            type: 'ThreeDsConfigurationDeleted',
            stream_id: 'three-ds-configuration-c1',
            data: { id: 'c1', merchantAccountId: account, at: new Date().toISOString() },
          }),
          headers: {},
        },
      ]);
      let after = await pay();
      for (let tries = 0; after.asked === 0 && tries < 50; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        after = await pay();
      }
      expect(after).toEqual({ asked: 1, ids: ['c2'] });
    } finally {
      rpc.answer(threeDsConfigurationPatterns.list, threeDsConfigurations);
      rpc.answer(threeDsConfigurationPatterns.create, undefined);
    }
  });

  it("hands a stored method's security code to the vault too", async () => {
    const id = randomUUID();
    await http
      .post('/transactions')
      .set('authorization', bearer())
      .send({ ...transactionBody, payment_method: { method: 'id', id, security_code: '987' } })
      .expect(201);
    expect(rpc.onlyPayloadTo(vaultPatterns.handOverCard)).toStrictEqual({
      merchant_account_id: 'default',
      security_code: '987',
    });
    expect(rpc.onlyPayloadTo(transactionsPatterns.create)).toMatchObject({
      body: { payment_method: { method: 'id', id } },
      card_hand_over: handOver,
    });
    // The payload's random ids may hold the code's digits by chance (a CI run met `…-f987-…`); nothing else may.
    const sent = JSON.stringify(rpc.payloadsTo(transactionsPatterns.create))
      .replaceAll(id, '<payment method id>')
      .replaceAll(handOver.card_id, '<card id>');
    expect(sent).not.toContain('987');
  });

  it('hands the gift cards given by number and PIN to the gift cards service; the transactions service gets their one-off ids', async () => {
    const given = { number: '6060601234567890123', pin: '7777', amount: 300 };
    const stored = { id: randomUUID(), amount: 200 };
    const oneOff = { id: randomUUID(), bin: '606060', sub_bin: '1234', last4: '0123', digest: 'cd'.repeat(32) };
    rpc.answer(giftCardPatterns.handOver, () => [oneOff]);
    await http
      .post('/transactions')
      .set('authorization', bearer())
      .send({ ...transactionBody, gift_cards: [stored, given] })
      .expect(201);
    expect(rpc.onlyPayloadTo(giftCardPatterns.handOver)).toStrictEqual({
      merchant_account_id: 'default',
      cards: [{ number: given.number, pin: given.pin }],
    });
    expect(rpc.onlyPayloadTo(transactionsPatterns.create)).toMatchObject({
      body: { gift_cards: [stored, { id: oneOff.id, amount: 300 }] },
      gift_card_hand_over: [null, oneOff],
    });
    const forwarded = JSON.stringify(rpc.payloadsTo(transactionsPatterns.create));
    expect(forwarded).not.toContain(given.number);
    expect(forwarded).not.toContain(`"${given.pin}"`);

    // Only stored cards: nothing to hand over.
    rpc.reset();
    await http
      .post('/transactions')
      .set('authorization', bearer())
      .send({ ...transactionBody, gift_cards: [stored] })
      .expect(201);
    expect(rpc.payloadsTo(giftCardPatterns.handOver)).toEqual([]);
    expect(rpc.onlyPayloadTo(transactionsPatterns.create)).not.toHaveProperty('gift_card_hand_over');
  });

  it('leaves the key out when none is sent, and uses the default merchant account', async () => {
    await http.post('/transactions').set('authorization', bearer()).send(transactionBody).expect(201);
    // An account identity does not know has no 3-D Secure configurations.
    expect(rpc.onlyCallTo(transactionsPatterns.create)).toStrictEqual({
      payload: {
        merchant_account_id: 'default',
        body: { ...handedOverBody, ...transactionDefaults },
        three_ds_configurations: [],
        card_hand_over: handOver,
      },
      actor,
    });
  });

  it('accepts an Idempotency-Key of 255 characters and refuses one of 256 (or none at all) with a 400 naming the header', async () => {
    await http
      .post('/transactions')
      .set('authorization', bearer())
      .set('Idempotency-Key', 'k'.repeat(255))
      .send(transactionBody)
      .expect(201);
    for (const idempotencyKey of ['k'.repeat(256), '']) {
      const response = await http
        .post('/transactions')
        .set('authorization', bearer())
        .set('Idempotency-Key', idempotencyKey)
        .send(transactionBody)
        .expect(400);
      expectErrorBody(response.body, 400, 'bad_request');
      expect(response.body.details).toEqual([
        {
          location: 'header',
          pointer: '/idempotency-key',
          message: expect.any(String),
          type: 'invalid_idempotency_key',
        },
      ]);
    }
    expect(rpc.payloadsTo(transactionsPatterns.create)).toHaveLength(1);
  });

  it.each([
    [
      'a card number failing the Luhn check',
      { ...transactionBody, payment_method: { ...card, number: '4111111111111112' } },
      ['body', 'payment_method', 'number'],
      'value_error',
    ],
    [
      'an expiration date that is not MM/YY',
      { ...transactionBody, payment_method: { ...card, expiration_date: '13/30' } },
      ['body', 'payment_method', 'expiration_date'],
      'string_pattern_mismatch',
    ],
    ['an amount of 0', { ...transactionBody, amount: 0 }, ['body', 'amount'], 'greater_than_equal'],
  ])('refuses %s with a 422', async (_case, body, loc, type) => {
    const response = await http.post('/transactions').set('authorization', bearer()).send(body).expect(422);
    expect(response.body.detail).toEqual([
      { loc, msg: expect.any(String), type, input: expect.anything(), ctx: expect.any(Object) },
    ]);
    expect(rpc.calls).toEqual([]);
  });

  it('is 401 without a token and 403 for a token without transactions.write', async () => {
    expectErrorBody((await http.post('/transactions').send(transactionBody).expect(401)).body, 401, 'unauthorized');
    expectErrorBody((await http.get('/transactions').expect(401)).body, 401, 'unauthorized');
    const reader = await tokenWith(['transactions.read']);
    expectErrorBody(
      (await http.post('/transactions').set('authorization', `Bearer ${reader}`).send(transactionBody).expect(403))
        .body,
      403,
      'forbidden',
    );
    await http.get('/transactions').set('authorization', `Bearer ${reader}`).expect(200);
    expect(rpc.payloadsTo(transactionsPatterns.create)).toEqual([]);
  });

  it('keeps refusing bodies that are not JSON on the JSON routes', async () => {
    const notJson = await http
      .post('/transactions')
      .set('authorization', bearer())
      .set('content-type', 'application/json')
      .send('{"amount": ')
      .expect(400);
    expect(notJson.body.message).toBe('The request body is not valid JSON');
    const form = await http
      .post('/transactions')
      .set('authorization', bearer())
      .set('content-type', 'application/x-www-form-urlencoded')
      .send('amount=1')
      .expect(400);
    expect(form.body.message).toBe('Unsupported Content-Type: send application/json');
    const tooLarge = await http
      .post('/transactions')
      .set('authorization', bearer())
      .send({ ...transactionBody, padding: 'x'.repeat(1024 * 1024) })
      .expect(413);
    expect(tooLarge.body).toMatchObject({
      type: 'error',
      code: 'payload_too_large',
      status: 413,
      message: 'The request body is larger than the limit of 1048576 bytes',
    });
    expect(rpc.calls).toEqual([]);
  });
});

describe('reading transactions', () => {
  it('lists with only the filters given', async () => {
    await http
      .get('/transactions')
      .query({ status: 'capture_succeeded', currency: ['USD', 'EUR'], amount_gte: '100', limit: 5 })
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.list)).toStrictEqual({
      merchant_account_id: 'acct-1',
      limit: 5,
      status: ['capture_succeeded'],
      currency: ['USD', 'EUR'],
      amount_gte: 100,
    });
  });

  it('lists 20 by default, at most 100', async () => {
    await http.get('/transactions').set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.list)).toStrictEqual({ merchant_account_id: 'default', limit: 20 });
    await http.get('/transactions?limit=101').set('authorization', bearer()).expect(422);
  });

  it('gets one, by uuid only', async () => {
    const response = await http.get(`/transactions/${transactionId}`).set('authorization', bearer()).expect(200);
    expect(response.body).toEqual({ type: 'stub', pattern: transactionsPatterns.get });
    expect(rpc.onlyPayloadTo(transactionsPatterns.get)).toEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
    });
    const notUuid = await http.get('/transactions/not-a-uuid').set('authorization', bearer()).expect(422);
    expect(notUuid.body.detail[0].loc).toEqual(['path', 'transaction_id']);
  });

  it('gets one as it stood at a moment: `as_of` goes to the service as sent (it checks it), and is in the OpenAPI document', async () => {
    const asOf = '2025-06-01T12:00:00.123+02:00';
    await http
      .get(`/transactions/${transactionId}`)
      .query({ as_of: asOf })
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.get)).toStrictEqual({
      merchant_account_id: 'acct-1',
      transaction_id: transactionId,
      as_of: asOf,
    });
    const document = (await http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { parameters?: unknown[] }>>;
    };
    expect(document.paths['/transactions/{transaction_id}']?.get?.parameters).toContainEqual(
      expect.objectContaining({
        name: 'as_of',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ type: 'string', format: 'date-time' }),
      }),
    );
  });

  it('updates', async () => {
    await http
      .put(`/transactions/${transactionId}`)
      .set('authorization', bearer())
      .send({ metadata: { order: '42' }, external_identifier: null })
      .expect(200);
    expect(rpc.onlyCallTo(transactionsPatterns.update)).toEqual({
      payload: {
        merchant_account_id: 'default',
        transaction_id: transactionId,
        body: { metadata: { order: '42' }, external_identifier: null },
      },
      actor,
    });
  });

  it('pages events 100 at a time by default, at most 100', async () => {
    await http.get(`/transactions/${transactionId}/events`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.events)).toStrictEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      limit: 100,
    });
    await http.get(`/transactions/${transactionId}/events?limit=101`).set('authorization', bearer()).expect(422);
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const response = await http.delete(`/transactions/${transactionId}`).set('authorization', bearer()).expect(405);
    expect(response.headers.allow).toBe('GET, PUT');
  });
});

describe('captures', () => {
  const capturePath = `/transactions/${transactionId}/capture`;

  it('captures with the account settings from identity, the idempotency key and Prefer', async () => {
    await http
      .post(capturePath)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-multi')
      .set('idempotency-key', 'capture-1')
      .set('prefer', 'respond-async, resource=transaction-capture')
      .send({ amount: 500, final: false, tracking: [{ number: '1Z999', carrier: 'UPS' }] })
      .expect(200);
    expect(rpc.onlyPayloadTo(merchantAccountPatterns.get)).toEqual({ id: 'acct-multi' });
    expect(rpc.onlyCallTo(transactionsPatterns.capture)).toStrictEqual({
      payload: {
        merchant_account_id: 'acct-multi',
        transaction_id: transactionId,
        body: { amount: 500, final: false, tracking: [{ number: '1Z999', carrier: 'UPS' }] },
        settings: { multiple_captures_enabled: true, over_capture_amount: 500, over_capture_percentage: 10 },
        prefer_capture: true,
        idempotency_key: 'capture-1',
      },
      actor,
    });
  });

  it('reads multiple captures as off when identity does not send the setting', async () => {
    await http
      .post(capturePath)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-legacy')
      .send({})
      .expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.capture)).toMatchObject({
      settings: { multiple_captures_enabled: false, over_capture_amount: null, over_capture_percentage: 25 },
      prefer_capture: false,
    });
  });

  it('has every setting off for a merchant account identity does not know, and ignores other Prefer values', async () => {
    for (const prefer of [
      'resource=Transaction-Capture',
      'resource=transaction-void',
      'resource=transaction-capture-x',
    ]) {
      rpc.reset();
      await http
        .post(capturePath)
        .set('authorization', bearer())
        .set('x-service-merchant-account-id', 'acct-unknown')
        .set('prefer', prefer)
        .send({})
        .expect(200);
      expect(rpc.onlyCallTo(transactionsPatterns.capture)).toStrictEqual({
        payload: {
          merchant_account_id: 'acct-unknown',
          transaction_id: transactionId,
          body: {},
          settings: { multiple_captures_enabled: false, over_capture_amount: null, over_capture_percentage: null },
          prefer_capture: false,
        },
        actor,
      });
    }
  });

  it('fails, without capturing, when identity cannot be asked', async () => {
    await http
      .post(capturePath)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-identity-down')
      .send({})
      .expect(502);
    expect(rpc.payloadsTo(transactionsPatterns.capture)).toEqual([]);
  });

  it.each([
    [
      '6 tracking entries',
      { tracking: Array.from({ length: 6 }, (_, i) => ({ number: `T${i}`, carrier: 'UPS' })) },
      ['body', 'tracking'],
      'too_long',
    ],
    [
      'a tracking entry without carrier',
      { tracking: [{ number: '1Z999' }] },
      ['body', 'tracking', 0, 'carrier'],
      'missing',
    ],
    ['an amount of 0', { amount: 0 }, ['body', 'amount'], 'greater_than_equal'],
  ])('refuses %s with a 422, asking nobody', async (_case, body, loc, type) => {
    const response = await http.post(capturePath).set('authorization', bearer()).send(body).expect(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc, type })]);
    expect(rpc.calls).toEqual([]);
  });

  it('lists and gets captures', async () => {
    await http.get(`/transactions/${transactionId}/captures?limit=100`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.captures)).toStrictEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      limit: 100,
    });
    await http.get(`/transactions/${transactionId}/captures?limit=101`).set('authorization', bearer()).expect(422);
    await http.get(`/transactions/${transactionId}/captures/cap_000123`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.captureGet)).toEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      capture_id: 'cap_000123',
    });
    await http
      .get(`/transactions/${transactionId}/captures/${'c'.repeat(100)}`)
      .set('authorization', bearer())
      .expect(200);
  });
});

describe('void, cancel and sync', () => {
  it('voids with Prefer and the idempotency key', async () => {
    await http
      .post(`/transactions/${transactionId}/void`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .set('idempotency-key', 'void-1')
      .set('prefer', 'resource=transaction-void')
      .expect(200);
    expect(rpc.onlyCallTo(transactionsPatterns.void)).toEqual({
      payload: {
        merchant_account_id: 'acct-1',
        transaction_id: transactionId,
        prefer_void: true,
        idempotency_key: 'void-1',
      },
      actor,
    });
    rpc.reset();
    await http
      .post(`/transactions/${transactionId}/void`)
      .set('authorization', bearer())
      .set('prefer', 'resource=transaction-capture')
      .expect(200);
    expect(rpc.onlyCallTo(transactionsPatterns.void)).toEqual({
      payload: { merchant_account_id: 'default', transaction_id: transactionId, prefer_void: false },
      actor,
    });
    await http
      .post(`/transactions/${transactionId}/void`)
      .set('authorization', bearer())
      .set('idempotency-key', 'v'.repeat(256))
      .expect(400);
  });

  it.each([
    ['cancel', transactionsPatterns.cancel],
    ['sync', transactionsPatterns.sync],
  ])('%s', async (operation, pattern) => {
    await http
      .post(`/transactions/${transactionId}/${operation}`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyCallTo(pattern)).toEqual({
      payload: { merchant_account_id: 'acct-1', transaction_id: transactionId },
      actor,
    });
  });
});

describe('refunds', () => {
  const refundId = randomUUID();

  it('refunds with the idempotency key', async () => {
    await http
      .post(`/transactions/${transactionId}/refunds`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .set('idempotency-key', 'refund-1')
      .send({ amount: 100, reason: 'damaged' })
      .expect(201);
    expect(rpc.onlyCallTo(transactionsPatterns.refund)).toStrictEqual({
      payload: {
        merchant_account_id: 'acct-1',
        transaction_id: transactionId,
        body: { amount: 100, reason: 'damaged' },
        idempotency_key: 'refund-1',
      },
      actor,
    });
    await http
      .post(`/transactions/${transactionId}/refunds`)
      .set('authorization', bearer())
      .send({ amount: 0 })
      .expect(422);
  });

  it('refunds everything, with an empty body as {}', async () => {
    await http
      .post(`/transactions/${transactionId}/refunds/all`)
      .set('authorization', bearer())
      .set('content-type', 'application/json')
      .send('')
      .expect(201);
    await http
      .post(`/transactions/${transactionId}/refunds/all`)
      .set('authorization', bearer())
      .set('idempotency-key', 'all-1')
      .send({ reason: 'order cancelled' })
      .expect(201);
    expect(rpc.callsTo(transactionsPatterns.refundAll)).toStrictEqual([
      { payload: { merchant_account_id: 'default', transaction_id: transactionId, body: {} }, actor },
      {
        payload: {
          merchant_account_id: 'default',
          transaction_id: transactionId,
          body: { reason: 'order cancelled' },
          idempotency_key: 'all-1',
        },
        actor,
      },
    ]);
  });

  it('lists and gets refunds', async () => {
    await http.get(`/transactions/${transactionId}/refunds`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.refunds)).toStrictEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      limit: 20,
    });
    await http.get(`/transactions/${transactionId}/refunds/${refundId}`).set('authorization', bearer()).expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.refundGet)).toEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      refund_id: refundId,
    });
    await http
      .get(`/refunds/${refundId}`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200);
    expect(rpc.onlyPayloadTo(transactionsPatterns.refundById)).toEqual({
      merchant_account_id: 'acct-1',
      refund_id: refundId,
    });
    await http.get('/refunds/not-a-uuid').set('authorization', bearer()).expect(422);
  });

  it('needs transactions.write to refund', async () => {
    const reader = await tokenWith(['transactions.read']);
    await http
      .post(`/transactions/${transactionId}/refunds`)
      .set('authorization', `Bearer ${reader}`)
      .send({})
      .expect(403);
    expect(rpc.calls).toEqual([]);
  });
});

describe('provider notifications', () => {
  const paymentServiceId = randomUUID();
  const path = `/payment-services/${paymentServiceId}/notifications`;
  // The transactions service answers null when the provider expects no body (204).
  beforeEach(() => rpc.answer(transactionsPatterns.notification, () => null));
  afterAll(() => rpc.answer(transactionsPatterns.notification, undefined));

  it('are reachable without a token and forward the body byte for byte, with the headers lower-cased', async () => {
    const raw = '{ "event_id" :  "evt_1",\n\t"amount":1299 ,"note":"café ☕" }  \n';
    await http
      .post(path)
      .set('Content-Type', 'application/json')
      .set('X-Mock-Card-Signature', 't=1700000000,v1=abc123')
      .set('X-Mock-Card-Event-Id', 'evt_1')
      .send(raw)
      .expect(204);
    const payload = rpc.onlyPayloadTo(transactionsPatterns.notification) as {
      payment_service_id: string;
      headers: Record<string, string>;
      raw_body: string;
    };
    expect(payload.payment_service_id).toBe(paymentServiceId);
    expect(payload.raw_body).toBe(raw);
    expect(payload.headers).toMatchObject({
      'content-type': 'application/json',
      'x-mock-card-signature': 't=1700000000,v1=abc123',
      'x-mock-card-event-id': 'evt_1',
    });
    expect(Object.keys(payload.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(Object.values(payload.headers).every((value) => typeof value === 'string')).toBe(true);
  });

  it.each([
    ['invalid JSON', 'application/json', '{"event_id": '],
    ['a form', 'application/x-www-form-urlencoded', 'event=refund&amount=%2010'],
    ['XML', 'text/xml', '<event id="1"/>'],
  ])('forward %s as received, unparsed', async (_case, contentType, raw) => {
    await http.post(path).set('content-type', contentType).send(raw).expect(204);
    expect((rpc.onlyPayloadTo(transactionsPatterns.notification) as { raw_body: string }).raw_body).toBe(raw);
  });

  it('forward an empty body as the empty string', async () => {
    await http.post(path).expect(204);
    expect(rpc.onlyPayloadTo(transactionsPatterns.notification)).toMatchObject({ raw_body: '' });
  });

  it('answer what the transactions service answers (a rejected signature is its 400) and need a uuid', async () => {
    rpc.answer(transactionsPatterns.notification, () => {
      throw ApiError.badRequest('The notification signature is not valid');
    });
    try {
      expectErrorBody(
        (await http.post(path).set('content-type', 'application/json').send('{}').expect(400)).body,
        400,
        'bad_request',
      );
    } finally {
      rpc.answer(transactionsPatterns.notification, () => null);
    }
    await http.post('/payment-services/psp/notifications').send('{}').expect(422);
  });

  it('answer with the body the provider expects when the transactions service gives one (Adyen: 200 [accepted])', async () => {
    rpc.answer(transactionsPatterns.notification, () => ({
      status: 200,
      content_type: 'text/plain',
      body: '[accepted]',
    }));
    const response = await http.post(path).set('content-type', 'application/json').send('{}').expect(200);
    expect(response.text).toBe('[accepted]');
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
  });
});

describe('settlement files', () => {
  const paymentServiceId = randomUUID();
  const path = `/payment-services/${paymentServiceId}/settlement-files`;
  const csv = 'record_type,provider_transaction_id,amount\nrefund,sim_txn_000020,2000\n';

  it('are ingested for the merchant account, with payment-services.write', async () => {
    rpc.answer(transactionsPatterns.settlementFile, () => ({
      type: 'settlement-file-ingestion',
      file_name: 'file_1.csv',
      records: 1,
      refunds_settled: 1,
      already_settled: 0,
      unmatched: 0,
    }));
    const response = await http
      .post(path)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .send({ file_name: 'file_1.csv', content: csv })
      .expect(200);
    expect(response.body).toMatchObject({ type: 'settlement-file-ingestion', refunds_settled: 1 });
    expect(rpc.onlyCallTo(transactionsPatterns.settlementFile)).toStrictEqual({
      payload: {
        merchant_account_id: 'acct-1',
        payment_service_id: paymentServiceId,
        file_name: 'file_1.csv',
        content: csv,
      },
      actor,
    });
    const transactionsWriter = await tokenWith(['transactions.write']);
    await http
      .post(path)
      .set('authorization', `Bearer ${transactionsWriter}`)
      .send({ file_name: 'file_1.csv', content: csv })
      .expect(403);
  });

  it('may be larger than the 1 MB of every other body', async () => {
    const content = `${'refund,sim_txn_000020,2000\n'.repeat(100_000)}`;
    expect(content.length).toBeGreaterThan(2 * 1024 * 1024);
    await http.post(path).set('authorization', bearer()).send({ file_name: 'big.csv', content }).expect(200);
    expect((rpc.onlyPayloadTo(transactionsPatterns.settlementFile) as { content: string }).content).toBe(content);
  });

  it.each([
    ['an unknown key', { file_name: 'f.csv', content: csv, format: 'csv' }, ['body', 'format']],
    ['an empty file name', { file_name: '', content: csv }, ['body', 'file_name']],
    ['no content', { file_name: 'f.csv' }, ['body', 'content']],
  ])('refuse %s with a 422', async (_case, body, loc) => {
    const response = await http.post(path).set('authorization', bearer()).send(body).expect(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc })]);
    expect(rpc.calls).toEqual([]);
  });
});

describe("GET /transactions/{id}/buyer-return (public: the buyer's browser has no token)", () => {
  const path = `/transactions/${transactionId}/buyer-return`;

  it('forwards the token without asking for a bearer token, and answers 303 to the redirect_url', async () => {
    const location = `https://shop.example/return?transaction_id=${transactionId}&transaction_status=authorization_succeeded`;
    rpc.answer(transactionsPatterns.buyerReturn, () => ({
      location,
      transaction_id: transactionId,
      transaction_status: 'authorization_succeeded',
    }));
    const response = await http.get(`${path}?token=abc&authentication_id=x`).expect(303);
    expect(response.headers.location).toBe(location);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(rpc.onlyPayloadTo(transactionsPatterns.buyerReturn)).toStrictEqual({
      transaction_id: transactionId,
      token: 'abc',
    });
    rpc.answer(transactionsPatterns.buyerReturn, undefined);
  });

  it('answers a small page when the payment method has no redirect_url', async () => {
    rpc.answer(transactionsPatterns.buyerReturn, () => ({
      location: null,
      transaction_id: transactionId,
      transaction_status: 'authorization_failed',
    }));
    const response = await http.get(`${path}?token=abc`).expect(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.text).toContain('authorization_failed');
    rpc.answer(transactionsPatterns.buyerReturn, undefined);
  });

  it('refuses a return without a token or with a malformed id before any service is asked (422)', async () => {
    await http.get(path).expect(422);
    await http.get('/transactions/not-a-uuid/buyer-return?token=abc').expect(422);
    expect(rpc.calls).toEqual([]);
  });
});

describe('GET /transactions/{id}/actions', () => {
  it('asks for the matched flow rules of the transaction in the merchant account', async () => {
    rpc.answer(transactionsPatterns.actions, () => ({ items: [] }));
    await http
      .get(`/transactions/${transactionId}/actions`)
      .set('authorization', bearer())
      .set('x-service-merchant-account-id', 'acct-1')
      .expect(200, { items: [] });
    expect(rpc.onlyPayloadTo(transactionsPatterns.actions)).toStrictEqual({
      merchant_account_id: 'acct-1',
      transaction_id: transactionId,
    });
    rpc.answer(transactionsPatterns.actions, undefined);
    await http.get(`/transactions/${transactionId}/actions`).expect(401);
  });
});

describe('the OpenAPI document', () => {
  it('describes every transaction endpoint', async () => {
    const document = (await http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const expected: Record<string, string[]> = {
      '/transactions': ['post', 'get'],
      '/transactions/{transaction_id}': ['get', 'put'],
      '/transactions/{transaction_id}/events': ['get'],
      '/transactions/{transaction_id}/actions': ['get'],
      '/transactions/{transaction_id}/buyer-return': ['get'],
      '/transactions/{transaction_id}/capture': ['post'],
      '/transactions/{transaction_id}/captures': ['get'],
      '/transactions/{transaction_id}/captures/{capture_id}': ['get'],
      '/transactions/{transaction_id}/void': ['post'],
      '/transactions/{transaction_id}/cancel': ['post'],
      '/transactions/{transaction_id}/sync': ['post'],
      '/transactions/{transaction_id}/refunds': ['post', 'get'],
      '/transactions/{transaction_id}/refunds/all': ['post'],
      '/transactions/{transaction_id}/refunds/{refund_id}': ['get'],
      '/refunds/{refund_id}': ['get'],
      '/payment-services/{payment_service_id}/notifications': ['post'],
      '/payment-services/{payment_service_id}/settlement-files': ['post'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(document.paths[path] ?? {}), path).toEqual(expect.arrayContaining(methods));
    }
    expect(document.paths['/payment-services/{payment_service_id}/notifications']!.post!.security).toEqual([]);
    expect(document.paths['/transactions/{transaction_id}/buyer-return']!.get!.security).toEqual([]);
  });
});
