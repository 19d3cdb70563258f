/**
 * Issue 19, items 3 and 6, in the distributed runtime, a split payment's processes killed (-9) mid-step.
 *
 * The gift cards process is killed between a stored card's
 * redemption request and its answer — after the provider charged the card, before the gift cards service recorded
 * it. The payment's request waits out its time limit and answers the payment unfinished; restarted, the gift cards
 * process picks the request up again from its consumer group (its offset was never committed), gets the provider's
 * answer again by reference (charged once), and the reversal asked for meanwhile puts the money back; the transactions
 * process records both answers from `gift-cards.events`, and recovery voids the card: nothing stays charged.
 *
 * The gift cards process is killed while the provider reverses a redemption (the payment's second card could not
 * pay): restarted, it asks for the reversal again by reference, which puts nothing back twice, and the payment ends
 * failed with the first card's money back.
 *
 * The gift cards process is killed after the payment's plan (it described the stored card) and before the redemption
 * request is on the log (the card's authorization, first, is held meanwhile): the request waits on
 * `transactions.events` until the restarted process reads it from its consumer group. The payment ends one way, the
 * ledgers agreeing: the gift card charged once, or — its answer too late — the redemption put back and the card voided.
 *
 * The vault's process is killed while its forwarder makes the card's authorization (which comes before the gift
 * cards' redemptions) — after the provider authorized, before the answer came back: the payment is answered
 * unfinished (`processing`), never a 5xx; restarted, reconciliation asks the provider (through the forwarder again)
 * and the payment ends one way or the other, the two ledgers agreeing with it: the card authorized once, the gift
 * card charged once — or the authorization voided and the gift card never charged (what a run shows: it prints it).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { describeWithInfra, signToken, waitFor } from '@switchyard/testing';
import {
  distributedInfrastructure,
  startDistributedRuntime,
  type ApiKey,
  type DistributedRuntime,
} from './distributed.fixture';

const infrastructure = await distributedInfrastructure();

describeWithInfra('split tender: the gift cards or the vault process killed mid-step', infrastructure, () => {
  const account = `split-crash-${randomBytes(4).toString('hex')}`;
  const number = `606063${String(Date.now() % 1_000_000).padStart(6, '0')}0001`;
  let runtime: DistributedRuntime;
  let key: ApiKey;
  let proxy: Server;
  /** The card simulator behind a proxy for the vault's forwarder: the armed authorization is charged, its answer held. */
  let cardProxy: Server;
  let armed = false;
  /** Once set, the next card authorization is made at the provider and its answer held until `release` is called. */
  let delayed: { readonly reached: () => void; readonly release: Promise<void> } | null = null;
  let cardsBehindProxy = false;
  let cardCharged: () => void;
  const cardChargedOnce = new Promise<void>((resolve) => {
    cardCharged = resolve;
  });
  /** Once armed, the first reversal the gift cards process asks for is made at the provider and its answer held. */
  let reversalArmed = false;
  let reversalMade: () => void;
  const reversalMadeOnce = new Promise<void>((resolve) => {
    reversalMade = resolve;
  });
  /** Resolved once the provider charged our card for a request the proxy then holds (never answers). */
  let charged: () => void;
  const providerCharged = new Promise<void>((resolve) => {
    charged = resolve;
  });

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
  /** A gift card's ledger at the simulator: its balance and its redemptions. */
  const ledgerOf = async (giftNumber: string) =>
    (await (await fetch(`${runtime.simulatorUrl}/v1/gift-cards/cards/${giftNumber}`)).json()) as {
      balance: number;
      redemptions: { status: string; amount: number }[];
    };
  const ledger = () => ledgerOf(number);
  /** The gift cards process restarted (SIGTERM), its provider behind the proxy. */
  const restartGiftCardsBehindProxy = async () => {
    await runtime.processes['gift-cards']!.kill('SIGTERM');
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts', {
      MOCK_CARD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    });
    await ready();
  };
  /** A split payment of 1,000: a card for 600, 400 from the stored gift card, captured. */
  const splitPayment = (giftCardId: string) =>
    send('POST', '/transactions', {
      amount: 1_000,
      currency: 'USD',
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      gift_cards: [{ id: giftCardId, amount: 400 }],
    });
  /** The payment once it ended in one of `statuses`, none of its gift card redemptions still processing. */
  const endedAs = (id: string, what: string, statuses: readonly string[], timeoutMs: number) =>
    waitFor(
      what,
      async () => {
        const read = await send('GET', `/transactions/${id}`);
        const redemptions = (read.body?.gift_card_redemptions ?? []) as { status: string }[];
        return statuses.includes(read.body?.status) && redemptions.every((r) => r.status !== 'processing')
          ? read.body
          : undefined;
      },
      timeoutMs,
      runtime.describe,
    );
  /** The answer of a payment whose step never came back in time: as it stands, never completed, never a 5xx. */
  const unfinished = async (paying: ReturnType<typeof send>): Promise<string> => {
    const answered = await paying;
    expect(answered.status, answered.text).toBe(201);
    expect(answered.body.status).not.toBe('capture_succeeded');
    return answered.body.id as string;
  };
  /** The transactions process's card connections pointed at the card proxy (the host its forwarded calls declare). */
  const cardsThroughProxy = async () => {
    if (cardsBehindProxy) return;
    await runtime.processes.transactions!.kill('SIGTERM');
    runtime.restart('transactions', 'services/transactions/src/main.ts', {
      MOCK_CARD_URL: `http://127.0.0.1:${(cardProxy.address() as AddressInfo).port}`,
    });
    await ready();
    cardsBehindProxy = true;
  };
  /**
   * A split payment of a card and 400 from a gift card of 5,000 ended one way, the two ledgers agreeing: the card
   * authorized once and captured, the gift card charged once — or the authorization voided, the gift card whole.
   */
  const expectOneWay = (
    settled: any,
    card: Record<string, number>,
    gift: Awaited<ReturnType<typeof ledgerOf>>,
  ): void => {
    expect(card.authorizations).toBe(1);
    if (settled.status === 'capture_succeeded') {
      expect(card.captures).toBe(1);
      expect(settled.gift_card_redemptions).toEqual([expect.objectContaining({ status: 'succeeded', amount: 400 })]);
      expect(gift.balance).toBe(4_600);
      expect(gift.redemptions.map((r) => [r.amount, r.status])).toEqual([[400, 'succeeded']]);
    } else {
      expect(card.captures ?? 0).toBe(0);
      expect(gift.balance).toBe(5_000);
      expect(gift.redemptions.every((r) => r.status !== 'succeeded')).toBe(true);
    }
  };
  const ready = () =>
    waitFor(
      'the gateway ready (the gift cards process answering its ping)',
      async () => ((await fetch(`${runtime.baseUrl}/readyz`)).status === 200 ? true : undefined),
      60_000,
      runtime.describe,
    );

  /** The simulator behind a proxy for the gift cards process: our card's redemption is charged, its answer held. */
  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const target = new URL(req.url ?? '/', runtime.simulatorUrl);
    const hold = req.method === 'POST' && target.pathname.endsWith('/redemptions') && body.includes(number);
    const holdReversal = reversalArmed && req.method === 'POST' && target.pathname.endsWith('/reversal');
    if (holdReversal) reversalArmed = false;
    relay(req, res, body, target, hold ? charged : holdReversal ? reversalMade : null);
  }

  /** The same for the vault's forwarder: the first card authorization once armed is charged, its answer held. */
  function forwardCard(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const target = new URL(req.url ?? '/', runtime.simulatorUrl);
    const authorization = req.method === 'POST' && target.pathname === '/v1/authorizations';
    const hold = armed && authorization;
    if (hold) armed = false;
    const delay = authorization ? delayed : null;
    if (delay) {
      delayed = null;
      delay.reached();
      void delay.release.then(() => relay(req, res, body, target, null));
      return;
    }
    relay(req, res, body, target, hold ? cardCharged : null);
  }

  /** Sends the call on to the simulator; answers with its answer, or holds it and calls `held` once it came. */
  function relay(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    target: URL,
    held: (() => void) | null,
  ): void {
    const hold = held !== null;
    const outgoing = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          if (hold) return held();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    outgoing.on('error', () => res.destroy());
    outgoing.end(body);
  }

  beforeAll(async () => {
    runtime = await startDistributedRuntime({
      name: 'split-tender-crash',
      mockCard: true,
      // A short provider time limit (the outcome wait is 5 s more) and recovery window: the test runs in a minute. The
      // gateway waits for the payment's two waits (redemption, reversal); with the default RPC_TIMEOUT_MS (10 s) it
      // would answer 504 first, as it does for a provider that hangs that long.
      // Reconciliation after 10 s: an authorization whose answer was lost is asked for again within the test.
      env: {
        MOCK_CARD_TIMEOUT_MS: '3000',
        GIFT_CARD_RECOVERY_AFTER_MS: '15000',
        RECONCILE_AFTER_MS: '10000',
        RPC_TIMEOUT_MS: '30000',
      },
    });
    key = await runtime.createApiKey('split-crash-e2e', ['administrator']);
    await waitFor(
      'the new key accepted',
      async () => ((await send('GET', '/merchant-accounts')).status === 200 ? true : undefined),
      10_000,
      runtime.describe,
    );
    expect((await send('POST', '/merchant-accounts', { id: account, display_name: 'Split crash' })).status).toBe(201);
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
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => forward(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cardProxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => forwardCard(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => cardProxy.listen(0, '127.0.0.1', resolve));
  }, 240_000);

  afterAll(async () => {
    for (const server of [proxy, cardProxy]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    await runtime?.stop();
  });

  it('charged once, reversed once, the payment rolled back: nothing stays charged', async () => {
    const stored = await send('POST', '/gift-cards', { number, pin: '05000' });
    expect(stored.status, stored.text).toBe(201);
    expect((await ledger()).balance).toBe(5_000);

    // The gift cards process again, its provider behind the proxy.
    await restartGiftCardsBehindProxy();

    const paying = splitPayment(stored.body.id);
    await providerCharged;
    await runtime.processes['gift-cards']!.kill('SIGKILL');
    expect((await ledger()).balance).toBe(4_600);

    // No answer in time: the payment is answered as it stands, never completed, never a 5xx.
    const id = await unfinished(paying);

    // Restarted: the redemption is answered again (charged once), then reversed; recovery voids the card.
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts');
    await ready();
    const settled = await endedAs(id, 'the payment rolled back', ['authorization_voided'], 90_000);
    expect(settled).toMatchObject({
      status: 'authorization_voided',
      gift_card_redemptions: [expect.objectContaining({ status: 'reversed', amount: 400 })],
    });
    const after = await ledger();
    expect(after.balance).toBe(5_000);
    expect(after.redemptions.map((r) => [r.amount, r.status])).toEqual([[400, 'reversed']]);
  }, 240_000);

  it('the vault killed mid card authorization: the payment ends one way, the card authorized once, the gift card charged once or put back', async () => {
    const giftNumber = `606064${String(Date.now() % 1_000_000).padStart(6, '0')}0002`;
    const stored = await send('POST', '/gift-cards', { number: giftNumber, pin: '05000' });
    expect(stored.status, stored.text).toBe(201);
    const giftLedger = () => ledgerOf(giftNumber);

    await cardsThroughProxy();

    armed = true;
    const paying = splitPayment(stored.body.id);
    await cardChargedOnce;
    await runtime.processes.vault!.kill('SIGKILL');

    const answered = await paying;
    expect(answered.status, answered.text).toBe(201);
    expect(answered.body.status).not.toBe('capture_succeeded');
    const id = answered.body.id as string;

    runtime.restart('vault', 'services/vault/src/main.ts');
    await ready();
    const settled = await endedAs(
      id,
      'the payment settled one way',
      ['capture_succeeded', 'authorization_voided', 'authorization_failed'],
      120_000,
    );
    const card = (await (await fetch(`${runtime.simulatorUrl}/v1/ledger?reference=${id}`)).json()) as Record<
      string,
      number
    >;
    const gift = await giftLedger();
    console.log(
      `vault killed mid authorization: answered ${answered.body.status}, settled ${settled.status}; card ledger ${JSON.stringify(card)}; gift card balance ${gift.balance}, redemptions ${JSON.stringify(gift.redemptions.map((r) => [r.amount, r.status]))}`,
    );
    // The card was authorized once, whatever came after.
    expectOneWay(settled, card, gift);
  }, 240_000);

  it('the gift cards process killed after the plan, before the redemption request: read on restart, charged once or put back', async () => {
    const giftNumber = `606067${String(Date.now() % 1_000_000).padStart(6, '0')}0005`;
    const stored = await send('POST', '/gift-cards', { number: giftNumber, pin: '05000' });
    expect(stored.status, stored.text).toBe(201);
    await cardsThroughProxy();

    // The card's authorization comes before the gift card's redemption: held at the proxy, it keeps the payment
    // between its plan (the gift cards service described the card) and the redemption request.
    let release: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      delayed = { reached: resolve, release: new Promise<void>((released) => (release = released)) };
    });
    const paying = splitPayment(stored.body.id);
    await reached;
    await runtime.processes['gift-cards']!.kill('SIGKILL');
    // The card authorized, the redemption request goes on the log while nobody reads it.
    release();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts');

    const answered = await paying;
    expect(answered.status, answered.text).toBe(201);
    const id = answered.body.id as string;
    await ready();
    const settled = await endedAs(
      id,
      'the payment settled one way',
      ['capture_succeeded', 'authorization_voided'],
      120_000,
    );
    const card = (await (await fetch(`${runtime.simulatorUrl}/v1/ledger?reference=${id}`)).json()) as Record<
      string,
      number
    >;
    const gift = await ledgerOf(giftNumber);
    console.log(
      `gift cards killed before the redemption request: answered ${answered.body.status}, settled ${settled.status}; card ledger ${JSON.stringify(card)}; gift card balance ${gift.balance}, redemptions ${JSON.stringify(gift.redemptions.map((r) => [r.amount, r.status]))}`,
    );
    // Read in time: charged once; not in time: rolled back, whatever the restarted process made of the request put back.
    expectOneWay(settled, card, gift);
  }, 240_000);

  it('the gift cards process killed mid reversal: the reversal made once, the payment rolled back, nothing charged', async () => {
    const giftNumber = `606065${String(Date.now() % 1_000_000).padStart(6, '0')}0003`;
    const stored = await send('POST', '/gift-cards', { number: giftNumber, pin: '05000' });
    expect(stored.status, stored.text).toBe(201);
    const giftLedger = () => ledgerOf(giftNumber);

    // The gift cards process with its provider behind the proxy again.
    await restartGiftCardsBehindProxy();

    // The stored card is redeemed, a second card (balance 100) cannot pay its 200: the first is reversed, and the
    // gift cards process is killed once the provider made that reversal, before its answer came back.
    reversalArmed = true;
    const poor = { number: `606066${String(Date.now() % 1_000_000).padStart(6, '0')}0004`, pin: '00100' };
    const paying = send('POST', '/transactions', {
      amount: 1_200,
      currency: 'USD',
      gift_cards: [
        { id: stored.body.id, amount: 1_000 },
        { ...poor, amount: 200 },
      ],
    });
    await reversalMadeOnce;
    await runtime.processes['gift-cards']!.kill('SIGKILL');
    expect((await giftLedger()).balance).toBe(5_000);

    const id = await unfinished(paying);

    // Restarted: the reversal is asked for again (its request was never acknowledged) and answered by reference.
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts');
    await ready();
    const settled = await endedAs(id, 'the payment rolled back', ['authorization_failed'], 90_000);
    expect((settled.gift_card_redemptions as { status: string }[]).map((r) => r.status)).toEqual([
      'reversed',
      'failed',
    ]);
    const after = await giftLedger();
    expect(after.balance).toBe(5_000);
    expect(after.redemptions.map((r) => [r.amount, r.status])).toEqual([[1_000, 'reversed']]);
  }, 240_000);
});
