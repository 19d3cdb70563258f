import { randomUUID } from 'node:crypto';
import {
  webhookDeliveriesSchema,
  webhookDeliverySchema,
  webhookPatterns,
  type WebhookDelivery,
} from '@switchyard/contracts';
import type { Page } from '@switchyard/api';
import { verifyWebhook } from '@switchyard/webhook-signature';
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { InProcessMessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import {
  count,
  eventMessage,
  Harness,
  quietBus,
  Receiver,
  transactionCreated,
  transactionEvent,
} from './deliveries.fixture';
import { deliveryFetch, type ResolveAll } from './guarded-fetch';
import { isPrivateAddress } from '../subscriptions/webhook-url';

const caller = { merchant_account_id: 'default', caller_merchant_account_ids: [] as string[] };

let harness: Harness;
let receiver: Receiver;

beforeEach(async () => {
  harness = new Harness();
  receiver = await new Receiver().start();
});

afterEach(async () => {
  await harness.close();
  await receiver.stop();
});

const deliveriesOf = (subscriptionId: string, query: Record<string, unknown> = {}) =>
  harness.call<Page<WebhookDelivery>>(webhookPatterns.deliveries, {
    ...caller,
    subscription_id: subscriptionId,
    limit: 100,
    ...query,
  });

const deliveryOf = (subscriptionId: string, deliveryId: string) =>
  harness.call<WebhookDelivery>(webhookPatterns.delivery, {
    ...caller,
    subscription_id: subscriptionId,
    delivery_id: deliveryId,
  });

describe('delivering', () => {
  it('retries a failing receiver until it answers 2xx: one success, one webhook id, every active secret signing', async () => {
    const subscription = harness.directory.add(
      { url: receiver.url, basicAuth: { username: 'hook', password: 'p4ss' } },
      ['secret-old', 'secret-new'],
    );
    receiver.answer = (_, index) => (index < 3 ? 500 : 204);
    await harness.start();
    const transactionId = randomUUID();
    const authorized = transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized'], {
      authorizedAmount: 100,
    });
    await harness.publish(transactionCreated(transactionId, 'default'), authorized);

    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1), { timeout: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests).toHaveLength(4);
    expect(new Set(receiver.requests.map((request) => request.webhookId)).size).toBe(1);
    for (const request of receiver.requests) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers.authorization).toBe(`Basic ${Buffer.from('hook:p4ss').toString('base64')}`);
      expect(String(request.headers['x-service-webhook-signatures']).split(',')).toHaveLength(2);
      expect(verifyWebhook({ rawBody: request.rawBody, headers: request.headers, secrets: ['secret-old'] }).ok).toBe(
        true,
      );
      expect(verifyWebhook({ rawBody: request.rawBody, headers: request.headers, secrets: ['secret-new'] }).ok).toBe(
        true,
      );
      expect(verifyWebhook({ rawBody: request.rawBody, headers: request.headers, secrets: ['another'] }).ok).toBe(
        false,
      );
    }
    expect(receiver.requests[0]!.event).toEqual({
      type: 'event',
      id: authorized.id,
      name: 'transaction.authorized',
      created_at: authorized.occurred_at,
      merchant_account_id: 'default',
      target: { type: 'transaction', id: transactionId, merchant_account_id: 'default' },
    });
    // Every attempt sends the very same bytes.
    expect(new Set(receiver.requests.map((request) => request.rawBody)).size).toBe(1);

    const delivery = await deliveryOf(subscription.id, receiver.requests[0]!.webhookId);
    expect(webhookDeliverySchema.parse(delivery)).toEqual(delivery);
    expect(delivery).toMatchObject({
      id: receiver.requests[0]!.webhookId,
      subscription_id: subscription.id,
      event_id: authorized.id,
      event_name: 'transaction.authorized',
      resource_id: transactionId,
      status: 'succeeded',
      next_attempt_at: null,
    });
    expect(delivery.attempts.map((attempt) => attempt.response_status)).toEqual([500, 500, 500, 204]);
    expect(delivery.attempts.every((attempt) => attempt.error === null && attempt.duration_ms >= 0)).toBe(true);
  });

  it('keeps each resource in order per subscription while the receiver is down, then delivers everything', async () => {
    const subscription = harness.directory.add({ url: receiver.url });
    let up = false;
    receiver.answer = () => (up ? 200 : 503);
    await harness.start();

    const transactions = Array.from({ length: 10 }, () => randomUUID());
    const ordinal = new Map<string, { transactionId: string; n: number }>();
    await harness.publish(...transactions.map((id) => transactionCreated(id)));
    const messages = Array.from({ length: 300 }, (_, n) => {
      const transactionId = transactions[n % transactions.length]!;
      const message = transactionEvent(transactionId, 'AuthorizationIncremented', ['transaction.modified'], {
        incrementId: randomUUID(),
        amount: n + 1,
      });
      ordinal.set(message.id, { transactionId, n });
      return message;
    });
    await harness.publish(...messages);
    // The receiver stays down for 300 ms from its first refused attempt: that attempt comes once the messages are
    // ingested, which can itself take 300 ms on a loaded machine.
    await vi.waitFor(() => expect(receiver.requests.length).toBeGreaterThan(0), { timeout: 5_000, interval: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.succeeded).toHaveLength(0);
    up = true;

    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(300), { timeout: 20_000, interval: 50 });
    expect(new Set(receiver.succeeded.map((request) => request.event.id))).toEqual(
      new Set(messages.map((message) => message.id)),
    );
    // Per transaction, every attempt (failed ones too) is in event order: a later one never overtakes an earlier.
    for (const transactionId of transactions) {
      const attempted = receiver.requests
        .filter((request) => ordinal.get(request.event.id)?.transactionId === transactionId)
        .map((request) => ordinal.get(request.event.id)!.n);
      expect(attempted).toEqual([...attempted].sort((a, b) => a - b));
      const delivered = receiver.succeeded
        .filter((request) => ordinal.get(request.event.id)?.transactionId === transactionId)
        .map((request) => ordinal.get(request.event.id)!.n);
      expect(delivered).toEqual(
        messages
          .map((m) => ordinal.get(m.id)!)
          .filter((o) => o.transactionId === transactionId)
          .map((o) => o.n),
      );
    }
    // The last answers may still be being recorded.
    await vi.waitFor(() =>
      expect(count(harness.db, `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'`)).toBe(300),
    );
    expect((await deliveriesOf(subscription.id, { status: 'succeeded', limit: 100 })).items).toHaveLength(100);
  }, 30_000);

  it('loses nothing when the slice restarts in the middle of delivering', async () => {
    harness.directory.add({ url: receiver.url });
    receiver.answer = (_, index) => (index % 3 === 0 ? 500 : { status: 200, delayMs: 5 });
    await harness.start();
    const transactions = Array.from({ length: 5 }, () => randomUUID());
    await harness.publish(...transactions.map((id) => transactionCreated(id)));
    const first = Array.from({ length: 60 }, (_, n) =>
      transactionEvent(transactions[n % 5]!, 'AuthorizationIncremented', ['transaction.modified'], { amount: n }),
    );
    await harness.publish(...first);
    await vi.waitFor(() => expect(receiver.succeeded.length).toBeGreaterThan(5), { timeout: 5_000, interval: 5 });

    await harness.stop();
    expect(new Set(receiver.succeeded.map((request) => request.event.id)).size).toBeLessThan(first.length);
    const during = Array.from({ length: 40 }, (_, n) =>
      transactionEvent(transactions[n % 5]!, 'AuthorizationIncremented', ['transaction.modified'], { amount: 100 + n }),
    );
    await harness.publish(...during);
    const receivedWhileDown = receiver.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests.length).toBe(receivedWhileDown);

    await harness.start();
    const all = [...first, ...during];
    await vi.waitFor(
      () => expect(new Set(receiver.succeeded.map((request) => request.event.id)).size).toBe(all.length),
      { timeout: 15_000, interval: 50 },
    );
    expect(new Set(receiver.succeeded.map((request) => request.event.id))).toEqual(
      new Set(all.map((message) => message.id)),
    );
    expect(count(harness.db, `SELECT COUNT(*) AS n FROM webhook_deliveries`)).toBe(all.length);
    await vi.waitFor(() =>
      expect(count(harness.db, `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'`)).toBe(
        all.length,
      ),
    );
  }, 30_000);

  it('sends a delivery again, under the same webhook id, when a crash came between sending it and recording the answer', async () => {
    const subscription = harness.directory.add({ url: receiver.url }, ['s3cret']);
    receiver.answer = (_, index) => (index === 0 ? { status: 200, delayMs: 200 } : 200);
    await harness.start();
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(receiver.requests).toHaveLength(1));
    await harness.crash();
    expect(harness.errors.length).toBeGreaterThan(0); // the answer could not be recorded

    await harness.start();
    await vi.waitFor(() => expect(receiver.requests).toHaveLength(2), { timeout: 5_000 });
    expect(receiver.requests[1]!.webhookId).toBe(receiver.requests[0]!.webhookId);
    expect(receiver.requests[1]!.rawBody).toBe(receiver.requests[0]!.rawBody);
    await vi.waitFor(async () =>
      expect((await deliveryOf(subscription.id, receiver.requests[0]!.webhookId)).status).toBe('succeeded'),
    );
  });

  it('drops a revoked secret from the signatures of the next attempt', async () => {
    const subscription = harness.directory.add({ url: receiver.url }, ['secret-a', 'secret-b']);
    // The secret is revoked while the first attempt is answered (500): the retry is signed without it.
    receiver.answer = (_, index) => {
      if (index > 0) return 200;
      harness.directory.revoke(subscription.id, 'secret-a');
      return 500;
    };
    await harness.start();
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));

    const [first, second] = receiver.requests;
    expect(String(first!.headers['x-service-webhook-signatures']).split(',')).toHaveLength(2);
    expect(String(second!.headers['x-service-webhook-signatures']).split(',')).toHaveLength(1);
    expect(verifyWebhook({ rawBody: second!.rawBody, headers: second!.headers, secrets: ['secret-b'] }).ok).toBe(true);
    expect(verifyWebhook({ rawBody: second!.rawBody, headers: second!.headers, secrets: ['secret-a'] })).toEqual({
      ok: false,
      reason: 'no_matching_signature',
    });
  });

  it('sends unsigned deliveries (an empty signature header) when the subscription has no active secret', async () => {
    harness.directory.add({ url: receiver.url });
    await harness.start();
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));
    expect(receiver.requests[0]!.headers.authorization).toBeUndefined();
    expect(receiver.requests[0]!.headers['x-service-webhook-signatures']).toBe('');
  });

  it('counts a timeout as a failed attempt, and tries again', async () => {
    const subscription = harness.directory.add({ url: receiver.url });
    // The first request is answered only once the second has arrived: only a timeout can bring the second.
    let secondArrived!: () => void;
    const second = new Promise<void>((resolve) => (secondArrived = resolve));
    receiver.answer = (_, index) => {
      if (index === 0) return { status: 200, until: second };
      if (index === 1) secondArrived();
      return 200;
    };
    await harness.start({ retry: { baseMs: 20, maxMs: 80, maxAgeMs: 60_000, timeoutMs: 100 } });
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(receiver.requests[1]?.answered).toBe(200), { timeout: 5_000 });
    expect(receiver.requests).toHaveLength(2);
    const page = await deliveriesOf(subscription.id);
    await vi.waitFor(async () =>
      expect((await deliveryOf(subscription.id, page.items[0]!.id)).status).toBe('succeeded'),
    );
    const delivery = await deliveryOf(subscription.id, page.items[0]!.id);
    expect(delivery.attempts).toMatchObject([
      { response_status: null, error: expect.stringContaining('timeout') },
      { response_status: 200, error: null },
    ]);
    expect(Number.isInteger(delivery.attempts[0]!.duration_ms) && delivery.attempts[0]!.duration_ms >= 0).toBe(true);
  });

  it('gives a delivery up as failed after its maximum age (connection refused all along)', async () => {
    await receiver.stop();
    const subscription = harness.directory.add({ url: receiver.url });
    // The slice's clock moves only when the test moves it, 10 ms a step: a slow machine cannot make an attempt late.
    const startedAt = Date.parse('2030-01-01T00:00:00.000Z');
    let clock = startedAt;
    harness.now = () => new Date(clock);
    await harness.start({ retry: { baseMs: 20, maxMs: 40, maxAgeMs: 300, timeoutMs: 1_000 } });
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    const firstAttempt = async () => expect((await deliveriesOf(subscription.id)).items[0]?.attempts).toHaveLength(1);
    await vi.waitFor(firstAttempt, { timeout: 5_000 });
    for (let step = 0; step < 60; step++) {
      const tried = (await deliveriesOf(subscription.id)).items[0]!;
      if (tried.status === 'failed') break;
      // Each step waits for the worker's look at the due attempt (a new attempt), or for one tick when none is due.
      const due = tried.next_attempt_at !== null && Date.parse(tried.next_attempt_at) <= clock + 10;
      clock += 10;
      const looked = async () => {
        const now = (await deliveriesOf(subscription.id)).items[0]!;
        expect(now.attempts.length > tried.attempts.length || now.status === 'failed').toBe(true);
      };
      if (due) await vi.waitFor(looked, { timeout: 5_000, interval: 5 });
      else await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const [delivery] = (await deliveriesOf(subscription.id)).items;
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(delivery!.attempts.length).toBeGreaterThan(2);
    // A coarse class only: the socket's message (address and port) would make deliveries a port scanner.
    expect(delivery!.attempts.every((attempt) => attempt.response_status === null && attempt.error === 'refused')).toBe(
      true,
    );
    // No attempt past the maximum age, by the slice's own clock.
    const attempted = delivery!.attempts.map((attempt) => Date.parse(attempt.attempted_at) - startedAt);
    expect(
      attempted.every((ms) => ms >= 0 && ms <= 300),
      `attempts at +${attempted.join(', +')} ms`,
    ).toBe(true);
  });

  it('stores a bus message delivered twice as one event with one delivery', async () => {
    const subscription = harness.directory.add({ url: receiver.url });
    await harness.start();
    const transactionId = randomUUID();
    const authorized = transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']);
    await harness.publish(transactionCreated(transactionId), authorized, authorized);
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.requests).toHaveLength(1);
    expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_delivery_events')).toBe(1);
    expect((await deliveriesOf(subscription.id)).items).toHaveLength(1);
  });

  it('makes one webhook event per public name; capture and refund targets by their own ids', async () => {
    const subscription = harness.directory.add({ url: receiver.url });
    await harness.start();
    const transactionId = randomUUID();
    const captureId = randomUUID();
    const refundId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId, 'default'),
      transactionEvent(transactionId, 'CaptureSucceeded', ['capture.succeeded', 'transaction.captured'], { captureId }),
      transactionEvent(transactionId, 'RefundRequested', ['refund.pending'], { refundId, amount: 10 }),
      transactionEvent(transactionId, 'VoidRequested', [], { voidId: randomUUID() }),
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(3));
    expect(
      receiver.requests.map((request) => [request.event.name, request.event.target.type, request.event.target.id]),
    ).toEqual([
      ['capture.succeeded', 'transaction-capture', captureId],
      ['transaction.captured', 'transaction', transactionId],
      ['refund.pending', 'refund', refundId],
    ]);
    expect(harness.rpc.calls.find((call) => call.pattern === 'transactions.captures.get')?.payload).toEqual({
      merchant_account_id: 'default',
      transaction_id: transactionId,
      capture_id: captureId,
    });
    expect(harness.rpc.calls.find((call) => call.pattern === 'transactions.refunds.by-id')?.payload).toEqual({
      merchant_account_id: 'default',
      refund_id: refundId,
    });
    expect(new Set(receiver.requests.map((request) => request.webhookId)).size).toBe(3);
    expect((await deliveriesOf(subscription.id)).items.map((delivery) => delivery.resource_id).sort()).toEqual(
      [captureId, refundId, transactionId].sort(),
    );
  });

  it('sends to the subscriptions of the merchant account and instance-level ones; API key pairs to instance-level ones only', async () => {
    const ownAccount = harness.directory.add({ url: receiver.url, merchantAccountId: 'acme' });
    const otherAccount = harness.directory.add({ url: receiver.url, merchantAccountId: 'other' });
    const instance = harness.directory.add({
      url: receiver.url,
      merchantAccountId: null,
      eventNames: ['transaction.authorized', 'api-key-pair.deleted'],
    });
    const inactive = harness.directory.add({ url: receiver.url, merchantAccountId: null, active: false });
    await harness.start();
    const transactionId = randomUUID();
    const keyId = randomUUID();
    harness.rpc.missing.add(keyId);
    await harness.publish(
      transactionCreated(transactionId, 'acme'),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
      transactionEvent(transactionId, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }),
      eventMessage({
        streamId: `api-key-pair-${keyId}`,
        type: 'ApiKeyPairDeleted',
        names: ['api-key-pair.deleted'],
        data: { id: keyId },
      }),
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(4));
    const names = async (id: string) =>
      (
        await harness.call<Page<WebhookDelivery>>(webhookPatterns.deliveries, {
          merchant_account_id: 'acme',
          subscription_id: id,
          limit: 10,
        })
      ).items.map((d) => d.event_name);
    expect(await names(ownAccount.id)).toEqual(['transaction.voided', 'transaction.authorized']);
    expect(
      count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ?', otherAccount.id),
    ).toBe(0);
    expect(
      count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ?', inactive.id),
    ).toBe(0);
    // Two topics, consumed independently: no order between them.
    expect((await names(instance.id)).sort()).toEqual(['api-key-pair.deleted', 'transaction.authorized']);
    const keyEvent = receiver.requests.find((request) => request.event.name === 'api-key-pair.deleted')!.event;
    // A deleted key pair is gone: the target is just its type and id.
    expect(keyEvent).toMatchObject({ merchant_account_id: null, target: { type: 'api-key-pair', id: keyId } });
    expect(Object.keys(keyEvent.target)).toEqual(['type', 'id']);
  });

  it('skips the events of a transaction whose creation it never saw, and reports them', async () => {
    harness.directory.add({ url: receiver.url });
    await harness.start();
    await harness.publish(transactionEvent(randomUUID(), 'AuthorizationSucceeded', ['transaction.authorized']));
    await vi.waitFor(() =>
      expect(harness.errors.map((error) => error.what).join()).toContain('unknown merchant account'),
    );
    expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_delivery_events')).toBe(0);
  });

  it("takes a transaction's merchant account from the message when its relay names it: no creation needed", async () => {
    harness.directory.add({ url: receiver.url, merchantAccountId: 'shop-named' });
    await harness.start();
    const transactionId = randomUUID();
    const authorized = {
      ...transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
      merchant_account_id: 'shop-named',
    };
    await harness.publish(authorized);
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1), { timeout: 5_000 });
    expect(receiver.requests[0]!.event).toMatchObject({ id: authorized.id, merchant_account_id: 'shop-named' });
    expect(harness.errors).toEqual([]);
  });

  it('does not acknowledge a message whose target cannot be fetched: it is stored once the service answers', async () => {
    const { ApiError } = await import('@switchyard/api');
    harness.directory.add({ url: receiver.url });
    await harness.start();
    harness.rpc.failing = ApiError.badGateway(new Error('transactions unreachable'));
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(harness.rpc.calls.length).toBeGreaterThan(2));
    expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_delivery_events')).toBe(0);
    harness.rpc.failing = null;
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));
  });

  it('holds the deliveries of a deactivated subscription until it is active again, and fails those of a deleted one', async () => {
    const paused = harness.directory.add({ url: receiver.url, eventNames: ['transaction.authorized'] });
    const removed = harness.directory.add({ url: receiver.url, eventNames: ['transaction.voided'] });
    let up = false;
    receiver.answer = () => (up ? 200 : 500);
    await harness.start();
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
      transactionEvent(transactionId, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }),
    );
    await vi.waitFor(() =>
      expect(new Set(receiver.requests.map((request) => request.event.name))).toEqual(
        new Set(['transaction.authorized', 'transaction.voided']),
      ),
    );
    harness.directory.update(paused.id, { active: false });
    harness.directory.delete(removed.id);
    await vi.waitFor(() =>
      expect(
        count(
          harness.db,
          `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ? AND status = 'failed'`,
          removed.id,
        ),
      ).toBe(1),
    );
    // Attempts already under way when the subscription was deactivated end (refused) before the receiver is up.
    await new Promise((resolve) => setTimeout(resolve, 100));
    up = true;
    const heldAt = receiver.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests.length).toBe(heldAt);
    expect(
      count(
        harness.db,
        `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ? AND status = 'retrying'`,
        paused.id,
      ),
    ).toBe(1);

    harness.directory.update(paused.id, { active: true });
    await vi.waitFor(
      () => expect(receiver.succeeded.map((request) => request.event.name)).toEqual(['transaction.authorized']),
      { timeout: 5_000 },
    );
    // A deleted subscription is not found, nor are its deliveries.
    await expect(deliveriesOf(removed.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('the first attempt (issue 21)', () => {
  it("is made from the ingest, after its commit: under way when the message is acknowledged, without the worker's tick", async () => {
    harness.directory.add({ url: receiver.url });
    const attempts: string[] = [];
    await harness.start({
      workerIntervalMs: 60_000,
      fetch: (async (url: string, init: RequestInit) => {
        attempts.push(String(url));
        return fetch(url, init);
      }) as typeof fetch,
    });
    // This publisher's publish resolves once the consumer group handled and acknowledged the message.
    const publisher = new InProcessMessageBus({ broker: harness.broker, publishWaitsForConsumers: true, ...quietBus });
    try {
      const transactionId = randomUUID();
      const publish = (message: ReturnType<typeof transactionCreated>) =>
        publisher.publish(transactionsTopic, [
          { key: message.stream_id, value: JSON.stringify(message), headers: { 'event-id': message.id } },
        ]);
      await publish(transactionCreated(transactionId, 'default'));
      await publish(
        transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized'], {
          authorizedAmount: 100,
        }),
      );
      expect(attempts).toEqual([receiver.url]);
      await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1), { timeout: 5_000 });
      // One attempt per delivery: the worker, kicked when the attempt finished, finds nothing more to do.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(receiver.requests).toHaveLength(1);
    } finally {
      await publisher.close();
    }
  });

  it('syncs the messages of a publish once, before the publisher is answered, instead of once per message', async () => {
    harness.directory.add({ url: receiver.url });
    await harness.start({ workerIntervalMs: 60_000 });
    const publisher = new InProcessMessageBus({ broker: harness.broker, publishWaitsForConsumers: true, ...quietBus });
    const syncs = () => count(harness.db, 'SELECT COALESCE(SUM(n), 0) AS n FROM webhook_ingest_syncs');
    try {
      const transactionIds = Array.from({ length: 4 }, () => randomUUID());
      const messages = transactionIds.flatMap((id) => [
        transactionCreated(id, 'default'),
        transactionEvent(id, 'AuthorizationSucceeded', ['transaction.authorized'], { authorizedAmount: 100 }),
      ]);
      // The way a relay publishes what one pass read: every message in one publish.
      await publisher.publish(
        transactionsTopic,
        messages.map((message) => ({
          key: message.stream_id,
          value: JSON.stringify(message),
          headers: { 'event-id': message.id },
        })),
      );
      // Answered: all of it stored, and synced by one commit.
      expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_delivery_events')).toBe(4);
      expect(syncs()).toBe(1);
      // Nothing new since: the next sync (the bus's, at the next publish or at stop) has nothing to do.
      await publisher.publish(transactionsTopic, []);
      expect(syncs()).toBe(1);
    } finally {
      await publisher.close();
    }
  });
});

describe('listing', () => {
  it('pages newest first, filters by status and event name, and shows a subscription to whoever may see it only', async () => {
    const subscription = harness.directory.add({ url: receiver.url, merchantAccountId: null });
    receiver.answer = (request) => (request.event.name === 'transaction.voided' ? 500 : 200);
    await harness.start({ retry: { baseMs: 60_000, maxMs: 60_000, maxAgeMs: 600_000, timeoutMs: 1_000 } });
    const transactionIds = Array.from({ length: 5 }, () => randomUUID());
    await harness.publish(...transactionIds.map((id) => transactionCreated(id)));
    for (const id of transactionIds)
      await harness.publish(transactionEvent(id, 'AuthorizationSucceeded', ['transaction.authorized']));
    await harness.publish(
      transactionEvent(transactionIds[0]!, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }),
    );
    await vi.waitFor(() => expect(receiver.requests).toHaveLength(6));
    await vi.waitFor(async () =>
      expect((await deliveriesOf(subscription.id, { status: 'retrying' })).items).toHaveLength(1),
    );

    const first = await deliveriesOf(subscription.id, { limit: 4 });
    expect(webhookDeliveriesSchema.parse(first)).toEqual(first);
    expect(first.items.map((d) => d.event_name)).toEqual([
      'transaction.voided',
      'transaction.authorized',
      'transaction.authorized',
      'transaction.authorized',
    ]);
    expect(first.items.slice(1).map((d) => d.resource_id)).toEqual([
      transactionIds[4],
      transactionIds[3],
      transactionIds[2],
    ]);
    expect(first.previous_cursor).toBeNull();
    const second = await deliveriesOf(subscription.id, { limit: 4, cursor: first.next_cursor });
    expect(second.items.map((d) => d.resource_id)).toEqual([transactionIds[1], transactionIds[0]]);
    expect(second.next_cursor).toBeNull();
    const back = await deliveriesOf(subscription.id, { limit: 4, cursor: second.previous_cursor });
    expect(back.items.map((d) => d.id)).toEqual(first.items.map((d) => d.id));

    const retrying = await deliveriesOf(subscription.id, { status: 'retrying' });
    expect(retrying.items).toMatchObject([
      { event_name: 'transaction.voided', status: 'retrying', attempts: [{ response_status: 500 }] },
    ]);
    // The next attempt comes a base wait (60 s, ±20 % jitter) after the failed one, by the slice's own timestamps.
    const [failedOnce] = retrying.items;
    const wait = Date.parse(failedOnce!.next_attempt_at!) - Date.parse(failedOnce!.attempts[0]!.attempted_at);
    expect(wait).toBeGreaterThanOrEqual(48_000);
    expect(wait).toBeLessThanOrEqual(72_000);
    expect((await deliveriesOf(subscription.id, { event_name: 'transaction.authorized' })).items).toHaveLength(5);
    expect((await deliveriesOf(subscription.id, { status: 'failed' })).items).toHaveLength(0);
    await expect(deliveriesOf(subscription.id, { status: 'lost' })).rejects.toMatchObject({ status: 400 });

    // Instance level: not for a key limited to some merchant accounts; an unknown delivery is not found.
    await expect(deliveriesOf(subscription.id, { caller_merchant_account_ids: ['default'] })).rejects.toMatchObject({
      status: 404,
    });
    await expect(deliveryOf(subscription.id, 'nope')).rejects.toMatchObject({ status: 404 });
    await expect(deliveriesOf(randomUUID())).rejects.toMatchObject({ status: 404 });
  });
});

describe('replay', () => {
  it('delivers one delivery again under its webhook id, attempts kept; not across subscriptions', async () => {
    const subscription = harness.directory.add({ url: receiver.url }, ['s3cret']);
    const other = harness.directory.add({ url: receiver.url, eventNames: ['refund.pending'] });
    await harness.start();
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));
    const [delivery] = (await deliveriesOf(subscription.id)).items;
    await vi.waitFor(async () => expect((await deliveryOf(subscription.id, delivery!.id)).status).toBe('succeeded'));

    const replayed = await harness.call<WebhookDelivery>(webhookPatterns.replayEvent, {
      ...caller,
      subscription_id: subscription.id,
      delivery_id: delivery!.id,
    });
    expect(replayed).toMatchObject({ id: delivery!.id, status: 'pending', attempts: [{ response_status: 200 }] });
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(2));
    expect(receiver.requests[1]!.webhookId).toBe(delivery!.id);
    expect(receiver.requests[1]!.rawBody).toBe(receiver.requests[0]!.rawBody);
    expect(
      verifyWebhook({
        rawBody: receiver.requests[1]!.rawBody,
        headers: receiver.requests[1]!.headers,
        secrets: ['s3cret'],
      }).ok,
    ).toBe(true);
    await vi.waitFor(async () => expect((await deliveryOf(subscription.id, delivery!.id)).attempts).toHaveLength(2));
    expect((await deliveryOf(subscription.id, delivery!.id)).status).toBe('succeeded');

    await expect(
      harness.call(webhookPatterns.replayEvent, { ...caller, subscription_id: other.id, delivery_id: delivery!.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      harness.call(webhookPatterns.replayEvent, {
        merchant_account_id: 'elsewhere',
        subscription_id: subscription.id,
        delivery_id: delivery!.id,
      }),
    ).rejects.toMatchObject({
      status: 404,
    });
  });

  it('puts a replayed delivery after the deliveries its resource has queued; the waiting ones have no attempt time', async () => {
    const subscription = harness.directory.add({ url: receiver.url });
    let up = true;
    receiver.answer = () => (up ? 200 : 500);
    await harness.start();
    const transactionId = randomUUID();
    const [a, b, c] = [
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
      transactionEvent(transactionId, 'AuthorizationIncremented', ['transaction.modified'], { amount: 1 }),
      transactionEvent(transactionId, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }),
    ];
    await harness.publish(transactionCreated(transactionId), a!);
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(1));
    up = false;
    await harness.publish(b!, c!);
    await vi.waitFor(() =>
      expect(receiver.requests.filter((request) => request.event.id === b!.id).length).toBeGreaterThanOrEqual(2),
    );
    const waiting = (await deliveriesOf(subscription.id)).items;
    expect(waiting.map((d) => [d.event_id, d.status, d.next_attempt_at === null])).toEqual([
      [c!.id, 'pending', true],
      [b!.id, 'retrying', false],
      [a!.id, 'succeeded', true],
    ]);

    await harness.call(webhookPatterns.replayEvent, {
      ...caller,
      subscription_id: subscription.id,
      delivery_id: waiting[2]!.id,
    });
    up = true;
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(4));
    expect(receiver.succeeded.map((request) => request.event.id)).toEqual([a!.id, b!.id, c!.id, a!.id]);
    expect(receiver.requests.some((request) => request.event.id === c!.id && request.answered !== 200)).toBe(false);
  });

  it('replays a time range in pages, in order, creating deliveries for events from before the subscription', async () => {
    const early = harness.directory.add({
      url: `${receiver.url}?early`,
      eventNames: ['transaction.authorized', 'transaction.voided'],
    });
    await harness.start();
    const base = Date.parse('2026-01-10T10:00:00.000Z');
    const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();
    const [one, two] = [randomUUID(), randomUUID()];
    const events = [
      transactionEvent(one, 'AuthorizationSucceeded', ['transaction.authorized'], {}, at(1)),
      transactionEvent(two, 'AuthorizationSucceeded', ['transaction.authorized'], {}, at(2)),
      transactionEvent(one, 'AuthorizationIncremented', ['transaction.modified'], { amount: 1 }, at(3)),
      transactionEvent(one, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }, at(4)),
      transactionEvent(two, 'VoidSucceeded', ['transaction.voided'], { voidId: randomUUID() }, at(5)),
      transactionEvent(two, 'AuthorizationIncremented', ['transaction.modified'], { amount: 2 }, at(20)),
    ];
    await harness.publish(
      transactionCreated(one, 'default', at(0)),
      transactionCreated(two, 'default', at(0)),
      ...events,
    );
    await vi.waitFor(() => expect(receiver.succeeded).toHaveLength(4));
    await vi.waitFor(() => expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_delivery_events')).toBe(6));

    // A subscription created afterwards, for every name: the range replay gives it what happened in [1, 4].
    const late = harness.directory.add({ url: `${receiver.url}?late` });
    const replay = (subscriptionId: string, cursor: string | null, limit: number) =>
      harness.call<{ type: string; scheduled: number; next_cursor: string | null }>(webhookPatterns.replayRange, {
        ...caller,
        subscription_id: subscriptionId,
        body: { from: at(1), to: at(4), limit, ...(cursor ? { cursor } : {}) },
      });
    const page1 = await replay(late.id, null, 3);
    expect(page1).toMatchObject({ type: 'webhook-replay', scheduled: 3 });
    expect(page1.next_cursor).not.toBeNull();
    const page2 = await replay(late.id, page1.next_cursor, 3);
    expect(page2).toEqual({ type: 'webhook-replay', scheduled: 1, next_cursor: null });
    await vi.waitFor(() => expect(receiver.succeeded.filter((r) => receiverPath(r) === 'late')).toHaveLength(4));
    const lateIds = receiver.succeeded.filter((r) => receiverPath(r) === 'late').map((r) => r.event.id);
    expect(lateIds.filter((id) => [events[0]!.id, events[2]!.id, events[3]!.id].includes(id))).toEqual([
      events[0]!.id,
      events[2]!.id,
      events[3]!.id,
    ]);
    expect(new Set(lateIds)).toEqual(new Set(events.slice(0, 4).map((e) => e.id)));
    // Replaying the range again reschedules the same deliveries (same ids), creates none.
    const deliveriesBefore = count(
      harness.db,
      'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ?',
      late.id,
    );
    expect(await replay(late.id, null, 10)).toEqual({ type: 'webhook-replay', scheduled: 4, next_cursor: null });
    expect(count(harness.db, 'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ?', late.id)).toBe(
      deliveriesBefore,
    );
    await vi.waitFor(() => expect(receiver.succeeded.filter((r) => receiverPath(r) === 'late')).toHaveLength(8));

    // The early subscription: its existing deliveries of the range, under their webhook ids (the 3 events it wants).
    const earlyIds = receiver.succeeded.filter((r) => receiverPath(r) === 'early').map((r) => r.webhookId);
    expect(await replay(early.id, null, 10)).toEqual({ type: 'webhook-replay', scheduled: 3, next_cursor: null });
    await vi.waitFor(() => expect(receiver.succeeded.filter((r) => receiverPath(r) === 'early')).toHaveLength(7));
    const replayedIds = receiver.succeeded
      .filter((r) => receiverPath(r) === 'early')
      .slice(4)
      .map((r) => r.webhookId);
    expect(replayedIds.every((id) => earlyIds.includes(id))).toBe(true);

    await expect(
      harness.call(webhookPatterns.replayRange, {
        ...caller,
        subscription_id: late.id,
        body: { from: at(4), to: at(1) },
      }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      harness.call(webhookPatterns.replayRange, {
        ...caller,
        subscription_id: late.id,
        body: { from: 'yesterday', to: at(1) },
      }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      harness.call(webhookPatterns.replayRange, {
        ...caller,
        subscription_id: late.id,
        body: { from: at(1), to: at(4), cursor: 'x' },
      }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

/** Which of the test's two receiver URLs a request went to. */
const receiverPath = (request: { url: string }): string => new URL(request.url, 'http://receiver').search.slice(1);

describe('where deliveries may connect (issue 22, item 3: WEBHOOK_ALLOW_PRIVATE_URLS off)', () => {
  /** Publishes one event and waits for its delivery's first attempt; the delivery as the API shows it. */
  async function firstAttempt(subscriptionId: string): Promise<WebhookDelivery> {
    const transactionId = randomUUID();
    await harness.publish(
      transactionCreated(transactionId),
      transactionEvent(transactionId, 'AuthorizationSucceeded', ['transaction.authorized']),
    );
    let delivery: WebhookDelivery | undefined;
    await vi.waitFor(
      async () => {
        delivery = (await deliveriesOf(subscriptionId)).items[0];
        expect(delivery?.attempts.length).toBeGreaterThan(0);
      },
      { timeout: 5_000 },
    );
    return delivery!;
  }

  it("a name in /etc/hosts for this machine (the host's own name) gets no connection: forbidden_address", async () => {
    const { address } = await lookup(os.hostname());
    expect(isPrivateAddress(address), `${os.hostname()} resolves to ${address}`).toBe(true);
    await receiver.stop();
    await receiver.start(0, address);
    await harness.close();
    harness = new Harness({ allowPrivateUrls: false });
    const subscription = harness.directory.add({ url: `http://${os.hostname()}:${receiver.port}/hooks` });
    await harness.start();
    const delivery = await firstAttempt(subscription.id);
    expect(delivery.attempts[0]).toMatchObject({ response_status: null, error: 'forbidden_address' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('every address a name resolves to is checked when connecting: one inner address is enough to refuse', async () => {
    const resolveAll: ResolveAll = (_name, _options, callback) =>
      callback(null, [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    await harness.close();
    harness = new Harness({ allowPrivateUrls: false, fetch: deliveryFetch({ allowPrivate: false, resolveAll }) });
    const subscription = harness.directory.add({ url: `http://hooks.example.com:${receiver.port}/hooks` });
    await harness.start();
    expect((await firstAttempt(subscription.id)).attempts[0]).toMatchObject({
      response_status: null,
      error: 'forbidden_address',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a stored URL made while private URLs were allowed is checked again on every attempt', async () => {
    await harness.close();
    harness = new Harness({ allowPrivateUrls: false });
    const subscription = harness.directory.add({ url: receiver.url });
    await harness.start();
    expect((await firstAttempt(subscription.id)).attempts[0]).toMatchObject({
      response_status: null,
      error: 'forbidden_address',
      duration_ms: 0,
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a name that does not resolve records the class dns, not the resolver message', async () => {
    const subscription = harness.directory.add({ url: 'http://no-such-host.invalid/hooks' });
    await harness.start();
    expect((await firstAttempt(subscription.id)).attempts[0]).toMatchObject({ response_status: null, error: 'dns' });
  });
});
