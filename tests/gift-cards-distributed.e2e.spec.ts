/**
 * Gift cards through the distributed runtime: the gift cards service as its own process (its own store
 * gift-cards.db, its own certificate) behind the gateway's `gift-cards.` route, split tender with a stored gift card,
 * its usage (followed on `transactions.events`, a moment behind), and its events on `gift-cards.events` (never a number
 * or PIN; none left on `transactions.events`). Killed (-9), a split payment with a stored card fails cleanly; restarted,
 * payments work and nothing is charged or counted twice. Each process may call only its own patterns of the other.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  giftCardDirectoryPatterns,
  giftCardPatterns,
  giftCardPaymentPatterns,
  giftCardsTopic,
  transactionsPatterns,
  transactionsTopic,
} from '@switchyard/contracts';
import type { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
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
  /** The stored card once its usage count reached `count` (the gift cards process follows the payments on Kafka). */
  const usageOf = (id: string, count: number) =>
    waitFor(
      `gift card ${id} used ${count} times`,
      async () => {
        const read = await send('GET', `/gift-cards/${id}`);
        expect(read.status, read.text).toBe(200);
        return read.body.usage_count === count ? read.body : undefined;
      },
      30_000,
      runtime.describe,
    );
  const balance = async (number: string) =>
    ((await (await fetch(`${runtime.simulatorUrl}/v1/gift-cards/cards/${number}`)).json()) as { balance: number })
      .balance;

  const splitPayment = (giftCardId: string, amount: number) =>
    send('POST', '/transactions', {
      amount: 1_000,
      currency: 'USD',
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      gift_cards: [{ id: giftCardId, amount }],
    });
  const ready = () =>
    waitFor(
      'the gateway ready (the gift cards process answering its ping)',
      async () => ((await fetch(`${runtime.baseUrl}/readyz`)).status === 200 ? true : undefined),
      60_000,
      runtime.describe,
    );

  beforeAll(async () => {
    runtime = await startDistributedRuntime({
      name: 'gift-cards-distributed',
      mockCard: true,
      // A split payment waits for two relays and two consumer groups (the redemption asked and answered over Kafka):
      // on a loaded two-core machine running other suites beside it, that has taken over RPC_TIMEOUT_MS's 10 s, and
      // the gateway answered 504 though the payment went through. What this suite checks is the outcome, not the time.
      env: { RPC_TIMEOUT_MS: '30000' },
    });
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

    // Two uses (the second redeemed, then reversed), as the gift cards process follows them on transactions.events.
    const read = await usageOf(card.body.id, 2);
    expect(read).toMatchObject({ usage_count: 2, cit_usage_count: 2, last_used_at: expect.any(String) });

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

  it('killed -9 mid split payment: what started after fails cleanly; restarted, payments work, nothing charged or counted twice', async () => {
    const stored = { number: giftNumber(), pin: '05000' };
    const card = await send('POST', '/gift-cards', stored);
    expect(card.status, card.text).toBe(201);
    expect((await splitPayment(card.body.id, 100)).body).toMatchObject({ status: 'capture_succeeded' });
    expect(await balance(stored.number)).toBe(4_900);

    // Killed while a split payment runs: that one either got the card's number first and completes, or fails whole.
    const [during] = await Promise.all([
      splitPayment(card.body.id, 200),
      runtime.processes['gift-cards']!.kill('SIGKILL'),
    ]);
    const duringSucceeded = during.status === 201 && during.body.status === 'capture_succeeded';
    if (!duringSucceeded) expect(during.status, during.text).toBe(502);
    expect(await balance(stored.number)).toBe(duringSucceeded ? 4_700 : 4_900);

    // Started after it died: refused before anything is created or charged (the stored card cannot be read).
    const after = await splitPayment(card.body.id, 300);
    expect(after.status, after.text).toBe(502);
    expect(after.body).toMatchObject({ type: 'error', status: 502 });
    expect(await balance(stored.number)).toBe(duringSucceeded ? 4_700 : 4_900);
    // A gift card given by number is the gift cards service's too (its hand-over): refused the same way, nothing
    // created, the card never charged.
    const byNumber = { number: giftNumber(), pin: '01000' };
    const paidByNumber = await send('POST', '/transactions', {
      amount: 1_000,
      currency: 'USD',
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      gift_cards: [{ ...byNumber, amount: 400 }],
    });
    expect(paidByNumber.status, paidByNumber.text).toBe(502);
    expect((await fetch(`${runtime.simulatorUrl}/v1/gift-cards/cards/${byNumber.number}`)).status).toBe(404);

    // Restarted with a new consumer group: it reads transactions.events from the beginning again, every redemption of
    // the card a second time, and counts each once (by event id).
    const group = { GIFT_CARDS_CONSUMER_GROUP: `gift-cards-${randomUUID()}` };
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts', group);
    await ready();
    // Its new groups first read the whole topic (on a broker other runtimes have filled, long enough for the payment
    // below to time out behind it): the payment waits until they are at its end.
    await runtime.waitForTransactionsConsumers(group);
    const again = await splitPayment(card.body.id, 500);
    expect(again.body, again.text).toMatchObject({ status: 'capture_succeeded', captured_amount: 500 });
    const balanceNow = (duringSucceeded ? 4_700 : 4_900) - 500;
    expect(await balance(stored.number)).toBe(balanceNow);
    const uses = duringSucceeded ? 3 : 2;
    const read = await waitFor(
      `the stored card used ${uses} times`,
      async () => {
        const got = await send('GET', `/gift-cards/${card.body.id}`);
        return got.body?.usage_count === uses ? got.body : undefined;
      },
      30_000,
      runtime.describe,
    );
    expect(read).toMatchObject({ usage_count: uses, cit_usage_count: uses });
    // Nothing more arrives later: the count stays.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await send('GET', `/gift-cards/${card.body.id}`)).body.usage_count).toBe(uses);
  }, 180_000);

  it('lets the transactions process call only its own gift-cards patterns, the webhooks process none, the gateway not the payments’ ones', async () => {
    const clients: TcpRpcClient[] = [];
    const client = (service: 'gift-cards' | 'transactions', caller: string) => {
      const made = runtime.rpcClient(service, 5_000, caller);
      clients.push(made);
      return made;
    };
    const ref = { merchant_account_id: account, gift_card_id: randomUUID() };
    try {
      const transactions = client('gift-cards', 'transactions');
      expect(await transactions.call(giftCardPaymentPatterns.describe, ref)).toBeNull();
      // A stored card's number and PIN are no one's but the gift cards service's: the pattern is served no more.
      await expect(transactions.call('gift-cards.credentials', ref)).rejects.toMatchObject({
        message: 'Request could not be processed',
      });
      expect(
        await transactions.call(giftCardPaymentPatterns.belongsTo, { ...ref, buyer: { buyer_id: randomUUID() } }),
      ).toBe(false);
      for (const pattern of [
        giftCardPatterns.get,
        giftCardPatterns.list,
        giftCardPatterns.create,
        giftCardPatterns.ping,
        // A request's gift card numbers are handed over by the gateway alone.
        giftCardPatterns.handOver,
      ])
        await expect(transactions.call(pattern, ref), pattern).rejects.toMatchObject({ status: 403 });

      const webhooks = client('gift-cards', 'webhooks');
      for (const pattern of [
        giftCardPatterns.get,
        giftCardPatterns.ping,
        giftCardPatterns.handOver,
        giftCardPaymentPatterns.describe,
      ])
        await expect(webhooks.call(pattern, ref), pattern).rejects.toMatchObject({ status: 403 });

      const gateway = client('gift-cards', 'gateway');
      await expect(gateway.call(giftCardPaymentPatterns.describe, ref)).rejects.toMatchObject({ status: 403 });
      await expect(gateway.call(giftCardPatterns.get, ref)).rejects.toMatchObject({ status: 404 });

      // On the transactions process: the directory and the keys for the gift cards process only.
      const fromGateway = client('transactions', 'gateway');
      await expect(fromGateway.call(giftCardDirectoryPatterns.keys, {})).rejects.toMatchObject({ status: 403 });
      const fromGiftCards = client('transactions', 'gift-cards');
      await expect(
        fromGiftCards.call(giftCardDirectoryPatterns.activeService, { merchant_account_id: account }),
      ).resolves.toMatchObject({ service: { definition_id: 'mock-gift-card' } });
      await expect(
        fromGiftCards.call(transactionsPatterns.get, { merchant_account_id: account, transaction_id: randomUUID() }),
      ).rejects.toMatchObject({
        status: 403,
      });
    } finally {
      await Promise.all(clients.map((made) => made.close()));
    }
  }, 60_000);
});
