/**
 * Issue 19, items 3 and 6, in the distributed runtime: the gift cards process is killed (-9) between a stored card's
 * redemption request and its answer — after the provider charged the card, before the gift cards service recorded
 * it. The payment's request waits out its time limit and answers the payment unfinished; restarted, the gift cards
 * process picks the request up again from its consumer group (its offset was never committed), gets the provider's
 * answer again by reference (charged once), and the reversal asked for meanwhile puts the money back; the transactions
 * process records both answers from `gift-cards.events`, and recovery voids the card: nothing stays charged.
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

describeWithInfra('split tender: the gift cards process killed between request and answer', infrastructure, () => {
  const account = `split-crash-${randomBytes(4).toString('hex')}`;
  const number = `606063${String(Date.now() % 1_000_000).padStart(6, '0')}0001`;
  let runtime: DistributedRuntime;
  let key: ApiKey;
  let proxy: Server;
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
  const ledger = async () =>
    (await (await fetch(`${runtime.simulatorUrl}/v1/gift-cards/cards/${number}`)).json()) as {
      balance: number;
      redemptions: { status: string; amount: number }[];
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
    const outgoing = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          if (hold) return charged();
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
      env: { MOCK_CARD_TIMEOUT_MS: '3000', GIFT_CARD_RECOVERY_AFTER_MS: '15000', RPC_TIMEOUT_MS: '30000' },
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
  }, 240_000);

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await runtime?.stop();
  });

  it('charged once, reversed once, the payment rolled back: nothing stays charged', async () => {
    const stored = await send('POST', '/gift-cards', { number, pin: '05000' });
    expect(stored.status, stored.text).toBe(201);
    expect((await ledger()).balance).toBe(5_000);

    // The gift cards process again, its provider behind the proxy.
    await runtime.processes['gift-cards']!.kill('SIGTERM');
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts', {
      MOCK_CARD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    });
    await ready();

    const paying = send('POST', '/transactions', {
      amount: 1_000,
      currency: 'USD',
      intent: 'capture',
      payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      gift_cards: [{ id: stored.body.id, amount: 400 }],
    });
    await providerCharged;
    await runtime.processes['gift-cards']!.kill('SIGKILL');
    expect((await ledger()).balance).toBe(4_600);

    // No answer in time: the payment is answered as it stands, never completed, never a 5xx.
    const answered = await paying;
    expect(answered.status, answered.text).toBe(201);
    expect(answered.body.status).not.toBe('capture_succeeded');
    const id = answered.body.id as string;

    // Restarted: the redemption is answered again (charged once), then reversed; recovery voids the card.
    runtime.restart('gift-cards', 'services/gift-cards/src/main.ts');
    await ready();
    const settled = await waitFor(
      'the payment rolled back',
      async () => {
        const read = await send('GET', `/transactions/${id}`);
        return read.body?.status === 'authorization_voided' ? read.body : undefined;
      },
      90_000,
      runtime.describe,
    );
    expect(settled).toMatchObject({
      status: 'authorization_voided',
      gift_card_redemptions: [expect.objectContaining({ status: 'reversed', amount: 400 })],
    });
    const after = await ledger();
    expect(after.balance).toBe(5_000);
    expect(after.redemptions.map((r) => [r.amount, r.status])).toEqual([[400, 'reversed']]);
  }, 240_000);
});
