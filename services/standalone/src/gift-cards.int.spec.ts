/**
 * Issue 7 acceptance (gift cards, items 2–4), over HTTP on the embedded runtime with the simulator's gift card
 * provider (`mock-gift-card`; a PIN starting with 0 holds the PIN as an integer, a number ending in 0000 is expired,
 * PIN 10000 is a wrong PIN): balances (11 items → 422; a mix → one result each, in order), store → get → list →
 * a buyer's cards by last use, sort validation, delete, issue and activate, scopes, no gift card service, an
 * unreachable provider, and no card number or PIN in any event or file.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openServiceStorage } from '@switchyard/readmodel';
import { expectErrorBody, signToken } from '@switchyard/testing';
import { dataFiles, isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'gc';
const bare = 'gc-none';
const simulatorMerchant = 'sim-gc';
let serviceId: string;

beforeAll(async () => {
  h = await startHarness('gift-cards');
  await h.createAccount(account);
  await h.createAccount(bare);
  const created = await h
    .http()
    .post('/payment-services')
    .set(h.headers(account))
    .send({
      display_name: 'Gift cards',
      payment_service_definition_id: 'mock-gift-card',
      fields: [{ key: 'merchant_id', value: simulatorMerchant }],
      accepted_currencies: ['USD'],
      accepted_countries: ['US'],
    })
    .expect(201);
  serviceId = created.body.id as string;
  // A card connection does not make a gift card service.
  await h.createConnection(bare);
});

afterAll(() => h?.stop());

/** Every card number and PIN the specs send or are given: none may reach an event or a file in clear. */
const secrets: string[] = [];
let serial = 100;
/** A fresh card number (the simulator remembers every number it has seen), ending in `last4`. */
const cardNumber = (last4 = '4321'): string => {
  const number = `60339${String(serial++).padStart(10, '0')}${last4}`;
  secrets.push(number);
  return number;
};

const post = (url: string, body: unknown, acct = account) =>
  h
    .http()
    .post(url)
    .set(h.headers(acct))
    .send(body as object);
const get = (url: string, acct = account) => h.http().get(url).set(h.headers(acct));
const balances = (items: unknown[], acct = account) => post('/gift-cards/balances', { items }, acct);
const store = async (body: Record<string, unknown>) => {
  const response = await post('/gift-cards', body);
  if (response.status !== 201) throw new Error(`POST /gift-cards answered ${response.status}: ${response.text}`);
  return response.body as { id: string } & Record<string, unknown>;
};

/** A token of a new API key with `roles`, carrying only `scopes`. */
async function tokenWith(
  roles: string[],
  scopes: string[],
  extraClaims: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: `scopes ${scopes.join(' ')}`, roles },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600, extraClaims });
  return { authorization: `Bearer ${token}`, 'x-service-merchant-account-id': account };
}

describe('POST /gift-cards/balances', () => {
  it('11 items → 422 naming the field', async () => {
    const items = Array.from({ length: 11 }, () => ({ number: cardNumber(), pin: '01000' }));
    const response = await balances(items).expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'items'], type: 'too_long', ctx: { max_length: 10 } }),
    ]);
    const empty = await balances([]).expect(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ['body', 'items'], type: 'too_short' });
    const malformed = await balances([{ number: '1234', pin: '01000' }]).expect(422);
    expect(malformed.body.detail[0]).toMatchObject({
      loc: ['body', 'items', 0, 'number'],
      type: 'string_pattern_mismatch',
    });
  });

  it('a valid, an expired and a wrong-PIN card → one result each, in order', async () => {
    const [valid, expired, wrongPin] = [cardNumber('1234'), cardNumber('0000'), cardNumber('5678')];
    const response = await balances([
      { number: valid, pin: '01000' },
      { number: expired, pin: '01000' },
      { number: wrongPin, pin: '10000' },
    ]).expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const summary = {
      type: 'gift-card',
      id: null,
      merchant_account_id: account,
      bin: '603390',
      usage_count: 0,
      cit_usage_count: 0,
      last_used_at: null,
      cit_last_used_at: null,
    };
    expect(response.body).toEqual({
      items: [
        {
          ...summary,
          sub_bin: valid.slice(6, 10),
          last4: '1234',
          currency: 'USD',
          expiration_date: null,
          balance: 1000,
          balance_error_code: null,
          balance_raw_error_code: null,
          balance_raw_error_message: null,
        },
        {
          ...summary,
          sub_bin: expired.slice(6, 10),
          last4: '0000',
          currency: null,
          expiration_date: null,
          balance: null,
          balance_error_code: 'expired_card',
          balance_raw_error_code: '10001',
          balance_raw_error_message: expect.stringMatching(/expired/),
        },
        {
          ...summary,
          sub_bin: wrongPin.slice(6, 10),
          last4: '5678',
          currency: null,
          expiration_date: null,
          balance: null,
          balance_error_code: 'invalid_gift_card',
          balance_raw_error_code: '10000',
          balance_raw_error_message: expect.any(String),
        },
      ],
    });
  });

  it('a stored id unknown to the merchant account → 404 naming the item, before any card is checked', async () => {
    const number = cardNumber();
    const response = await balances([{ number, pin: '01000' }, { id: randomUUID() }]).expect(404);
    expectErrorBody(response.body, 404, 'not_found');
    expect(response.body.details).toEqual([
      expect.objectContaining({ location: 'body', pointer: '/items/1/id', type: 'gift_card_not_found' }),
    ]);
    expect(h.simulator.giftCard(number)).toBeUndefined();
  });
});

describe('stored gift cards', () => {
  it('store → get → list → a buyer’s cards by last_used_at; balances of stored cards', async () => {
    const buyer = `buyer-${randomUUID()}`;
    const [first, second, third] = [cardNumber('1111'), cardNumber('2222'), cardNumber('3333')];
    secrets.push('0123456');
    const card = await store({ number: first, pin: '0123456', buyer_external_identifier: buyer });
    expect(card).toEqual({
      type: 'gift-card',
      id: expect.any(String),
      merchant_account_id: account,
      gift_card_service: {
        type: 'gift-card-service',
        id: serviceId,
        gift_card_service_definition_id: 'mock-gift-card',
        display_name: 'Gift cards',
      },
      bin: '603390',
      sub_bin: first.slice(6, 10),
      last4: '1111',
      currency: 'USD',
      expiration_date: null,
      buyer: expect.objectContaining({
        type: 'buyer',
        id: null,
        external_identifier: buyer,
        merchant_account_id: account,
      }),
      usage_count: 0,
      cit_usage_count: 0,
      last_used_at: null,
      cit_last_used_at: null,
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect((await get(`/gift-cards/${card.id}`).expect(200)).body).toEqual(card);
    expect((await get(`/gift-cards/${card.id}`, bare).expect(404)).body.code).toBe('not_found');

    const used = await store({ number: second, pin: '02000', buyer_external_identifier: buyer });
    const cit = await store({ number: third, pin: '03000', buyer_external_identifier: buyer });
    const list = await get(`/gift-cards?buyer_external_identifier=${buyer}&limit=2`).expect(200);
    expect(list.body).toMatchObject({ limit: 2, previous_cursor: null, next_cursor: expect.any(String) });
    expect(list.body.items.map((item: { id: string }) => item.id)).toEqual([cit.id, used.id]);
    const rest = await get(
      `/gift-cards?buyer_external_identifier=${buyer}&limit=2&cursor=${list.body.next_cursor}`,
    ).expect(200);
    expect(rest.body).toMatchObject({ items: [{ id: card.id }], next_cursor: null });

    // Payments that redeemed two of the cards, as the split-payment flow records them (another writer on the store).
    const writer = openServiceStorage('transactions', { dataDir: h.fixture.dataDir });
    try {
      const redeemed = (giftCardId: string, merchantInitiated: boolean, at: string) =>
        writer.store.append(
          `transaction-${randomUUID()}`,
          [
            {
              type: 'GiftCardRedemptionSucceeded',
              data: { redemptionId: randomUUID(), giftCardId, merchantInitiated, at },
            },
          ],
          {
            expectedRevision: 'no_stream',
          },
        );
      await redeemed(used.id, true, '2026-03-02T10:00:00.000Z');
      await redeemed(cit.id, false, '2026-03-01T10:00:00.000Z');
      await redeemed(used.id, true, '2026-03-01T09:00:00.000Z');
    } finally {
      await writer.close();
    }

    const buyerCards = async (query: string) => {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const response = await get(`/buyers/gift-cards?buyer_external_identifier=${buyer}${query}`).expect(200);
        const items = response.body.items as { id: string; usage_count: number }[];
        if (items.reduce((total, item) => total + item.usage_count, 0) === 3 || Date.now() > deadline) return items;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const newestUse = await buyerCards('');
    expect(newestUse.map((item) => item.id)).toEqual([used.id, cit.id, card.id]);
    expect(newestUse[0]).toMatchObject({
      usage_count: 2,
      cit_usage_count: 0,
      last_used_at: '2026-03-02T10:00:00.000Z',
      cit_last_used_at: null,
      balance: null,
    });
    expect(newestUse[1]).toMatchObject({
      usage_count: 1,
      cit_usage_count: 1,
      last_used_at: '2026-03-01T10:00:00.000Z',
      cit_last_used_at: '2026-03-01T10:00:00.000Z',
    });
    expect(Object.keys(newestUse[2]!).sort()).toEqual(
      [
        'type',
        'id',
        'merchant_account_id',
        'bin',
        'sub_bin',
        'last4',
        'currency',
        'expiration_date',
        'balance',
        'balance_error_code',
        'balance_raw_error_code',
        'balance_raw_error_message',
        'usage_count',
        'cit_usage_count',
        'last_used_at',
        'cit_last_used_at',
      ].sort(),
    );
    expect((await buyerCards('&sort_by=last_used_at&order_by=asc')).map((item) => item.id)).toEqual([
      cit.id,
      used.id,
      card.id,
    ]);
    expect((await buyerCards('&order_by=desc')).map((item) => item.id)).toEqual([used.id, cit.id, card.id]);
    expect((await get(`/gift-cards/${used.id}`).expect(200)).body).toMatchObject({
      usage_count: 2,
      last_used_at: '2026-03-02T10:00:00.000Z',
    });

    // Stored cards by id: their current balance, with what is stored about them.
    const checked = await balances([{ id: used.id }, { id: card.id }]).expect(200);
    expect(checked.body.items).toEqual([
      expect.objectContaining({ id: used.id, last4: '2222', balance: 2000, currency: 'USD', usage_count: 2 }),
      expect.objectContaining({ id: card.id, last4: '1111', balance: 123456, currency: 'USD' }),
    ]);
  });

  it('a payment with a stored card (POST /transactions, gift_cards) counts as a use of it', async () => {
    const card = await store({
      number: cardNumber('7777'),
      pin: '05000',
      buyer_external_identifier: `payer-${randomUUID()}`,
    });
    const payment = await post('/transactions', {
      amount: 700,
      currency: 'USD',
      gift_cards: [{ id: card.id, amount: 700 }],
    });
    expect(payment.status, payment.text).toBe(201);
    expect(payment.body.gift_card_redemptions).toEqual([
      expect.objectContaining({
        status: 'succeeded',
        amount: 700,
        gift_card: expect.objectContaining({ id: card.id, last4: '7777' }),
      }),
    ]);
    const deadline = Date.now() + 5_000;
    let used = (await get(`/gift-cards/${card.id}`).expect(200)).body;
    while (used.usage_count === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      used = (await get(`/gift-cards/${card.id}`).expect(200)).body;
    }
    expect(used).toMatchObject({
      usage_count: 1,
      cit_usage_count: 1,
      last_used_at: expect.stringMatching(isoWithOffset),
    });
    expect(used.cit_last_used_at).toBe(used.last_used_at);
    expect((await balances([{ id: card.id }]).expect(200)).body.items[0]).toMatchObject({ balance: 4300 });
  });

  it('the sort field is last_used_at only, the direction asc or desc, and one buyer filter is needed (422)', async () => {
    const byCreation = await get(
      '/buyers/gift-cards?buyer_id=0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b&sort_by=created_at',
    ).expect(422);
    expect(byCreation.body.detail[0]).toMatchObject({ loc: ['query', 'sort_by'], type: 'enum', input: 'created_at' });
    const sideways = await get(
      '/buyers/gift-cards?buyer_id=0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b&order_by=sideways',
    ).expect(422);
    expect(sideways.body.detail[0]).toMatchObject({ loc: ['query', 'order_by'], type: 'enum' });
    expect((await get('/buyers/gift-cards').expect(422)).body.detail[0]).toMatchObject({ loc: ['query', 'buyer_id'] });
    expect((await get('/buyers/gift-cards?buyer_id=0b8e4a52-93d1-4b6a-8f0e-1c2d3e4f5a6b').expect(200)).body).toEqual({
      items: [],
    });
  });

  it('refuses a card the gift card service refuses (400 with its code), and bad bodies (422)', async () => {
    const wrongPin = await post('/gift-cards', {
      number: cardNumber(),
      pin: '10000',
      buyer_external_identifier: 'b',
    }).expect(400);
    expectErrorBody(wrongPin.body, 400, 'bad_request');
    expect(wrongPin.body.details).toEqual([expect.objectContaining({ type: 'invalid_gift_card' })]);
    const expired = await post('/gift-cards', {
      number: cardNumber('0000'),
      pin: '01000',
      buyer_external_identifier: 'b',
    }).expect(400);
    expect(expired.body.details[0].type).toBe('expired_card');
    expect((await get('/gift-cards?buyer_external_identifier=b').expect(200)).body.items).toEqual([]);

    const both = await post('/gift-cards', {
      number: cardNumber(),
      pin: '01000',
      buyer_id: randomUUID(),
      buyer_external_identifier: 'b',
    }).expect(422);
    expect(both.body.detail[0]).toMatchObject({ loc: ['body', 'buyer_external_identifier'] });
    expect(
      (await post('/gift-cards', { number: '12345678901234a', pin: '1' }).expect(422)).body.detail[0],
    ).toMatchObject({ loc: ['body', 'number'] });
    expect((await post('/gift-cards', { number: cardNumber(), pin: '' }).expect(422)).body.detail[0]).toMatchObject({
      loc: ['body', 'pin'],
      type: 'string_too_short',
    });
  });

  it('delete → 204; then 404 everywhere, and the number is gone', async () => {
    const number = cardNumber();
    const card = await store({ number, pin: '01000' });
    expect(card.buyer).toBeNull();
    await h.http().delete(`/gift-cards/${card.id}`).set(h.headers(bare)).expect(404);
    const deleted = await h.http().delete(`/gift-cards/${card.id}`).set(h.headers(account)).expect(204);
    expect(deleted.text).toBe('');
    await get(`/gift-cards/${card.id}`).expect(404);
    await h.http().delete(`/gift-cards/${card.id}`).set(h.headers(account)).expect(404);
    await balances([{ id: card.id }]).expect(404);
    expect((await get('/gift-cards').expect(200)).body.items.map((item: { id: string }) => item.id)).not.toContain(
      card.id,
    );
    expect(await h.fixture.service.giftCards.credentialsFor(account, card.id)).toBeNull();
  });
});

describe('issue and activate', () => {
  it('issues a virtual card: number and PIN answered once (201, no-store), then its balance; replayed for the same Idempotency-Key', async () => {
    const key = `issue-${randomUUID()}`;
    const response = await post('/gift-cards/issue', { theme: 'birthday', amount: 5000, currency: 'USD' })
      .set('Idempotency-Key', key)
      .expect(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const issued = response.body as { number: string; pin: string } & Record<string, unknown>;
    secrets.push(issued.number, issued.pin);
    expect(issued).toMatchObject({
      type: 'gift-card',
      id: null,
      merchant_account_id: account,
      balance: 5000,
      currency: 'USD',
      balance_error_code: null,
      usage_count: 0,
    });
    expect(issued.number).toMatch(/^\d{16,19}$/);
    expect([issued.bin, issued.sub_bin, issued.last4]).toEqual([
      issued.number.slice(0, 6),
      issued.number.slice(6, 10),
      issued.number.slice(-4),
    ]);

    const replay = await post('/gift-cards/issue', { theme: 'birthday', amount: 5000, currency: 'USD' })
      .set('Idempotency-Key', key)
      .expect(201);
    expect(replay.body).toEqual(issued);
    await post('/gift-cards/issue', { theme: 'birthday', amount: 6000, currency: 'USD' })
      .set('Idempotency-Key', key)
      .expect(409);

    const checked = await balances([{ number: issued.number, pin: issued.pin }]).expect(200);
    expect(checked.body.items[0]).toMatchObject({ balance: 5000, currency: 'USD', last4: issued.last4 });
    expect(
      (await post('/gift-cards/issue', { theme: 'x', amount: 0, currency: 'USD' }).expect(422)).body.detail[0],
    ).toMatchObject({ loc: ['body', 'amount'] });
  });

  it('activates a physical card, loading it with amount: 200 with its balance', async () => {
    const number = cardNumber();
    const activated = await post('/gift-cards/activate', {
      number,
      pin: '00500',
      amount: 2000,
      currency: 'USD',
    }).expect(200);
    expect(activated.body).toMatchObject({
      type: 'gift-card',
      id: null,
      last4: '4321',
      balance: 2500,
      currency: 'USD',
      balance_error_code: null,
    });
    expect(h.simulator.giftCard(number)).toMatchObject({ balance: 2500 });
    const refused = await post('/gift-cards/activate', { number: cardNumber('0000'), currency: 'USD' }).expect(400);
    expect(refused.body.details[0].type).toBe('expired_card');
    await post('/gift-cards/activate', { number: 'abc', currency: 'USD' }).expect(422);
  });
});

describe('access and availability', () => {
  it('a gift-cards.read token reads but cannot store; an embed token checks balances and lists a buyer’s cards only', async () => {
    const reader = await tokenWith(['administrator'], ['gift-cards.read']);
    const forbidden = await h
      .http()
      .post('/gift-cards')
      .set(reader)
      .send({ number: cardNumber(), pin: '01000' })
      .expect(403);
    expectErrorBody(forbidden.body, 403, 'forbidden');
    await h.http().post('/gift-cards/issue').set(reader).send({ theme: 't', amount: 1, currency: 'USD' }).expect(403);
    await h.http().get('/gift-cards').set(reader).expect(200);
    await h
      .http()
      .post('/gift-cards/balances')
      .set(reader)
      .send({ items: [{ number: cardNumber(), pin: '01000' }] })
      .expect(200);

    // A buyer's cards are listed only for the buyer the token pins (issue 22, item 2: docs/embed-tokens.md).
    const embed = await tokenWith(['integration'], ['embed'], { embed: { buyer_external_identifier: 'nobody' } });
    await h
      .http()
      .post('/gift-cards/balances')
      .set(embed)
      .send({ items: [{ number: cardNumber(), pin: '01000' }] })
      .expect(200);
    await h.http().get('/buyers/gift-cards?buyer_external_identifier=nobody').set(embed).expect(200);
    await h
      .http()
      .get('/buyers/gift-cards?buyer_external_identifier=nobody')
      .set(await tokenWith(['integration'], ['embed']))
      .expect(403);
    await h.http().post('/gift-cards').set(embed).send({ number: cardNumber(), pin: '01000' }).expect(201);
    await h.http().get('/gift-cards').set(embed).expect(403);
    await h.http().post('/gift-cards/issue').set(embed).send({ theme: 't', amount: 1, currency: 'USD' }).expect(403);
  });

  it('a merchant account without a gift card service → 400 no_gift_card_service', async () => {
    for (const [url, body] of [
      ['/gift-cards/balances', { items: [{ number: cardNumber(), pin: '01000' }] }],
      ['/gift-cards', { number: cardNumber(), pin: '01000' }],
      ['/gift-cards/issue', { theme: 't', amount: 100, currency: 'USD' }],
      ['/gift-cards/activate', { number: cardNumber(), currency: 'USD' }],
    ] as const) {
      const response = await post(url, body, bare).expect(400);
      expectErrorBody(response.body, 400, 'bad_request');
      expect(response.body.message).toMatch(/no active gift card service/);
      expect(response.body.details).toEqual([expect.objectContaining({ type: 'no_gift_card_service' })]);
    }
  });

  it('the gift card service unreachable → 502, nothing stored', async () => {
    h.simulator.setOutage(simulatorMerchant, true);
    try {
      const number = cardNumber();
      expectErrorBody(
        (await post('/gift-cards', { number, pin: '01000', buyer_external_identifier: 'outage' }).expect(502)).body,
        502,
        'bad_gateway',
      );
      await balances([{ number, pin: '01000' }]).expect(502);
      await post('/gift-cards/issue', { theme: 't', amount: 100, currency: 'USD' }).expect(502);
    } finally {
      h.simulator.setOutage(simulatorMerchant, false);
    }
    expect((await get('/gift-cards?buyer_external_identifier=outage').expect(200)).body.items).toEqual([]);
  });

  it('documents every gift card endpoint in /openapi.json', async () => {
    const document = (await h.http().get('/openapi.json').expect(200)).body;
    const operations = (p: string) =>
      Object.values(document.paths[p] ?? {}).map((operation) => (operation as { operationId: string }).operationId);
    expect(operations('/gift-cards/issue')).toEqual(['issue_gift_card']);
    expect(operations('/gift-cards/activate')).toEqual(['activate_gift_card']);
    expect(operations('/gift-cards/balances')).toEqual(['list_gift_card_balances']);
    expect(operations('/gift-cards').sort()).toEqual(['create_gift_card', 'list_gift_cards']);
    expect(operations('/gift-cards/{gift_card_id}').sort()).toEqual(['delete_gift_card', 'get_gift_card']);
    expect(operations('/buyers/gift-cards')).toEqual(['list_buyer_gift_cards']);
    expect(document.paths['/gift-cards/issue'].post.responses['201'].content['application/json'].schema).toBeDefined();
    expect(document.components.schemas.GiftCardSummary.required).toEqual(
      expect.arrayContaining(['usage_count', 'cit_usage_count', 'last_used_at', 'cit_last_used_at']),
    );
  });
});

describe('no card number or PIN kept in clear', () => {
  it('none in any event (the stored cards’ streams hold digits, buyer and service only), none in any file', async () => {
    // Both stores: the gift cards service's (the stored cards) and the transactions service's (the split payments).
    const events: { stream_id: string; type: string; data: string; metadata: string }[] = [];
    for (const file of ['gift-cards.db', 'transactions.db']) {
      const db = new Database(path.join(h.fixture.dataDir, file), { readonly: true });
      try {
        events.push(...(db.prepare('SELECT stream_id, type, data, metadata FROM events').all() as typeof events));
      } finally {
        db.close();
      }
    }
    const redemptions = events.filter((event) => event.stream_id.startsWith('gift-card-redemption-'));
    const stored = events.filter(
      (event) => event.stream_id.startsWith('gift-card-') && !event.stream_id.startsWith('gift-card-redemption-'),
    );
    expect(stored.length).toBeGreaterThan(4);
    // The split payments' redemptions of stored cards, by the gift cards service: ids, amounts and answers only.
    const answer = ['at', 'merchantAccountId', 'redemptionId', 'transactionId'];
    const allowed: Record<string, string[]> = {
      GiftCardRedemptionStarted: [...answer, 'amount', 'currency', 'giftCardId', 'giftCardServiceId'],
      GiftCardRedeemed: [...answer, 'amount', 'currency', 'providerRedemptionId'],
      GiftCardRedemptionRefused: [...answer, 'error'],
      GiftCardRedemptionUnanswered: [...answer, 'error'],
      GiftCardRedemptionUndone: [...answer, 'reversed'],
      GiftCardRedemptionUndoFailed: [...answer, 'error'],
    };
    for (const event of redemptions)
      expect(Object.keys(JSON.parse(event.data) as object).sort(), event.type).toEqual(
        (allowed[event.type] ?? ['(no such event)']).sort(),
      );
    for (const event of stored) {
      expect(Object.keys(JSON.parse(event.data) as object).sort()).toEqual(
        event.type === 'GiftCardStored'
          ? [
              'at',
              'bin',
              'buyerExternalIdentifier',
              'buyerId',
              'currency',
              'expirationDate',
              'giftCardService',
              'id',
              'last4',
              'merchantAccountId',
              'subBin',
            ]
          : ['at', 'id', 'merchantAccountId'],
      );
    }
    const everything = events.map((event) => `${event.data}${event.metadata}`).join('\n');
    expect(secrets.length).toBeGreaterThan(20);
    for (const secret of secrets) expect(everything).not.toContain(secret);

    const files = dataFiles(h);
    expect(files.length).toBeGreaterThan(0);
    const numbers = secrets.filter((secret) => secret.length >= 16);
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      for (const number of numbers)
        expect(bytes.includes(Buffer.from(number, 'latin1')), `${number} in ${file}`).toBe(false);
    }
  });
});
