/**
 * Embed tokens over HTTP (issue 9 item 2; docs/embed-tokens.md), against the embedded runtime: a token pinned to
 * amount, currency, buyer and metadata pays only what it pins; a token bound to a checkout session pays only with
 * that session; an embed token reaches no endpoint beyond the four the spec grants `embed` (proved by walking every
 * operation of GET /openapi.json); a server-to-server token is not pinned by an `embed` claim it carries.
 */
import { randomUUID } from 'node:crypto';
import { signToken } from '@switchyard/testing';
import {
  ACCOUNT_HEADER,
  card,
  startHarness,
  TEST_PANS,
  type Harness,
} from '../../services/standalone/src/transactions.harness';

const account = 'embed-shop';
let h: Harness;
/** The merchant's backend: an API key pair with the `integration` role, which grants `embed`. */
let backend: { kid: string; private_key: string };
let buyerId: string;

beforeAll(async () => {
  h = await startHarness('embed-tokens');
  await h.createAccount(account);
  await h.createConnection(account);
  const created = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: 'checkout backend', roles: ['integration'] },
    { kind: 'operator' },
  );
  backend = { kid: created.kid, private_key: created.private_key! };
  buyerId = (
    await h
      .http()
      .post('/buyers')
      .set(h.headers(account))
      .send({ display_name: 'Embed Buyer', external_identifier: 'embed-cust-1' })
      .expect(201)
  ).body.id;
});

afterAll(() => h?.stop());

/** A token as the merchant's backend mints one per checkout (every call a new token, so no rate limit is shared). */
const mint = (
  claims: { embed?: unknown; checkout_session_id?: string } = {},
  scopes: readonly string[] = ['embed'],
  key = backend,
) => signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes, expiresIn: 600, extraClaims: claims });

const pay = (token: string, body: Record<string, unknown>) =>
  h
    .http()
    .post('/transactions')
    .set({ authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account })
    .send(body);

/** How many transactions the account has (admin token): a refused request must not have made one. */
async function transactionCount(): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: { body: { items: unknown[]; next_cursor: string | null } } = await h
      .http()
      .get('/transactions')
      .query({ limit: 100, ...(cursor ? { cursor } : {}) })
      .set(h.headers(account))
      .expect(200);
    count += page.body.items.length;
    cursor = page.body.next_cursor;
  } while (cursor);
  return count;
}

describe('a token pinning amount, currency, buyer and metadata', () => {
  const pins = () => ({ amount: 1299, currency: 'USD', buyer_id: buyerId, metadata: { order: 'A-1' } });

  it('pays the pinned amount and currency; the pinned buyer and metadata left out of the body are filled in', async () => {
    const response = await pay(await mint({ embed: pins() }), {
      amount: 1299,
      currency: 'USD',
      payment_method: card(),
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({
      status: 'authorization_succeeded',
      amount: 1299,
      currency: 'USD',
      metadata: { order: 'A-1' },
      buyer: { id: buyerId },
    });
  });

  it.each([
    [
      'amount',
      { amount: 1000 },
      '/amount',
      'amount 1000 does not match the amount 1299 this embed token is limited to',
    ],
    [
      'currency',
      { currency: 'EUR' },
      '/currency',
      'currency EUR does not match the currency USD this embed token is limited to',
    ],
    [
      'buyer',
      { buyer_id: '00000000-0000-4000-8000-0000000000b2' },
      '/buyer_id',
      'buyer_id 00000000-0000-4000-8000-0000000000b2 does not match the buyer_id',
    ],
    [
      'buyer (named another way)',
      { buyer_external_identifier: 'embed-cust-1' },
      '/buyer_external_identifier',
      'buyer_external_identifier cannot be given: this embed token is limited to the buyer with buyer_id',
    ],
    [
      'metadata (another value)',
      { metadata: { order: 'B-2' } },
      '/metadata/order',
      'metadata "order" "B-2" does not match the value "A-1" this embed token is limited to',
    ],
    [
      'metadata (a key not pinned)',
      { metadata: { order: 'A-1', coupon: 'FREE' } },
      '/metadata/coupon',
      'metadata key "coupon" cannot be given: this embed token is limited to the metadata keys "order"',
    ],
  ])(
    'refuses a request contradicting its %s: 403 naming the field, no transaction made',
    async (_field, change, pointer, message) => {
      const before = await transactionCount();
      const response = await pay(await mint({ embed: pins() }), {
        amount: 1299,
        currency: 'USD',
        payment_method: card(),
        ...change,
      });
      expect(response.status, response.text).toBe(403);
      expect(response.body).toMatchObject({
        type: 'error',
        code: 'forbidden',
        status: 403,
        details: [{ location: 'body', pointer, type: 'pinned_by_embed_token' }],
      });
      expect(response.body.message).toContain(message);
      expect(response.text).not.toContain(TEST_PANS[0]);
      expect(await transactionCount()).toBe(before);
    },
  );

  it('refuses a malformed embed claim with 401, saying what is wrong', async () => {
    const response = await pay(await mint({ embed: { amount: '1299' } }), {
      amount: 1299,
      currency: 'USD',
      payment_method: card(),
    });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({
      code: 'unauthorized',
      message:
        'No valid API authentication found: the token claim embed is not valid (amount: must be an integer (minor units))',
    });
  });
});

describe('a token bound to a checkout session', () => {
  /** The buyer's browser fills the session's card fields: no Authorization header, the session id is the credential. */
  async function sessionWithCard(): Promise<string> {
    const session = (await h.http().post('/checkout/sessions').set(h.headers(account)).send({}).expect(201)).body
      .id as string;
    await h
      .http()
      .post(`/checkout/sessions/${session}/fields`)
      .send({
        payment_method: { method: 'card', number: TEST_PANS[0], expiration_date: '11/30', security_code: '123' },
      })
      .expect(204);
    return session;
  }

  it('pays only with its session: a card or another session is a 403, its own session a 201', async () => {
    const session = await sessionWithCard();
    const other = await sessionWithCard();
    const token = await mint({ embed: { amount: 1299, currency: 'USD' }, checkout_session_id: session });

    const withCard = await pay(token, { amount: 1299, currency: 'USD', payment_method: card() });
    expect(withCard.status).toBe(403);
    expect(withCard.body.message).toBe(
      `payment_method card does not match the checkout session ${session} this embed token is limited to: pay with {"method": "checkout-session", "id": "${session}"}`,
    );

    const withOther = await pay(token, {
      amount: 1299,
      currency: 'USD',
      payment_method: { method: 'checkout-session', id: other },
    });
    expect(withOther.status).toBe(403);
    expect(withOther.body.details[0]).toMatchObject({ pointer: '/payment_method/id', type: 'pinned_by_embed_token' });

    const paid = await pay(token, {
      amount: 1299,
      currency: 'USD',
      payment_method: { method: 'checkout-session', id: session },
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({
      status: 'authorization_succeeded',
      amount: 1299,
      checkout_session_id: session,
      payment_method: { label: '1111' },
    });
  });

  it('still lists the pinned buyer’s gift cards (a split payment checks them in the same checkout), never another buyer’s', async () => {
    const token = await mint({ embed: { buyer_id: buyerId }, checkout_session_id: randomUUID() });
    const list = (buyer: string) =>
      h
        .http()
        .get('/buyers/gift-cards')
        .query({ buyer_id: buyer })
        .set({ authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account });
    expect((await list(buyerId)).status).toBe(200);
    const other = await list(randomUUID());
    expect(other.status).toBe(403);
    expect(other.body.details[0]).toMatchObject({ location: 'query', pointer: '/buyer_id' });
  });
});

describe('where an embed token goes', () => {
  it.each([
    ['GET', '/transactions'],
    ['POST', '/payment-methods'],
    ['POST', '/checkout/sessions'],
    ['POST', '/buyers'],
  ])('a server-to-server endpoint (%s %s) is a 403 for it', async (method, path) => {
    const token = await mint({ embed: { amount: 1299 } });
    const response = await h
      .http()
      [method === 'GET' ? 'get' : 'post'](path)
      .set({ authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account })
      .send({});
    expect(response.status).toBe(403);
    expect(response.body.message).toMatch(/^This endpoint needs the scope/);
  });

  it('an administrator key cannot mint one (its wildcards do not cover embed)', async () => {
    const admin = await h.fixture.service.identity.apiKeyPairs.create(
      { display_name: 'admin for embed', roles: ['administrator'] },
      { kind: 'operator' },
    );
    const response = await pay(await mint({}, ['embed'], { kid: admin.kid, private_key: admin.private_key! }), {
      amount: 1299,
      currency: 'USD',
      payment_method: card(),
    });
    expect(response.status).toBe(403);
  });

  it('walking every operation of the OpenAPI document, it reaches exactly the ones the spec grants embed', async () => {
    const document = (await h.http().get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const token = await mint();
    const reached: string[] = [];
    const refused: string[] = [];
    const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const method of methods) {
        const operation = operations[method];
        if (!operation || (operation.security && operation.security.length === 0)) continue; // public: no token needed by anyone
        const path = template.replace(/\{[^}]+\}/g, () => randomUUID());
        const response = await h
          .http()
          [method](path)
          .set({ authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account })
          .send({});
        const name = `${method.toUpperCase()} ${template}`;
        if (response.status === 403 && /^This endpoint needs the scope/.test(response.body.message)) refused.push(name);
        else reached.push(name);
      }
    }
    expect(reached.sort()).toEqual([
      'GET /buyers/gift-cards',
      'POST /gift-cards',
      'POST /gift-cards/balances',
      'POST /transactions',
    ]);
    expect(refused.length).toBeGreaterThan(50);
  });
});

describe('stored instruments: only the pinned buyer’s (issue 22, item 2)', () => {
  let otherBuyer: string;
  let ownMethod: string;
  let othersMethod: string;
  let othersGiftCard: string;
  let ownGiftCard: string;

  beforeAll(async () => {
    await h
      .http()
      .post('/payment-services')
      .set(h.headers(account))
      .send({
        display_name: 'Gift cards',
        payment_service_definition_id: 'mock-gift-card',
        fields: [{ key: 'merchant_id', value: 'sim-embed-gc' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      })
      .expect(201);
    otherBuyer = (
      await h
        .http()
        .post('/buyers')
        .set(h.headers(account))
        .send({ display_name: 'Other Buyer', external_identifier: 'embed-cust-2' })
        .expect(201)
    ).body.id;
    const storeMethod = async (buyer: string) =>
      (
        await h
          .http()
          .post('/payment-methods')
          .set(h.headers(account))
          .send({ ...card(), buyer_id: buyer })
          .expect(201)
      ).body.id as string;
    ownMethod = await storeMethod(buyerId);
    othersMethod = await storeMethod(otherBuyer);
    const storeGiftCard = async (buyer: string, number: string) =>
      (
        await h
          .http()
          .post('/gift-cards')
          .set(h.headers(account))
          .send({ number, pin: '05000', buyer_id: buyer })
          .expect(201)
      ).body.id as string;
    ownGiftCard = await storeGiftCard(buyerId, '6033912345670001');
    othersGiftCard = await storeGiftCard(otherBuyer, '6033912345670002');
  });

  const embedCall = (token: string) => ({ authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account });

  it('a token that pins no buyer lists no buyer’s gift cards and uses no stored method or gift card (403), the README’s own token', async () => {
    const token = await mint({ embed: { amount: 1299, currency: 'USD' } });
    const listed = await h.http().get('/buyers/gift-cards').query({ buyer_id: otherBuyer }).set(embedCall(token));
    expect(listed.status, listed.text).toBe(403);
    expect(listed.body.message).toMatch(/pins no buyer/);
    const before = await transactionCount();
    const withMethod = await pay(token, {
      amount: 1299,
      currency: 'USD',
      payment_method: { method: 'id', id: othersMethod },
    });
    expect(withMethod.status, withMethod.text).toBe(403);
    expect(withMethod.body.details[0]).toMatchObject({ pointer: '/payment_method/id', type: 'pinned_by_embed_token' });
    const withGiftCard = await pay(token, {
      amount: 1299,
      currency: 'USD',
      gift_cards: [{ id: othersGiftCard, amount: 1299 }],
    });
    expect(withGiftCard.status, withGiftCard.text).toBe(403);
    const balance = await h
      .http()
      .post('/gift-cards/balances')
      .set(embedCall(token))
      .send({ items: [{ id: othersGiftCard }] });
    expect(balance.status, balance.text).toBe(403);
    expect(await transactionCount()).toBe(before);
  });

  it('a token pinned to a buyer uses that buyer’s stored method and gift cards, never another buyer’s (403)', async () => {
    const token = () => mint({ embed: { amount: 1299, currency: 'USD', buyer_id: buyerId } });
    const before = await transactionCount();
    const othersCard = await pay(await token(), {
      amount: 1299,
      currency: 'USD',
      payment_method: { method: 'id', id: othersMethod },
    });
    expect(othersCard.status, othersCard.text).toBe(403);
    expect(othersCard.body).toMatchObject({
      code: 'forbidden',
      details: [{ pointer: '/payment_method/id', type: 'pinned_by_embed_token' }],
    });
    const othersGift = await pay(await token(), {
      amount: 1299,
      currency: 'USD',
      payment_method: card(),
      gift_cards: [{ id: othersGiftCard, amount: 500 }],
    });
    expect(othersGift.status, othersGift.text).toBe(403);
    expect(othersGift.body.details[0]).toMatchObject({ pointer: '/gift_cards/0/id' });
    const balance = await h
      .http()
      .post('/gift-cards/balances')
      .set(embedCall(await token()))
      .send({ items: [{ id: ownGiftCard }, { id: othersGiftCard }] });
    expect(balance.status, balance.text).toBe(403);
    expect(balance.body.details[0]).toMatchObject({ pointer: '/items/1/id' });
    expect(await transactionCount()).toBe(before);

    const own = await pay(await token(), {
      amount: 1299,
      currency: 'USD',
      payment_method: { method: 'id', id: ownMethod },
    });
    expect(own.status, own.text).toBe(201);
    const ownBalance = await h
      .http()
      .post('/gift-cards/balances')
      .set(embedCall(await token()))
      .send({ items: [{ id: ownGiftCard }] });
    expect(ownBalance.status, ownBalance.text).toBe(200);
  });

  it('server to server: a stored method of another buyer than the payment names is a 400; one of the same buyer pays', async () => {
    const mismatch = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .send({ amount: 1000, currency: 'USD', buyer_id: buyerId, payment_method: { method: 'id', id: othersMethod } });
    expect(mismatch.status, mismatch.text).toBe(400);
    expect(mismatch.body.details[0]).toMatchObject({
      pointer: '/payment_method/id',
      type: 'payment_method_buyer_mismatch',
    });
    const same = await h
      .http()
      .post('/transactions')
      .set(h.headers(account))
      .send({
        amount: 1000,
        currency: 'USD',
        buyer_id: otherBuyer,
        payment_method: { method: 'id', id: othersMethod },
      });
    expect(same.status, same.text).toBe(201);
  });
});

describe('a server-to-server token carrying an embed claim', () => {
  const contradicting = { embed: { amount: 1, currency: 'EUR', buyer_id: randomUUID(), metadata: {} } };

  it('is not pinned by it: pinning applies to calls through the embed scope only', async () => {
    const response = await pay(await mint(contradicting, ['transactions.write']), {
      amount: 1000,
      currency: 'USD',
      payment_method: card(),
      metadata: { order: 'S2S-1' },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({ amount: 1000, currency: 'USD', metadata: { order: 'S2S-1' } });
  });

  it('nor when it has the embed scope too: the server-to-server scope is the one that matched', async () => {
    const response = await pay(await mint(contradicting, ['transactions.write', 'embed']), {
      amount: 1000,
      currency: 'USD',
      payment_method: card(),
    });
    expect(response.status, response.text).toBe(201);
  });
});

afterAll(() => {
  expect(h.leaks).toEqual([]);
});
