/**
 * The flows the client is proven on, against a running Switchyard (the embedded runtime in process, or the
 * distributed one): a payment, its capture and refund, a stored card paid with, a gift card balance, a webhook
 * subscription whose delivery the client verifies, pagination, the merchant account per client and per call, and
 * both error bodies as one error class. `client` is the BUILT package (ESM or CommonJS), typed as its sources.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as ClientModule from '../src';

export type BuiltClientModule = typeof ClientModule;

/** A loopback HTTP server that keeps what it receives: the webhook receiver. */
export async function startReceiver(): Promise<{
  url: string;
  received: { headers: http.IncomingHttpHeaders; rawBody: string }[];
  close(): Promise<void>;
}> {
  const received: { headers: http.IncomingHttpHeaders; rawBody: string }[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, rawBody: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function driveClientFlows(
  module: BuiltClientModule,
  options: { baseUrl: string; keyFile: string },
): Promise<void> {
  const { SwitchyardClient, SwitchyardApiError } = module;
  const admin = new SwitchyardClient({ baseUrl: options.baseUrl, credentials: options.keyFile });
  // A key written by the CLI reaches a running server within its poll interval.
  await eventually(
    'the new API key accepted',
    async () => (await admin.call(admin.api.GET('/roles', {}))) ?? undefined,
  );

  const account = `client-${randomUUID().slice(0, 8)}`;
  await admin.call(admin.api.POST('/merchant-accounts', { body: { id: account, display_name: 'Client flows' } }));
  const client = new SwitchyardClient({
    baseUrl: options.baseUrl,
    credentials: options.keyFile,
    merchantAccountId: account,
  });

  await client.paymentServices.create({
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: `sim-${account}` }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  await client.paymentServices.create({
    display_name: 'Gift cards',
    payment_service_definition_id: 'mock-gift-card',
    fields: [{ key: 'merchant_id', value: `gift-${account}` }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });

  const receiver = await startReceiver();
  try {
    const subscription = await client.webhookSubscriptions.create({
      url: receiver.url,
      event_names: ['transaction.captured'],
    });
    const { secret } = await client.webhookSubscriptions.createSecret(subscription.id);
    if (!secret) throw new Error('a new webhook secret is answered once, with its value');
    const subscriptions: string[] = [];
    for await (const listed of client.webhookSubscriptions.list()) subscriptions.push(listed.id);
    expect(subscriptions).toContain(subscription.id);

    // A payment, captured, partly refunded.
    const card = {
      method: 'card' as const,
      number: '4111111111111111',
      expiration_date: '12/30',
      security_code: '123',
    };
    const transaction = await client.transactions.create({ amount: 1299, currency: 'USD', payment_method: card });
    expect(transaction).toMatchObject({
      type: 'transaction',
      amount: 1299,
      currency: 'USD',
      status: 'authorization_succeeded',
    });
    const captured = await client.transactions.capture(transaction.id);
    expect(captured).toMatchObject({ id: transaction.id });
    await eventually('the capture', async () =>
      (await client.transactions.get(transaction.id)).status === 'capture_succeeded' ? true : undefined,
    );
    const refund = await client.transactions.refund(transaction.id, { amount: 500 });
    expect(refund).toMatchObject({ type: 'refund', transaction_id: transaction.id, amount: 500 });
    const refunds: string[] = [];
    for await (const listed of client.transactions.refunds(transaction.id)) refunds.push(listed.id);
    expect(refunds).toEqual([refund.id]);

    // The capture's webhook, verified by the client with the subscription's secret.
    const delivery = await eventually('the transaction.captured delivery', async () =>
      receiver.received.find((one) => one.rawBody.includes(transaction.id)),
    );
    expect(client.webhooks.verify(delivery.headers, delivery.rawBody, [secret])).toMatchObject({ ok: true });
    expect(client.webhooks.verify(delivery.headers, delivery.rawBody, ['whsec_another'])).toEqual({
      ok: false,
      reason: 'no_matching_signature',
    });

    // A stored card, then a payment with it.
    const stored = await client.paymentMethods.create({
      method: 'card',
      number: '5555555555554444',
      expiration_date: '11/31',
    });
    expect(stored).toMatchObject({ type: 'payment-method', id: expect.any(String) });
    const paidWithStored = await client.transactions.create({
      amount: 700,
      currency: 'USD',
      payment_method: { method: 'id', id: stored.id },
    });
    expect(paidWithStored.status).toBe('authorization_succeeded');

    // A gift card balance (the simulator's gift cards: a PIN starting with 0 holds its value).
    const balances = await client.giftCards.balances({
      items: [{ number: `60339${String(Date.now()).slice(-10)}4321`, pin: '05000' }],
    });
    expect(balances.items[0]).toMatchObject({ balance: 5000, currency: 'USD' });

    // Pagination: every transaction of the account, one page of one at a time.
    const listed: string[] = [];
    for await (const one of client.transactions.list({ limit: 1 })) listed.push(one.id);
    expect(listed.sort()).toEqual([transaction.id, paidWithStored.id].sort());

    // The merchant account per call: the transaction is not the default account's.
    const notFound = await client.transactions
      .get(transaction.id, { merchantAccountId: 'default' })
      .catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(SwitchyardApiError);
    expect(notFound).toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });

    // The 422 body becomes the same error class.
    const invalid = await client.transactions
      .create({ amount: -1, currency: 'USD', payment_method: card })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(SwitchyardApiError);
    expect(invalid).toMatchObject({
      status: 422,
      code: 'validation_error',
      details: [expect.objectContaining({ location: 'body', pointer: '/amount' })],
    });
    expect(JSON.stringify(invalid)).not.toContain('4111111111111111');
  } finally {
    await receiver.close();
  }
}
