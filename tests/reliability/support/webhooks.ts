/**
 * Webhook checks after a crash run: which webhooks the stored events call for (each public name of each event of
 * each transaction, from `GET /transactions/{id}/events`), and whether the receiver got each of them at least once
 * (deduplicated by `x-service-webhook-id`), correctly signed, in order per resource (a transaction with its captures
 * and refunds).
 */
import type { ServiceApi } from './http-api';
import { transactionEventNames } from '@switchyard/transactions/src/transactions/transaction-names';
import {
  verifiesWith,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../../../services/standalone/src/webhooks.receiver';

export interface ExpectedWebhook {
  readonly eventId: string;
  readonly name: string;
  readonly transactionId: string;
  /** Position of the event in its transaction's stream (0 first). */
  readonly revision: number;
}

export interface WebhookVerification {
  readonly expected: number;
  /** Expected webhooks received with a 2xx at least once. */
  readonly delivered: number;
  readonly missing: readonly ExpectedWebhook[];
  /** Deliveries (by webhook id) that arrived before an earlier event of the same transaction. */
  readonly outOfOrder: readonly { readonly transactionId: string; readonly revisions: readonly number[] }[];
  /** Requests whose signature did not verify with the subscription's secret (as of their arrival). */
  readonly badSignatures: number;
  /** Requests received in all, and how many were repeats of a webhook id already received. */
  readonly received: number;
  readonly repeats: number;
  /** Received webhooks that no stored event calls for. */
  readonly unexpected: readonly { readonly eventId: string; readonly name: string }[];
}

const keyOf = (eventId: string, name: string) => `${eventId}\u0000${name}`;

/** The webhooks that the transactions' stored events call for. */
export async function expectedWebhooks(api: ServiceApi, transactionIds: Iterable<string>): Promise<ExpectedWebhook[]> {
  const expected: ExpectedWebhook[] = [];
  for (const transactionId of transactionIds) {
    const history = await api.listAll<{ id: string; context: { event: string } & Record<string, unknown> }>(
      `/transactions/${transactionId}/events`,
    );
    history.forEach((item, revision) => {
      for (const name of transactionEventNames({ type: item.context.event, data: item.context }) ?? [])
        expected.push({ eventId: item.id, name, transactionId, revision });
    });
  }
  return expected;
}

const succeeded = (request: ReceivedWebhook) =>
  request.answered !== null && request.answered >= 200 && request.answered < 300;

/** Waits until every expected webhook was received with a 2xx; resolves with how many are still missing. */
export async function waitForWebhooks(
  receiver: WebhookReceiver,
  expected: readonly ExpectedWebhook[],
  timeoutMs: number,
): Promise<number> {
  const missing = () => {
    const got = new Set(receiver.requests.filter(succeeded).map((r) => keyOf(r.event.id, r.event.name)));
    return expected.filter((e) => !got.has(keyOf(e.eventId, e.name))).length;
  };
  await receiver.waitFor('every expected webhook', () => missing() === 0, timeoutMs).catch(() => undefined);
  return missing();
}

/**
 * Like `waitForWebhooks`, for a backlog that takes long to drain: waits as long as webhooks keep arriving, and gives
 * up only after `stallMs` without a new request at the receiver (or `maxMs` in all), so that a slow backlog is
 * told from a lost one. Resolves with how many are still missing.
 */
export async function waitForWebhooksWhileArriving(
  receiver: WebhookReceiver,
  expected: readonly ExpectedWebhook[],
  options: { readonly stallMs: number; readonly maxMs: number },
): Promise<number> {
  const started = Date.now();
  let seen = receiver.requests.length;
  let lastArrival = Date.now();
  for (;;) {
    const missing = await waitForWebhooks(receiver, expected, Math.min(5_000, options.stallMs));
    if (missing === 0) return 0;
    if (receiver.requests.length !== seen) {
      seen = receiver.requests.length;
      lastArrival = Date.now();
    }
    if (Date.now() - lastArrival >= options.stallMs || Date.now() - started >= options.maxMs) return missing;
  }
}

export function verifyWebhooks(
  receiver: WebhookReceiver,
  expected: readonly ExpectedWebhook[],
  secret: string,
): WebhookVerification {
  const requests = receiver.requests;
  const byKey = new Map(expected.map((e) => [keyOf(e.eventId, e.name), e]));
  const delivered = new Set<string>();
  const firstArrival = new Map<string, ReceivedWebhook>();
  let badSignatures = 0;
  const unexpected: { eventId: string; name: string }[] = [];
  for (const request of requests) {
    // As the receiver would have verified it: at its arrival (a long run verifies long after the first ones came,
    // past the signature's freshness tolerance).
    const arrived = request.receivedAt;
    if (!verifiesWith(request, secret, arrived ? { now: () => new Date(arrived) } : {}).ok) badSignatures += 1;
    const key = keyOf(request.event.id, request.event.name);
    if (succeeded(request)) delivered.add(key);
    if (!firstArrival.has(request.webhookId)) {
      firstArrival.set(request.webhookId, request);
      if (!byKey.has(key)) unexpected.push({ eventId: request.event.id, name: request.event.name });
    }
  }

  // Order per resource: the first arrival of each delivery, in arrival order, follows its events' order.
  const revisionsByTransaction = new Map<string, number[]>();
  for (const request of [...firstArrival.values()].sort((a, b) => a.index - b.index)) {
    const e = byKey.get(keyOf(request.event.id, request.event.name));
    if (e)
      revisionsByTransaction.set(e.transactionId, [...(revisionsByTransaction.get(e.transactionId) ?? []), e.revision]);
  }
  const outOfOrder = [...revisionsByTransaction]
    .filter(([, revisions]) => revisions.some((revision, i) => i > 0 && revision < (revisions[i - 1] ?? 0)))
    .map(([transactionId, revisions]) => ({ transactionId, revisions }));

  return {
    expected: expected.length,
    delivered: expected.filter((e) => delivered.has(keyOf(e.eventId, e.name))).length,
    missing: expected.filter((e) => !delivered.has(keyOf(e.eventId, e.name))),
    outOfOrder,
    badSignatures,
    received: requests.length,
    repeats: requests.length - firstArrival.size,
    unexpected,
  };
}
