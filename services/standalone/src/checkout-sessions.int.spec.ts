/**
 * Issue 6 acceptance (checkout sessions, item 8), over HTTP on the embedded runtime: create (an empty body opens a
 * session for an hour), read, update, delete; card fields attached from the buyer's browser without a token (POST,
 * and PUT as the reference SDK's own test sends it), replaced, refused for an unknown, deleted, expired or used
 * session and for a number failing the Luhn check; 422 bodies; scopes; and no card number or security code in any
 * response, event or file.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openServiceStorage } from '@switchyard/readmodel';
import { expectErrorBody, signToken } from '@switchyard/testing';
import { dataFiles, isoWithOffset, startHarness, TEST_PANS, type Harness } from './transactions.harness';

let h: Harness;
const account = 'cs';
const other = 'cs-other';
const SECURITY_CODE = '7391';

beforeAll(async () => {
  h = await startHarness('checkout-sessions', { env: { VAULT_THREAD: 'false' } });
  await h.createAccount(account);
  await h.createAccount(other);
});
afterAll(() => h?.stop());

const sessions = (acct = account) => ({
  create: (body?: object) => {
    const call = h.http().post('/checkout/sessions').set(h.headers(acct));
    return body === undefined ? call.set('content-type', 'application/json') : call.send(body);
  },
  get: (id: string) => h.http().get(`/checkout/sessions/${id}`).set(h.headers(acct)),
  put: (id: string, body: object) => h.http().put(`/checkout/sessions/${id}`).set(h.headers(acct)).send(body),
  delete: (id: string) => h.http().delete(`/checkout/sessions/${id}`).set(h.headers(acct)),
});
/** From the buyer's browser: no Authorization header. */
const fields = (id: string, card: Record<string, unknown> = {}, method: 'post' | 'put' = 'post') =>
  h
    .http()
    [method](`/checkout/sessions/${id}/fields`)
    .send({
      payment_method: {
        method: 'card',
        number: TEST_PANS[0],
        expiration_date: '11/30',
        security_code: SECURITY_CODE,
        ...card,
      },
    });

const newSession = async (body: object = {}): Promise<string> => {
  const response = await sessions().create(body);
  if (response.status !== 201) throw new Error(`POST /checkout/sessions answered ${response.status}: ${response.text}`);
  return response.body.id as string;
};

/** A token of a new API key with `roles`, carrying only `scopes`. */
async function tokenWith(roles: string[], scopes: string[]): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: `scopes ${scopes.join(' ')}`, roles },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600 });
  return { authorization: `Bearer ${token}`, 'x-service-merchant-account-id': account };
}

describe('the merchant’s session', () => {
  it('is opened by an empty JSON body for an hour (201), with every detail null and no card', async () => {
    const before = Date.now();
    const response = await sessions().create().expect(201);
    const after = Date.now();
    expect(response.body).toEqual({
      type: 'checkout-session',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expires_at: expect.stringMatching(isoWithOffset),
      cart_items: null,
      metadata: null,
      buyer: null,
      airline: null,
      amount: null,
      currency: null,
      payment_service_id: null,
      payment_method: null,
    });
    const expiresAt = Date.parse(response.body.expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 3600_000);
    // No body and no content type at all: the same.
    await h.http().post('/checkout/sessions').set(h.headers(account)).expect(201);
  });

  it('holds the details given; is read, updated (200) and deleted (204, no body); then 404', async () => {
    const paymentServiceId = randomUUID();
    const body = {
      cart_items: [{ name: 'Shoes', quantity: 2, unit_amount: 650, sku: 'SH-1', categories: ['shoes'] }],
      metadata: { order: 'A-1' },
      buyer: {
        display_name: 'Ada Lovelace',
        billing_details: { first_name: 'Ada', address: { city: 'London', country: 'GB' } },
      },
      airline: {
        booking_code: 'X36Q9C',
        is_cardholder_traveling: true,
        legs: [{ departure_airport: 'LHR', flight_number: 'BA117' }],
        ticket_delivery_method: 'electronic',
      },
      amount: 1300,
      currency: 'USD',
      payment_service_id: paymentServiceId,
      expires_in: 600,
    };
    const created = (await sessions().create(body).expect(201)).body;
    const { expires_in: _expiresIn, ...shown } = body;
    expect(created).toMatchObject(shown);
    expect((await sessions().get(created.id).expect(200)).body).toEqual(created);

    const updated = await sessions().put(created.id, { amount: 1500, metadata: null, expires_in: 3600 }).expect(200);
    expect(updated.body).toMatchObject({ ...shown, amount: 1500, metadata: null });
    expect(Date.parse(updated.body.expires_at)).toBeGreaterThan(Date.parse(created.expires_at));
    expect((await sessions().get(created.id).expect(200)).body).toEqual(updated.body);

    const deleted = await sessions().delete(created.id).expect(204);
    expect(deleted.text).toBe('');
    expectErrorBody((await sessions().get(created.id).expect(404)).body, 404, 'not_found');
    await sessions().put(created.id, { amount: 1 }).expect(404);
    await sessions().delete(created.id).expect(404);
  });

  it('of another merchant account does not exist', async () => {
    const id = await newSession();
    await sessions(other).get(id).expect(404);
    await sessions(other).put(id, { amount: 1 }).expect(404);
    await sessions(other).delete(id).expect(404);
    await sessions().get(id).expect(200);
    await sessions().get(randomUUID()).expect(404);
  });

  it('answers 422 with the field for a bad body or id', async () => {
    const short = await sessions().create({ expires_in: 59 }).expect(422);
    expect(short.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'expires_in'], type: 'greater_than_equal' }),
    ]);
    const long = await sessions().create({ expires_in: 86_401 }).expect(422);
    expect(long.body.detail[0]).toMatchObject({ loc: ['body', 'expires_in'], type: 'less_than_equal' });
    expect((await sessions().create({ currency: 'usd' }).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'currency'],
    });
    expect(
      (
        await sessions()
          .create({ cart_items: [{ name: 'x', quantity: 0, unit_amount: 1 }] })
          .expect(422)
      ).body.detail[0],
    ).toMatchObject({ loc: ['body', 'cart_items', 0, 'quantity'] });
    expect((await sessions().create({ payment_service_id: 'nope' }).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'payment_service_id'],
    });
    expect(
      (
        await sessions()
          .put(await newSession(), { expires_in: 10 })
          .expect(422)
      ).body.detail[0],
    ).toMatchObject({ loc: ['body', 'expires_in'] });
    expect((await sessions().get('not-a-uuid').expect(422)).body.detail[0]).toMatchObject({
      loc: ['path', 'session_id'],
    });
  });
});

describe('card fields from the buyer’s browser', () => {
  it('attach the card without a token (204); the session shows its summary only', async () => {
    const id = await newSession({ amount: 1299, currency: 'USD' });
    const attached = await fields(id).expect(204);
    expect(attached.text).toBe('');
    const session = (await sessions().get(id).expect(200)).body;
    expect(session.payment_method).toEqual({
      type: 'payment-method',
      id: expect.any(String),
      method: 'card',
      scheme: 'visa',
      label: '1111',
      fingerprint: expect.any(String),
      details: { bin: '411111', card_type: 'credit', card_country: 'US', card_issuer_name: 'Switchyard Test Bank US' },
    });
    expect(JSON.stringify(session)).not.toContain(SECURITY_CODE);
  });

  it('attached again (PUT, as the reference SDK sends it) replace the card', async () => {
    const id = await newSession();
    await fields(id).expect(204);
    const first = (await sessions().get(id).expect(200)).body.payment_method;
    await fields(id, { number: TEST_PANS[1], security_code: undefined }, 'put').expect(204);
    const second = (await sessions().get(id).expect(200)).body.payment_method;
    expect(second).toMatchObject({ scheme: 'mastercard', label: '4444' });
    expect(second.id).not.toBe(first.id);
    expect(h.fixture.service.vault.slices.vault.find(account, first.id)).toBeNull();
  });

  it('ignore the merchant account header: the account is the session’s own', async () => {
    const id = await newSession();
    await fields(id).set('x-service-merchant-account-id', other).expect(204);
    expect((await sessions().get(id).expect(200)).body.payment_method).toMatchObject({ label: '1111' });
  });

  it('refuse a number failing the Luhn check (400 naming the field), a bad shape (422, the card redacted)', async () => {
    const id = await newSession();
    const luhn = await fields(id, { number: '4111111111111112' }).expect(400);
    expectErrorBody(luhn.body, 400, 'bad_request');
    expect(luhn.body.details).toEqual([
      expect.objectContaining({ location: 'body', pointer: '/payment_method/number', type: 'invalid_card_number' }),
    ]);
    expect(luhn.text).not.toContain('4111111111111112');

    const shape = await fields(id, { number: '4111 1111 1111 1111', expiration_date: '2030-11' }).expect(422);
    expect(shape.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([
      ['body', 'payment_method', 'number'],
      ['body', 'payment_method', 'expiration_date'],
    ]);
    expect(shape.body.detail[0].input).toBe('[redacted]');
    expect((await fields(id, { method: 'paypal' }).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'payment_method', 'method'],
    });
    expect((await fields(id, { security_code: '12' }).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'payment_method', 'security_code'],
      input: '[redacted]',
    });
    expect((await h.http().post(`/checkout/sessions/${id}/fields`).send({}).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'payment_method'],
      type: 'missing',
    });
    expect((await sessions().get(id).expect(200)).body.payment_method).toBeNull();
  });

  it('for an unknown or deleted session are a 404', async () => {
    await fields(randomUUID()).expect(404);
    const id = await newSession();
    await sessions().delete(id).expect(204);
    expectErrorBody((await fields(id).expect(404)).body, 404, 'not_found');
  });

  it('for an expired session are a 400 checkout_session_expired', async () => {
    // A session that expired a second ago, written to its stream as the service would have.
    const id = randomUUID();
    const writer = openServiceStorage('vault', { dataDir: h.fixture.dataDir });
    try {
      const now = Date.now();
      await writer.store.append(
        `checkout-session-${id}`,
        [
          {
            type: 'CheckoutSessionCreated',
            data: {
              id,
              merchantAccountId: account,
              cartItems: null,
              metadata: null,
              buyer: null,
              airline: null,
              amount: null,
              currency: null,
              paymentServiceId: null,
              expiresAt: new Date(now - 1000).toISOString(),
              at: new Date(now - 61_000).toISOString(),
            },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
    } finally {
      await writer.close();
    }
    const refused = await fields(id).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.details).toEqual([
      expect.objectContaining({ location: 'path', pointer: '/session_id', type: 'checkout_session_expired' }),
    ]);
    await sessions().put(id, { amount: 1 }).expect(400);
  });

  it('for a session a transaction used are a 400 checkout_session_used', async () => {
    const id = await newSession();
    await fields(id).expect(204);
    const claimed = await h.fixture.service.vault.slices.checkoutSessions.claim(account, id, randomUUID());
    expect(claimed.card).toEqual({ number: TEST_PANS[0], expirationDate: '11/30', securityCode: SECURITY_CODE });
    const refused = await fields(id).expect(400);
    expect(refused.body.details[0]).toMatchObject({ type: 'checkout_session_used' });
    expect((await sessions().put(id, { amount: 1 }).expect(400)).body.details[0]).toMatchObject({
      type: 'checkout_session_used',
    });
  });
});

describe('access', () => {
  it('needs checkout-sessions.write to create, update and delete, .read to read; embed gets nothing; no token is a 401', async () => {
    const id = await newSession();
    const reader = await tokenWith(['administrator'], ['checkout-sessions.read']);
    await h.http().get(`/checkout/sessions/${id}`).set(reader).expect(200);
    expectErrorBody(
      (await h.http().post('/checkout/sessions').set(reader).send({}).expect(403)).body,
      403,
      'forbidden',
    );
    await h.http().put(`/checkout/sessions/${id}`).set(reader).send({}).expect(403);
    await h.http().delete(`/checkout/sessions/${id}`).set(reader).expect(403);
    const embed = await tokenWith(['administrator'], ['embed']);
    await h.http().post('/checkout/sessions').set(embed).send({}).expect(403);
    await h.http().get(`/checkout/sessions/${id}`).set(embed).expect(403);
    await h.http().post('/checkout/sessions').send({}).expect(401);
    await h.http().get(`/checkout/sessions/${id}`).expect(401);
  });

  it('documents the routes, the fields route without a security requirement', async () => {
    const document = (await h.http().get('/openapi.json').expect(200)).body;
    expect(Object.keys(document.paths['/checkout/sessions/{session_id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(document.paths['/checkout/sessions'].post.responses['201']).toBeDefined();
    expect(document.paths['/checkout/sessions/{session_id}/fields'].post.security).toEqual([]);
    expect(document.paths['/checkout/sessions/{session_id}/fields'].put.security).toEqual([]);
    expect(document.components.schemas.CheckoutSession).toBeDefined();
  });
});

describe('no card number or security code kept or answered', () => {
  it('none in any response, event or file', async () => {
    expect(h.leaks).toEqual([]);
    const db = new Database(path.join(h.fixture.dataDir, 'vault.db'), { readonly: true });
    let events: { stream_id: string; type: string; data: string; metadata: string }[];
    try {
      events = db
        .prepare("SELECT stream_id, type, data, metadata FROM events WHERE stream_id LIKE 'checkout-session-%'")
        .all() as typeof events;
    } finally {
      db.close();
    }
    const attached = events.filter((event) => event.type === 'CheckoutSessionCardAttached');
    expect(attached.length).toBeGreaterThan(3);
    for (const event of attached) {
      expect(Object.keys((JSON.parse(event.data) as { card: object }).card).sort()).toEqual(
        [
          'bin',
          'cardId',
          'cardType',
          'expirationDate',
          'fingerprint',
          'issuerCountry',
          'issuerName',
          'last4',
          'scheme',
        ].sort(),
      );
    }
    const everything = events.map((event) => `${event.data}${event.metadata}`).join('\n');
    for (const pan of TEST_PANS) expect(everything).not.toContain(pan);
    expect(everything).not.toMatch(/security_?code/i);

    expect(dataFiles(h).length).toBeGreaterThan(0);
    expect(h.filesWithPan()).toEqual([]);
    for (const file of dataFiles(h))
      expect(fs.readFileSync(file).includes(`"security_code":"${SECURITY_CODE}"`), file).toBe(false);
  });
});
