/**
 * Gift cards through the distributed runtime: the gift cards service (hosted by the transactions process, its own
 * store gift-cards.db) behind the gateway's `gift-cards.` route, split tender with a stored gift card, its usage, and
 * its events on `gift-cards.events` (never a number or PIN; none left on `transactions.events`).
 */
import { randomBytes } from 'node:crypto';
import { giftCardsTopic, transactionsTopic } from '@switchyard/contracts';
import { describeWithInfra, signToken, waitFor } from '@switchyard/testing';
import {
  distributedInfrastructure,
  readTopics,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

let serial = 0;
/** A gift card number of this run (the simulator's cards live as long as it does); PIN `0nnnn` holds nnnn cents. */
const giftNumber = () => `606061${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++serial).padStart(4, '2')}`;

describeWithInfra('gift cards through the distributed runtime', infrastructure, () => {
  const account = `gc-e2e-${randomBytes(4).toString('hex')}`;
  let runtime: DistributedRuntime;
  let key: ApiKey;

  async function send(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; text: string }> {
    const response = await fetch(`${runtime.baseUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 300 })}`,
        'x-service-merchant-account-id': account,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text), text };
  }
  const balance = async (number: string) =>
    ((await (await fetch(`${runtime.simulatorUrl}/v1/gift-cards/cards/${number}`)).json()) as { balance: number })
      .balance;

  beforeAll(async () => {
    runtime = await startDistributedRuntime({ name: 'gift-cards-distributed', mockCard: true });
    key = await runtime.createApiKey('gift-cards-e2e', ['administrator']);
    await waitFor(
      'the new key accepted',
      async () => ((await send('GET', '/merchant-accounts')).status === 200 ? true : undefined),
      10_000,
      runtime.describe,
    );
    expect((await send('POST', '/merchant-accounts', { id: account, display_name: 'Gift cards e2e' })).status).toBe(
      201,
    );
    for (const [name, definition] of [
      ['Cards', 'mock-card'],
      ['Gift cards', 'mock-gift-card'],
    ] as const) {
      const created = await send('POST', '/payment-services', {
        display_name: name,
        payment_service_definition_id: definition,
        fields: [{ key: 'merchant_id', value: 'm' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      });
      expect(created.status, created.text).toBe(201);
    }
  }, 240_000);

  afterAll(() => runtime?.stop());

  it('stores a gift card, pays with it and a card (split tender), rolls a failing one back, and counts its use', async () => {
    const stored = { number: giftNumber(), pin: '05000' };
    const card = await send('POST', '/gift-cards', stored);
    expect(card.status, card.text).toBe(201);

    const paid = await send('POST', '/transactions', {
      amount: 10_000,
      currency: 'USD',
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      gift_cards: [{ id: card.body.id, amount: 2_500 }],
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({
      status: 'capture_succeeded',
      captured_amount: 7_500,
      gift_card_redemptions: [expect.objectContaining({ status: 'succeeded', amount: 2_500 })],
    });
    expect(await balance(stored.number)).toBe(2_500);

    // The stored card pays, a second one cannot: nothing stays charged.
    const poor = { number: giftNumber(), pin: '00100' };
    const failed = await send('POST', '/transactions', {
      amount: 1_200,
      currency: 'USD',
      gift_cards: [
        { id: card.body.id, amount: 1_000 },
        { ...poor, amount: 200 },
      ],
    });
    expect(failed.status, failed.text).toBe(201);
    expect(failed.body).toMatchObject({ status: 'authorization_failed', error_code: 'insufficient_funds' });
    expect((failed.body.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual([
      'reversed',
      'failed',
    ]);
    expect(await balance(stored.number)).toBe(2_500);
    expect(await balance(poor.number)).toBe(100);

    // Two uses (the second redeemed, then reversed), as the gift cards service projected them from the payments.
    const read = await send('GET', `/gift-cards/${card.body.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ usage_count: 2, cit_usage_count: 2, last_used_at: expect.any(String) });

    // Its events: on gift-cards.events only, never with the number or PIN.
    const stream = `gift-card-${card.body.id}`;
    const messages = await readTopics([giftCardsTopic, transactionsTopic], {
      until: (seen) => seen.some((message) => message.topic === giftCardsTopic && message.key?.toString() === stream),
      timeoutMs: 30_000,
    });
    const ofCard = messages.filter((message) => message.key?.toString() === stream);
    expect(ofCard.map((message) => message.topic)).toEqual([giftCardsTopic]);
    expect(JSON.parse(ofCard[0]!.value!.toString())).toMatchObject({ type: 'GiftCardStored', stream_id: stream });
    for (const message of messages) {
      for (const secret of [stored.number, poor.number])
        expect(message.value?.includes(Buffer.from(secret)) ?? false, `${secret} on ${message.topic}`).toBe(false);
    }
  }, 120_000);
});
