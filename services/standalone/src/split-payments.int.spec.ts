/**
 * Issue 7, "Paying with gift cards" over HTTP against the simulator: gift cards alone or with a card for the rest.
 * The card is authorized first, the gift cards redeemed after; if one gift card charge fails every charge that
 * succeeded is reversed and the card authorization voided — the simulator's ledger shows every balance back where
 * it started. Refunds can target one redemption. (The kill -9 variant: gift-card-recovery.int.spec.ts.)
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { transactionsPatterns, type TransactionCreateRequest } from '@switchyard/contracts';
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'gifts';
const bare = 'no-gift-service';
let giftService: string;
let cardService: string;

// A PIN starting with 0 holds its value: `05000` → 50.00. A fresh number per test keeps balances independent.
let serial = 0;
const giftNumber = () => `606060${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++serial).padStart(4, '1')}`;
const giftCard = (pin: string, amount: number) => ({ number: giftNumber(), pin, amount });

async function ledger(number: string): Promise<{ balance: number; redemptions: { status: string; amount: number }[] }> {
  const response = await fetch(`${h.simulator.url}/v1/gift-cards/cards/${number}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { balance: number; redemptions: { status: string; amount: number }[] };
}

async function pay(body: Record<string, unknown>, on = account, headers: Record<string, string> = {}) {
  return h
    .http()
    .post('/transactions')
    .set({ ...h.headers(on), ...headers })
    .send({ currency: 'USD', ...body });
}

beforeAll(async () => {
  h = await startHarness('split-payments', { simulator: {} });
  await h.createAccount(account);
  await h.createAccount(bare);
  cardService = await h.createConnection(account);
  giftService = await h.createConnection(account, {
    display_name: 'Gift cards',
    payment_service_definition_id: 'mock-gift-card',
    fields: [],
  });
  await h.createConnection(bare);
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

describe('gift cards alone', () => {
  it('two gift cards pay the whole amount: capture_succeeded, each redemption succeeded, the balances debited', async () => {
    const first = giftCard('05000', 3_000);
    const second = giftCard('05000', 1_500);
    const response = await pay({ amount: 4_500, intent: 'authorize', gift_cards: [first, second] });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      status: 'capture_succeeded',
      amount: 4_500,
      authorized_amount: 0,
      payment_method: null,
      payment_service: null,
      multi_tender: false,
      gift_card_service: {
        type: 'gift-card-service',
        id: giftService,
        gift_card_service_definition_id: 'mock-gift-card',
      },
    });
    const redemptions = response.body.gift_card_redemptions as Record<string, unknown>[];
    expect(redemptions).toEqual([
      expect.objectContaining({
        type: 'gift-card-redemption',
        status: 'succeeded',
        amount: 3_000,
        refunded_amount: 0,
        error_code: null,
        gift_card: {
          type: 'gift-card',
          id: null,
          bin: '606060',
          sub_bin: first.number.slice(6, 10),
          last4: first.number.slice(-4),
        },
      }),
      expect.objectContaining({
        status: 'succeeded',
        amount: 1_500,
        gift_card_service_redemption_id: expect.any(String),
      }),
    ]);
    expect((await ledger(first.number)).balance).toBe(2_000);
    expect((await ledger(second.number)).balance).toBe(3_500);
    expect(JSON.stringify(response.body)).not.toContain(first.number);
  });

  it('the second of two fails: the first is reversed, the payment fails with the gift card error', async () => {
    const first = giftCard('05000', 1_000);
    const second = giftCard('00100', 1_000); // holds 1.00: insufficient_funds
    const response = await pay({ amount: 2_000, gift_cards: [first, second] });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: 'authorization_failed', error_code: 'insufficient_funds' });
    expect((response.body.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual([
      'reversed',
      'failed',
    ]);
    expect(response.body.gift_card_redemptions[1]).toMatchObject({
      error_code: 'insufficient_funds',
      raw_error_code: expect.any(String),
      raw_error_message: expect.any(String),
    });
    expect((await ledger(first.number)).balance).toBe(5_000);
    expect((await ledger(second.number)).balance).toBe(100);
  });
});

describe('a gift card given by number and PIN', () => {
  it('is handed to the gift cards service: no file of the transactions service holds it; a replay answers the same payment, another card under the key conflicts', async () => {
    const given = giftCard('07531', 2_000);
    const key = `gift-hand-over-${serial}`;
    const body = {
      amount: 5_000,
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30' },
      gift_cards: [given],
    };
    const first = await pay(body, account, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({
      status: 'capture_succeeded',
      gift_card_redemptions: [
        expect.objectContaining({
          status: 'succeeded',
          amount: 2_000,
          gift_card: {
            type: 'gift-card',
            id: null,
            bin: '606060',
            sub_bin: given.number.slice(6, 10),
            last4: given.number.slice(-4),
          },
        }),
      ],
    });
    expect((await ledger(given.number)).balance).toBe(7_531 - 2_000);

    // The same request again: the same payment, nothing charged twice (a new hand-over, the same digest).
    const replay = await pay(body, account, { 'Idempotency-Key': key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.body.id).toBe(first.body.id);
    expect((await ledger(given.number)).balance).toBe(7_531 - 2_000);
    // Another gift card under the same key is another request.
    const other = await pay({ ...body, gift_cards: [{ ...given, number: giftNumber() }] }, account, {
      'Idempotency-Key': key,
    });
    expect(other.status, other.text).toBe(409);
    expect(other.body.code).toBe('duplicate_record');

    // The number's middle digits (neither BIN, sub-BIN nor last four) are in no file of the transactions service, and
    // the gift cards service's file holds no number at all (ciphertext, erased once the redemption was answered).
    const middle = given.number.slice(10, 12);
    const files = fs.readdirSync(h.fixture.dataDir).filter((file) => /^(transactions|gift-cards)\.db/.test(file));
    expect(files).toEqual(expect.arrayContaining(['transactions.db', 'gift-cards.db']));
    for (const file of files) {
      const bytes = fs.readFileSync(path.join(h.fixture.dataDir, file)).toString('latin1');
      expect(bytes.includes(given.number), file).toBe(false);
      expect(bytes.includes(`${given.number.slice(0, 10)}${middle}`), file).toBe(false);
    }
  });
});

describe('a refused payment with gift cards given by number', () => {
  it('leaves no one-off card behind: the gift cards service erases them before the answer', async () => {
    const oneOffs = () => {
      const db = new Database(path.join(h.fixture.dataDir, 'gift-cards.db'), { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM vault_gift_cards WHERE one_off = 1').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = oneOffs();
    // No gift card service on this account: refused after the gateway handed the cards over.
    const refused = await pay({ amount: 1_000, gift_cards: [giftCard('05000', 600), giftCard('05000', 400)] }, bare);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.details[0].type).toBe('no_gift_card_service');
    expect(oneOffs()).toBe(before);
  });
});

describe('the transactions service, asked without the gateway', () => {
  it('refuses a gift card number and PIN that were not handed to the gift cards service, charging nothing', async () => {
    const given = giftCard('05000', 1_000);
    const create = h.fixture.service.transactions.rpcHandlers()[transactionsPatterns.create]!;
    const refused = await Promise.resolve(
      create(
        {
          merchant_account_id: account,
          body: { amount: 1_000, currency: 'USD', gift_cards: [given] },
        } as unknown as TransactionCreateRequest,
        { actor: { type: 'system', id: 'test' } } as never,
      ),
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ pointer: '/gift_cards/0/number', type: 'gift_card_not_handed_over' })],
    });
    expect((await fetch(`${h.simulator.url}/v1/gift-cards/cards/${given.number}`)).status).toBe(404);
  });
});

describe('split tender: a card for the rest', () => {
  it('card authorized first, gift cards redeemed after; intent capture captures the card part', async () => {
    const gift = giftCard('05000', 2_500);
    const response = await pay({
      amount: 10_000,
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
      gift_cards: [gift],
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      status: 'capture_succeeded',
      authorized_amount: 7_500,
      captured_amount: 7_500,
      multi_tender: true,
      payment_service: { id: cardService },
      gift_card_service: { id: giftService },
      gift_card_redemptions: [expect.objectContaining({ status: 'succeeded', amount: 2_500 })],
    });
    expect((await ledger(gift.number)).balance).toBe(2_500);
    const events = (await h.http().get(`/transactions/${response.body.id}/events`).set(h.headers(account)).expect(200))
      .body.items as { name: string }[];
    const names = events.map((e) => e.name);
    // The card's authorization comes before the gift card's redemption, and the capture after both (oldest first).
    const at = (name: string) => names.indexOf(name);
    expect(at('payment-connector-response-transaction-authorization-succeeded')).toBeGreaterThan(-1);
    expect(at('payment-connector-response-transaction-authorization-succeeded')).toBeLessThan(
      at('gift-card-redemption-succeeded'),
    );
    expect(at('gift-card-redemption-succeeded')).toBeLessThan(
      at('payment-connector-response-transaction-capture-succeeded'),
    );
  });

  it('acceptance: the third of three gift cards fails — the first two are reversed, the card voided, every balance back where it started', async () => {
    const cards = [giftCard('05000', 1_000), giftCard('05000', 2_000), giftCard('10006', 500)];
    const response = await pay({
      amount: 10_000,
      intent: 'authorize',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
      gift_cards: cards,
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      status: 'authorization_voided',
      error_code: 'insufficient_funds',
      authorized_amount: 6_500,
      captured_amount: 0,
    });
    expect((response.body.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual([
      'reversed',
      'reversed',
      'failed',
    ]);
    expect(response.body.gift_card_redemptions[2]).toMatchObject({
      error_code: 'insufficient_funds',
      raw_error_code: '10006',
    });
    for (const card of cards.slice(0, 2)) {
      const shown = await ledger(card.number);
      expect(shown.balance).toBe(5_000);
      expect(shown.redemptions.map((r) => r.status)).toEqual(['reversed']);
    }
    const events = (await h.http().get(`/transactions/${response.body.id}/events`).set(h.headers(account)).expect(200))
      .body.items as { name: string }[];
    expect(events.map((e) => e.name)).toEqual(
      expect.arrayContaining([
        'gift-card-reversal-succeeded',
        'gift-card-redemption-failed',
        'payment-connector-response-transaction-void-succeeded',
      ]),
    );
    // Voided at the provider too, not only in our record: nothing stays held on the card.
    expect(h.simulator.ledger.counts(response.body.id)).toMatchObject({ authorizations: 1, voids: 1, captures: 0 });
    expect(h.simulator.ledger.findByReference(response.body.id)).toMatchObject({ status: 'voided', capturedAmount: 0 });
  });

  it('a declined card charges no gift card: every redemption skipped, the ledger untouched', async () => {
    const gift = giftCard('05000', 1_000);
    // The card pays 200001 − … the simulator declines amount 200001 (issuer_decline scenario) on the card's part.
    const response = await pay({
      amount: 201_001,
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
      gift_cards: [gift],
    });
    expect(response.status).toBe(201);
    expect(response.body.status).toBe('authorization_declined');
    expect(response.body.gift_card_redemptions).toEqual([
      expect.objectContaining({ status: 'skipped', error_code: null }),
    ]);
    const shown = await fetch(`${h.simulator.url}/v1/gift-cards/cards/${gift.number}`);
    expect(shown.status).toBe(404); // never seen by the provider
  });
});

describe('refunds of a redemption', () => {
  it('targets one redemption: its refunded_amount rises, the card gets the money back, never more than it took', async () => {
    const gift = giftCard('05000', 2_000);
    const paid = (
      await pay({
        amount: 5_000,
        intent: 'capture',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
        gift_cards: [gift],
      })
    ).body;
    const redemption = paid.gift_card_redemptions[0].id as string;
    const refund = await h
      .http()
      .post(`/transactions/${paid.id}/refunds`)
      .set(h.headers(account))
      .send({ amount: 500, target_type: 'gift-card-redemption', target_id: redemption })
      .expect(201);
    expect(refund.body).toMatchObject({
      status: 'succeeded',
      amount: 500,
      target_type: 'gift-card-redemption',
      target_id: redemption,
    });
    expect((await ledger(gift.number)).balance).toBe(3_500);
    const after = await h.get(account, paid.id);
    expect(after).toMatchObject({
      refunded_amount: 0,
      gift_card_redemptions: [expect.objectContaining({ refunded_amount: 500 })],
    });

    const over = await h
      .http()
      .post(`/transactions/${paid.id}/refunds`)
      .set(h.headers(account))
      .send({ amount: 1_501, target_type: 'gift-card-redemption', target_id: redemption });
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toContain('at most 1500');
    const unknown = await h
      .http()
      .post(`/transactions/${paid.id}/refunds`)
      .set(h.headers(account))
      .send({ target_type: 'gift-card-redemption', target_id: cardService });
    expect(unknown.status).toBe(400);
    const missing = await h
      .http()
      .post(`/transactions/${paid.id}/refunds`)
      .set(h.headers(account))
      .send({ target_type: 'gift-card-redemption' });
    expect(missing.status).toBe(422);

    const all = await h
      .http()
      .post(`/transactions/${paid.id}/refunds/all`)
      .set(h.headers(account))
      .send({})
      .expect(201);
    expect((all.body.items as { target_type: string; amount: number }[]).map((r) => [r.target_type, r.amount])).toEqual(
      [
        ['payment-method', 3_000],
        ['gift-card-redemption', 1_500],
      ],
    );
    expect((await ledger(gift.number)).balance).toBe(5_000);
    expect((await h.get(account, paid.id)).status).toBe('refunded');
  });
});

describe('refused before anything is charged', () => {
  /**
   * Each refusal is checked against both providers: the card provider's ledger holds no new authorization, and no
   * gift card of the request was ever seen by the gift card provider (a balance check or redemption would show it).
   */
  const refusedUntouched = async (body: Record<string, unknown>, on = account) => {
    const cardLedger = h.simulator.ledger.all().length;
    const response = await pay(body, on);
    expect(h.simulator.ledger.all().length, 'card authorizations at the provider').toBe(cardLedger);
    for (const gift of (body.gift_cards as { number?: string }[] | undefined) ?? []) {
      if (gift.number === undefined) continue;
      expect(h.simulator.giftCard(gift.number), `gift card …${gift.number.slice(-4)}`).toBeUndefined();
    }
    return response;
  };
  const card = { method: 'card', number: '4111111111111111', expiration_date: '11/30' };
  const unknownCard = { id: '6f1c2a8e-5d7b-4c3e-9a1f-0b2c3d4e5f60', amount: 1_000 };

  it('11 gift cards → 422; amounts that do not add up → 422; no gift card service → 400; an unknown stored card → 400', async () => {
    const eleven = Array.from({ length: 11 }, () => giftCard('05000', 100));
    const tooMany = await refusedUntouched({ amount: 1_100, gift_cards: eleven });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(tooMany.body)).toContain('gift_cards');

    const short = await refusedUntouched({ amount: 1_000, gift_cards: [giftCard('05000', 900)] });
    expect(short.status).toBe(422);
    const whole = [giftCard('05000', 1_000)];
    const over = await refusedUntouched({ amount: 1_000, payment_method: card, gift_cards: whole });
    expect(over.status).toBe(422);
    const nothing = await refusedUntouched({ amount: 1_000 });
    expect(nothing.status).toBe(422);

    const noService = await refusedUntouched({ amount: 1_000, gift_cards: [giftCard('05000', 1_000)] }, bare);
    expect(noService.status).toBe(400);
    expect(JSON.stringify(noService.body)).toContain('no_gift_card_service');
    const part = [giftCard('05000', 1_000)];
    const noServiceWithCard = await refusedUntouched({ amount: 2_000, payment_method: card, gift_cards: part }, bare);
    expect(noServiceWithCard.status).toBe(400);

    const unknown = await refusedUntouched({ amount: 1_000, gift_cards: [unknownCard] });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('gift_card_not_found');
    const unknownWithCard = await refusedUntouched({ amount: 2_000, payment_method: card, gift_cards: [unknownCard] });
    expect(unknownWithCard.status).toBe(400);

    const list = (await h.http().get('/transactions?limit=100').set(h.headers(bare)).expect(200)).body
      .items as unknown[];
    expect(list).toEqual([]);
  });
});

describe('refunds/all when one instrument cannot be refunded', () => {
  it('refunds nothing, rather than the card alone behind a 400, when the gift card service is gone', async () => {
    const shop = 'split-refund-all';
    await h.createAccount(shop);
    await h.createConnection(shop);
    const gifts = await h.createConnection(shop, {
      display_name: 'Gift cards',
      payment_service_definition_id: 'mock-gift-card',
      fields: [],
    });
    const paid = await pay(
      {
        amount: 4_000,
        intent: 'capture',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
        gift_cards: [giftCard('05000', 1_000)],
      },
      shop,
    );
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('capture_succeeded');
    await h.http().delete(`/payment-services/${gifts}`).set(h.headers(shop)).expect(204);

    const all = await h.http().post(`/transactions/${paid.body.id}/refunds/all`).set(h.headers(shop)).send({});
    expect(all.status).toBe(400);
    expect(all.body.message).toMatch(/gift card service .* deleted/);
    expect((await h.get(shop, paid.body.id as string)).refunded_amount).toBe(0);
    const refunds = await h.http().get(`/transactions/${paid.body.id}/refunds`).set(h.headers(shop)).expect(200);
    expect(refunds.body.items).toEqual([]);
  });
});
