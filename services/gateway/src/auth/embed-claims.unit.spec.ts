/** The pins of an embed token on the requests it may make (docs/embed-tokens.md). */
import { ApiError } from '@switchyard/api';
import type { EmbedClaim, VerifiedClaims } from '@switchyard/auth';
import {
  buyerGiftCardListQuerySchema,
  giftCardBalanceRequestSchema,
  giftCardCreateSchema,
  transactionCreateSchema,
} from '@switchyard/contracts';
import type { Caller } from './caller';
import {
  buyerQueryFor,
  embedBuyerOf,
  giftCardBodyFor,
  pinBuyerQuery,
  pinGiftCardBalances,
  pinGiftCardBody,
  pinTransactionBody,
  transactionBodyFor,
} from './embed-claims';

const BUYER = 'b6a0a8a4-0c3e-4d43-8f43-93d3f2a7c111';
const OTHER_BUYER = 'c1d2e3f4-0000-4000-8000-000000000002';
const SESSION = '7d0cf9bc-58f5-4b1c-9a0c-2a4b8f3f6e01';
const OTHER_SESSION = '7d0cf9bc-58f5-4b1c-9a0c-2a4b8f3f6e02';

const claims = (embed?: EmbedClaim, checkoutSessionId?: string): VerifiedClaims => ({
  kid: 'kid',
  scopes: ['embed'],
  exp: 2_000_000_000,
  ...(embed ? { embed } : {}),
  ...(checkoutSessionId ? { checkoutSessionId } : {}),
});
const card = { method: 'card', number: '4111111111111111', expiration_date: '11/30' };
const transaction = (fields: Record<string, unknown> = {}) =>
  transactionCreateSchema.parse({ amount: 1299, currency: 'USD', payment_method: card, ...fields });

function refusal(outcome: unknown): ApiError {
  expect(outcome).toBeInstanceOf(ApiError);
  const error = outcome as ApiError;
  expect(error.status).toBe(403);
  expect(error.code).toBe('forbidden');
  return error;
}

describe('POST /transactions with pinned amount and currency', () => {
  const pinned = claims({ amount: 1299, currency: 'USD' });

  it('takes a body with the pinned values as it is', () => {
    const body = transaction();
    expect(pinTransactionBody(pinned, body)).toBe(body);
  });

  it('refuses another amount, naming the field and the pinned value', () => {
    const error = refusal(pinTransactionBody(pinned, transaction({ amount: 1000 })));
    expect(error.message).toBe('amount 1000 does not match the amount 1299 this embed token is limited to');
    expect(error.details).toEqual([
      { location: 'body', pointer: '/amount', message: error.message, type: 'pinned_by_embed_token' },
    ]);
  });

  it('refuses a merchant-initiated payment, pinned or not', () => {
    const error = refusal(pinTransactionBody(claims(), transaction({ merchant_initiated: true })));
    expect(error.details[0]).toMatchObject({ pointer: '/merchant_initiated', type: 'pinned_by_embed_token' });
    expect(pinTransactionBody(claims(), transaction({ merchant_initiated: false }))).not.toBeInstanceOf(ApiError);
  });

  it('refuses another currency', () => {
    expect(refusal(pinTransactionBody(pinned, transaction({ currency: 'EUR' }))).message).toBe(
      'currency EUR does not match the currency USD this embed token is limited to',
    );
  });

  it('lists every contradiction at once', () => {
    const error = refusal(pinTransactionBody(pinned, transaction({ amount: 5, currency: 'EUR' })));
    expect(error.details.map((detail) => detail.pointer)).toEqual(['/amount', '/currency']);
    expect(error.message).toBe(
      'amount 5 does not match the amount 1299 this embed token is limited to; currency EUR does not match the currency USD this embed token is limited to',
    );
  });

  it('pins nothing with an empty claim, or none', () => {
    const body = transaction({ amount: 1, currency: 'EUR', metadata: { any: 'thing' }, buyer_id: OTHER_BUYER });
    expect(pinTransactionBody(claims({}), body)).toBe(body);
    expect(pinTransactionBody(claims(), body)).toBe(body);
  });
});

describe('POST /transactions with a pinned buyer_id', () => {
  const pinned = claims({ buyer_id: BUYER });

  it('fills the buyer in when the body names none', () => {
    expect(pinTransactionBody(pinned, transaction())).toMatchObject({ buyer_id: BUYER, amount: 1299 });
  });

  it('takes the same buyer named in the body or on the payment method', () => {
    const body = transaction({ buyer_id: BUYER, payment_method: { ...card, buyer_id: BUYER } });
    expect(pinTransactionBody(pinned, body)).toBe(body);
  });

  it.each([
    [
      'another buyer_id',
      { buyer_id: OTHER_BUYER },
      '/buyer_id',
      `buyer_id ${OTHER_BUYER} does not match the buyer_id ${BUYER} this embed token is limited to`,
    ],
    [
      'another buyer_id on the payment method',
      { payment_method: { ...card, buyer_id: OTHER_BUYER } },
      '/payment_method/buyer_id',
      `payment_method.buyer_id ${OTHER_BUYER} does not match the buyer_id ${BUYER}`,
    ],
    [
      'the buyer named by external identifier',
      { buyer_external_identifier: 'cust-1' },
      '/buyer_external_identifier',
      `buyer_external_identifier cannot be given: this embed token is limited to the buyer with buyer_id ${BUYER}`,
    ],
    ['a guest buyer', { buyer: { display_name: 'Guest' } }, '/buyer', 'buyer (a guest buyer) cannot be given'],
  ])('refuses %s', (_case, fields, pointer, message) => {
    const error = refusal(pinTransactionBody(pinned, transaction(fields)));
    expect(error.details).toHaveLength(1);
    expect(error.details[0]).toMatchObject({ pointer });
    expect(error.message).toContain(message);
  });
});

describe('POST /transactions with a pinned buyer_external_identifier', () => {
  const pinned = claims({ buyer_external_identifier: 'cust-1' });

  it('fills it in, and takes a guest buyer whose external identifier agrees or is absent', () => {
    expect(pinTransactionBody(pinned, transaction())).toMatchObject({ buyer_external_identifier: 'cust-1' });
    const guest = { display_name: 'Guest', billing_details: { address: { postal_code: '10001' } } };
    expect(pinTransactionBody(pinned, transaction({ buyer: guest }))).toMatchObject({
      buyer: guest,
      buyer_external_identifier: 'cust-1',
    });
    expect(
      pinTransactionBody(pinned, transaction({ buyer: { ...guest, external_identifier: 'cust-1' } })),
    ).toMatchObject({ buyer_external_identifier: 'cust-1' });
  });

  it('refuses another one, a buyer_id, and a guest buyer of another external identifier', () => {
    expect(refusal(pinTransactionBody(pinned, transaction({ buyer_external_identifier: 'cust-2' }))).message).toBe(
      'buyer_external_identifier cust-2 does not match the buyer_external_identifier cust-1 this embed token is limited to',
    );
    expect(refusal(pinTransactionBody(pinned, transaction({ buyer_id: BUYER }))).details[0]).toMatchObject({
      pointer: '/buyer_id',
    });
    expect(refusal(pinTransactionBody(pinned, transaction({ buyer: { external_identifier: 'cust-2' } }))).message).toBe(
      'buyer.external_identifier cust-2 does not match the buyer_external_identifier cust-1 this embed token is limited to',
    );
  });
});

describe('POST /transactions with pinned metadata', () => {
  const pinned = claims({ metadata: { order: 'A-1', channel: 'web' } });

  it('fills in every pinned key the body leaves out', () => {
    expect(pinTransactionBody(pinned, transaction())).toMatchObject({ metadata: { order: 'A-1', channel: 'web' } });
    expect(pinTransactionBody(pinned, transaction({ metadata: { order: 'A-1' } }))).toMatchObject({
      metadata: { order: 'A-1', channel: 'web' },
    });
    expect(pinTransactionBody(pinned, transaction({ metadata: null }))).toMatchObject({
      metadata: { order: 'A-1', channel: 'web' },
    });
  });

  it('takes exactly the pinned metadata as it is', () => {
    const body = transaction({ metadata: { channel: 'web', order: 'A-1' } });
    expect(pinTransactionBody(pinned, body)).toBe(body);
  });

  it('refuses a pinned key with another value and a key it does not pin', () => {
    const error = refusal(
      pinTransactionBody(pinned, transaction({ metadata: { order: 'B-2', coupon: 'FREE', 'a/b': 'x' } })),
    );
    expect(error.details.map((detail) => detail.pointer)).toEqual([
      '/metadata/order',
      '/metadata/coupon',
      '/metadata/a~1b',
    ]);
    expect(error.details[0]!.message).toBe(
      'metadata "order" "B-2" does not match the value "A-1" this embed token is limited to',
    );
    expect(error.details[1]!.message).toBe(
      'metadata key "coupon" cannot be given: this embed token is limited to the metadata keys "order", "channel"',
    );
  });

  it('refuses any metadata when the pinned metadata is empty', () => {
    expect(refusal(pinTransactionBody(claims({ metadata: {} }), transaction({ metadata: { a: 'b' } }))).message).toBe(
      'metadata key "a" cannot be given: this embed token is limited to no metadata',
    );
  });

  it('refuses a pin a transaction cannot carry (a value over 200 characters), as the token’s fault', () => {
    const error = refusal(pinTransactionBody(claims({ metadata: { order: 'x'.repeat(201) } }), transaction()));
    expect(error.details[0]).toMatchObject({ pointer: '/metadata/order', type: 'pinned_by_embed_token' });
    expect(error.message).toMatch(/^the metadata\.order this embed token pins cannot be used in a transaction: /);
  });
});

describe('POST /transactions with a token bound to a checkout session', () => {
  const bound = claims({ amount: 1299 }, SESSION);

  it('pays with that session', () => {
    const body = transaction({ payment_method: { method: 'checkout-session', id: SESSION } });
    expect(pinTransactionBody(bound, body)).toBe(body);
  });

  it.each([
    [
      'another session',
      { payment_method: { method: 'checkout-session', id: OTHER_SESSION } },
      '/payment_method/id',
      `checkout session ${OTHER_SESSION} does not match the checkout session ${SESSION}`,
    ],
    ['a card', {}, '/payment_method', `payment_method card does not match the checkout session ${SESSION}`],
    [
      'a stored payment method',
      { payment_method: { method: 'id', id: OTHER_SESSION } },
      '/payment_method',
      'payment_method id does not match',
    ],
    [
      'gift cards alone',
      { payment_method: null, gift_cards: [{ id: OTHER_SESSION, amount: 1299 }] },
      '/payment_method',
      'no payment_method does not match',
    ],
  ])('refuses %s', (_case, fields, pointer, message) => {
    const error = refusal(pinTransactionBody(bound, transaction(fields)));
    expect(error.details[0]).toMatchObject({ pointer });
    expect(error.message).toContain(message);
    expect(error.message).toContain(`pay with {"method": "checkout-session", "id": "${SESSION}"}`);
  });

  it('never echoes a card number', () => {
    expect(JSON.stringify(refusal(pinTransactionBody(bound, transaction())).toBody())).not.toContain(
      '4111111111111111',
    );
  });
});

describe('the gift card endpoints', () => {
  const pinned = claims({ buyer_id: BUYER }, SESSION);
  const giftCard = (fields: Record<string, unknown> = {}) =>
    giftCardCreateSchema.parse({ number: '6036280000000000001', pin: '1234', ...fields });
  const query = (fields: Record<string, unknown>) => buyerGiftCardListQuerySchema.parse(fields);

  it('store a gift card for the pinned buyer, filled in; a session binding does not stop them', () => {
    expect(pinGiftCardBody(pinned, giftCard())).toMatchObject({ buyer_id: BUYER });
    expect(pinGiftCardBody(pinned, giftCard({ buyer_id: BUYER }))).toMatchObject({ buyer_id: BUYER });
    expect(refusal(pinGiftCardBody(pinned, giftCard({ buyer_id: OTHER_BUYER }))).details[0]).toMatchObject({
      pointer: '/buyer_id',
    });
    expect(
      refusal(pinGiftCardBody(pinned, giftCard({ buyer_external_identifier: 'cust-1' }))).details[0],
    ).toMatchObject({ pointer: '/buyer_external_identifier' });
  });

  it('list the pinned buyer’s gift cards only', () => {
    const own = query({ buyer_id: BUYER });
    expect(pinBuyerQuery(pinned, own)).toBe(own);
    expect(refusal(pinBuyerQuery(pinned, query({ buyer_id: OTHER_BUYER }))).details[0]).toMatchObject({
      location: 'query',
      pointer: '/buyer_id',
    });
    expect(refusal(pinBuyerQuery(pinned, query({ buyer_external_identifier: 'cust-1' }))).details[0]).toMatchObject({
      location: 'query',
    });
  });

  it('are not pinned without a buyer pin', () => {
    const body = giftCard({ buyer_id: OTHER_BUYER });
    expect(pinGiftCardBody(claims({ amount: 5 }), body)).toBe(body);
  });
});

describe('stored instruments with a token that pins no buyer (issue 22, item 2)', () => {
  const unpinned = claims({ amount: 1299, currency: 'USD' });
  const STORED = 'a1b2c3d4-0000-4000-8000-000000000003';

  it('refuses a stored payment method and stored gift cards, naming each', () => {
    const body = transaction({
      payment_method: { method: 'id', id: STORED },
      gift_cards: [
        { number: '6036280000000000001', pin: '1234', amount: 10 },
        { id: STORED, amount: 10 },
      ],
    });
    const error = refusal(pinTransactionBody(unpinned, body));
    expect(error.details.map((detail) => detail.pointer)).toEqual(['/payment_method/id', '/gift_cards/1/id']);
    expect(error.message).toMatch(/pins no buyer/);
  });

  it('refuses a stored card’s balance and a buyer’s gift card list; a card given by number is checked', () => {
    const stored = giftCardBalanceRequestSchema.parse({
      items: [{ number: '6036280000000000001', pin: '1234' }, { id: STORED }],
    });
    expect(refusal(pinGiftCardBalances(unpinned, stored)).details[0]).toMatchObject({ pointer: '/items/1/id' });
    const byNumber = giftCardBalanceRequestSchema.parse({ items: [{ number: '6036280000000000001', pin: '1234' }] });
    expect(pinGiftCardBalances(unpinned, byNumber)).toBe(byNumber);
    expect(
      refusal(pinBuyerQuery(unpinned, buyerGiftCardListQuerySchema.parse({ buyer_id: OTHER_BUYER }))).details[0],
    ).toMatchObject({ location: 'query', pointer: '/buyer_id' });
  });

  it('passes the pinned buyer on for the service to check ownership; nothing for a server-to-server call', () => {
    const caller = (scope: string, embed: EmbedClaim): Caller => ({
      apiKeyPairId: 'key',
      kid: 'kid',
      scopes: [scope],
      scope,
      merchantAccountId: 'default',
      merchantAccountIds: [],
      permissions: [],
      claims: claims(embed),
    });
    expect(embedBuyerOf(caller('embed', { buyer_id: BUYER }))).toEqual({ embed_buyer: { buyer_id: BUYER } });
    expect(embedBuyerOf(caller('embed', { buyer_external_identifier: 'cust-1' }))).toEqual({
      embed_buyer: { buyer_external_identifier: 'cust-1' },
    });
    expect(embedBuyerOf(caller('embed', { amount: 5 }))).toEqual({ embed_buyer: null });
    expect(embedBuyerOf(caller('transactions.write', { buyer_id: BUYER }))).toEqual({});
  });
});

describe('only a call through the embed scope is pinned', () => {
  const caller = (scope: string): Caller => ({
    apiKeyPairId: 'key',
    kid: 'kid',
    scopes: ['embed', 'transactions.write', 'gift-cards.write', 'gift-cards.read'],
    scope,
    merchantAccountId: 'default',
    merchantAccountIds: [],
    permissions: [],
    claims: claims({ amount: 1299, buyer_id: BUYER }, SESSION),
  });

  it('a server-to-server call (matched scope transactions.write / gift-cards.*) ignores the embed claim', () => {
    const body = transaction({ amount: 1 });
    expect(transactionBodyFor(caller('transactions.write'), body)).toBe(body);
    const giftCard = giftCardCreateSchema.parse({ number: '6036280000000000001', pin: '1234', buyer_id: OTHER_BUYER });
    expect(giftCardBodyFor(caller('gift-cards.write'), giftCard)).toBe(giftCard);
    const listed = buyerGiftCardListQuerySchema.parse({ buyer_id: OTHER_BUYER });
    expect(buyerQueryFor(caller('gift-cards.read'), listed)).toBe(listed);
  });

  it('an embed call throws the 403', () => {
    expect(() => transactionBodyFor(caller('embed'), transaction({ amount: 1 }))).toThrow(ApiError);
    expect(() => buyerQueryFor(caller('embed'), buyerGiftCardListQuerySchema.parse({ buyer_id: OTHER_BUYER }))).toThrow(
      /does not match the buyer_id/,
    );
  });
});
