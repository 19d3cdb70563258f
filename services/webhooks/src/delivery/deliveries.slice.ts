/**
 * Webhook deliveries (docs/events.md): from the services' topics to signed, retried, ordered HTTP deliveries, the
 * record of every attempt, and replays.
 *
 * Ingest. Group `webhooks` consumes `transactions.events` and `identity.events` with `fromBeginning: false`: a
 * group with no committed offset (a fresh install) starts at the end of the topics — no webhooks for history —
 * while a restarted one resumes from its committed offsets (Kafka and in-process adapters alike, bus contract). Per
 * message, each public name becomes one webhook event: the target is rendered once (RPC to the owning service), and
 * then, in ONE SQLite transaction, the events and one delivery per matching subscription are stored. Only then does
 * the handler resolve, i.e. the message is acknowledged: an acknowledged event is never lost, and a redelivered one
 * inserts nothing (the event key is `${message id}:${name}`).
 *
 * Merchant accounts: every transaction event after `TransactionCreated` lacks the merchant account, so the slice
 * keeps `transaction-<id>` → merchant account from `TransactionCreated`. An event of a transaction created before
 * this service first subscribed (so never seen) cannot be attributed: it is skipped and reported to `onError`. API
 * key pair events are instance level (`merchant_account_id: null`): only instance-level subscriptions get them.
 *
 * Delivery: `delivery-worker.ts` (ordering per subscription and stream; deactivated and deleted subscriptions). The
 * ingest starts the first attempts itself right after its commit (`attemptNow`), before the message is acknowledged.
 *
 * Replay. One delivery: scheduled again now, same webhook id, status back to `pending`, its attempts kept, backoff
 * and maximum age counted afresh. A range: every event created in [from, to] that the subscription wants now (its
 * merchant account or instance level, its event names) — events are stored, so an event that happened before the
 * subscription existed, or before it wanted that name, gets a delivery created for it now; one that has a delivery
 * gets it rescheduled. `limit` events per call, in the order they came, continued by `next_cursor`.
 */
import { ApiError, decodeCursor, encodeCursor, keysetPage, type Page } from '@switchyard/api';
import type { BusSubscription, IncomingMessage, MessageBus } from '@switchyard/bus';
import {
  deliveryStatusValues,
  identityTopic,
  transactionsTopic,
  webhookPatterns,
  webhookReplayRangeSchema,
  type EventMessage,
  type WebhookDelivery,
  type WebhookEvent,
  type WebhookReplayResult,
  type WebhookSubscriptionRef,
} from '@switchyard/contracts';
import { registerWebhookBacklog } from '@switchyard/metrics';
import type { RpcClient, RpcHandlers } from '@switchyard/rpc';
import type { ServiceContext, ServiceSlice } from '@switchyard/service';
import { contextHeaders } from '@switchyard/telemetry';
import { visibleTo, type SubscriptionDirectory, type SubscriptionTarget } from '../subscription-directory';
import { DeliveryStore, type AttemptRow, type DeliveryRow, type NewWebhookEvent } from './delivery-store';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker';
import { deliveryFetch } from './guarded-fetch';
import { renderTarget, resourceOf, TargetMemory, TRANSACTION_STREAM_PREFIX, type RenderOptions } from './event-targets';
import { defaultRetrySettings, type RetrySettings } from './retry-policy';

export const DELIVERIES_GROUP_ID = 'webhooks';
export const DELIVERIES_TOPICS: readonly string[] = [transactionsTopic, identityTopic];

export interface DeliveriesOptions {
  readonly bus: MessageBus;
  readonly rpc: RpcClient;
  /** Defaults: base 30 s, max 6 h, max age 7 days, timeout 5 s (the WEBHOOK_* settings). */
  readonly retry?: { baseMs?: number; maxMs?: number; maxAgeMs?: number; timeoutMs?: number };
  /** How often the worker looks for due deliveries (it also looks at once after new ones). Default 250 ms. */
  readonly workerIntervalMs?: number;
  /** The HTTP client (tests); default: `deliveryFetch`, which refuses forbidden addresses unless `allowPrivateUrls`. */
  readonly fetch?: typeof fetch;
  /** WEBHOOK_ALLOW_PRIVATE_URLS; default false: every resolved address is checked, stored URLs on every attempt. */
  readonly allowPrivateUrls?: boolean;
  /** Requests in flight at most, each for a different (subscription, resource). Default 8. */
  readonly concurrency?: number;
  /** The bus consumer group (WEBHOOKS_CONSUMER_GROUP); default `webhooks`. One group per installation. */
  readonly groupId?: string;
  /** Failures nobody waits for (a skipped message, a worker error). Default: one JSON line on stderr. */
  readonly onError?: (error: unknown, what: string) => void;
  /** Waits while the owning service's read model catches up with an event (tests shorten them). */
  readonly render?: RenderOptions;
  /** One line per delivery attempt, in the context of the request that caused its event. Default: none. */
  readonly log?: DeliveryWorkerOptions['log'];
}

/** `webhooks.deliveries.list` (the gateway's `WebhookDeliveryListRequest`). */
export interface WebhookDeliveryListRequest extends WebhookSubscriptionRef {
  readonly limit?: number;
  readonly cursor?: string | null;
  readonly status?: string;
  readonly event_name?: string;
}

/** `webhooks.deliveries.get` and `webhooks.replay.event`. */
export interface WebhookDeliveryRef extends WebhookSubscriptionRef {
  readonly delivery_id: string;
}

/** `webhooks.replay.range`: the range in `body` (as the gateway sends it) or at the top level. */
export interface WebhookReplayRangeRequest extends WebhookSubscriptionRef {
  readonly body?: { from: string; to: string; cursor?: string | null; limit?: number };
  readonly from?: string;
  readonly to?: string;
  readonly cursor?: string | null;
  readonly limit?: number;
}

const logError = (error: unknown, what: string): void => {
  const line = {
    level: 50,
    time: Date.now(),
    name: 'webhooks',
    msg: what,
    err: error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) },
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
};

const stringField = (value: unknown, name: string): string | undefined => {
  const field = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
  return typeof field === 'string' && field !== '' ? field : undefined;
};

/** When the event happened, ISO 8601 in UTC with milliseconds: its own time, else when it was recorded, else now. */
const eventTime = (message: Pick<EventMessage, 'occurred_at' | 'recorded_at'>, now: Date): string => {
  for (const candidate of [message.occurred_at, message.recorded_at]) {
    const ms = typeof candidate === 'string' ? Date.parse(candidate) : Number.NaN;
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  }
  return now.toISOString();
};

const toWireDelivery = (row: DeliveryRow, attempts: readonly AttemptRow[]): WebhookDelivery => ({
  type: 'webhook-delivery',
  id: row.id,
  subscription_id: row.subscriptionId,
  event_id: row.eventId,
  event_name: row.eventName,
  resource_id: row.resourceId,
  status: row.status,
  attempts: attempts.map((attempt) => ({
    attempted_at: attempt.attemptedAt,
    response_status: attempt.responseStatus,
    error: attempt.error,
    duration_ms: attempt.durationMs,
  })),
  next_attempt_at:
    (row.status === 'pending' || row.status === 'retrying') && row.nextAttemptMs !== null
      ? new Date(row.nextAttemptMs).toISOString()
      : null,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

export class Deliveries implements ServiceSlice {
  private readonly store: DeliveryStore;
  private readonly worker: DeliveryWorker;
  private readonly targets = new TargetMemory();
  private readonly settings: RetrySettings;
  private readonly onError: (error: unknown, what: string) => void;
  private subscription: BusSubscription | null = null;
  private unregisterBacklog: () => void = () => undefined;

  constructor(
    private readonly context: ServiceContext,
    private readonly directory: SubscriptionDirectory,
    private readonly options: DeliveriesOptions,
  ) {
    this.store = new DeliveryStore(context.db);
    this.onError = options.onError ?? logError;
    this.settings = {
      baseMs: options.retry?.baseMs ?? defaultRetrySettings.baseMs,
      maxMs: options.retry?.maxMs ?? defaultRetrySettings.maxMs,
      maxAgeMs: options.retry?.maxAgeMs ?? defaultRetrySettings.maxAgeMs,
      timeoutMs: options.retry?.timeoutMs ?? defaultRetrySettings.timeoutMs,
    };
    this.worker = new DeliveryWorker({
      store: this.store,
      directory,
      settings: this.settings,
      intervalMs: options.workerIntervalMs ?? 250,
      now: context.now,
      fetch: options.fetch ?? deliveryFetch({ allowPrivate: options.allowPrivateUrls ?? false }),
      allowPrivateUrls: options.allowPrivateUrls ?? false,
      concurrency: options.concurrency ?? 8,
      onError: this.onError,
      ...(options.log ? { log: options.log } : {}),
    });
  }

  /** Joins the bus group (resolves once live) and starts delivering, pending deliveries of a previous run first. */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.subscription = await this.options.bus.subscribe({
      groupId: this.options.groupId ?? DELIVERIES_GROUP_ID,
      topics: DELIVERIES_TOPICS,
      fromBeginning: false,
      // No request waits on a delivery: gathered for the bus's batch window (event lag target: docs/performance.md).
      batched: true,
      handler: (message) => this.ingest(message),
      // The ingest commits without an fsync; one synced commit covers a batch before the bus acknowledges it.
      sync: () => this.store.syncIngested(),
    });
    this.worker.start();
    this.unregisterBacklog = registerWebhookBacklog(() => this.store.backlog());
  }

  /** Leaves the group (the message under way is stored and acknowledged first), then lets the attempts under way finish. */
  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    this.unregisterBacklog();
    await subscription?.stop();
    await this.worker.stop();
  }

  rpcHandlers(): RpcHandlers {
    return {
      [webhookPatterns.deliveries]: async (payload) => this.list(payload as WebhookDeliveryListRequest),
      [webhookPatterns.delivery]: async (payload) => this.get(payload as WebhookDeliveryRef),
      [webhookPatterns.replayEvent]: async (payload) => this.replayDelivery(payload as WebhookDeliveryRef),
      [webhookPatterns.replayRange]: async (payload) => this.replayRange(payload as WebhookReplayRangeRequest),
    };
  }

  // ---- ingest ---------------------------------------------------------------------------------------------------

  private async ingest(incoming: IncomingMessage): Promise<void> {
    let message: EventMessage;
    try {
      message = JSON.parse(incoming.value) as EventMessage;
    } catch (error) {
      this.onError(error, `unreadable message on ${incoming.topic} (offset ${incoming.offset}); skipped`);
      return;
    }
    if (typeof message?.id !== 'string' || typeof message.stream_id !== 'string') {
      this.onError(
        new Error('not an event message'),
        `unreadable message on ${incoming.topic} (offset ${incoming.offset}); skipped`,
      );
      return;
    }
    const isTransaction = message.stream_id.startsWith(TRANSACTION_STREAM_PREFIX);
    // Whose transaction it is, as the transactions relay names it on every message (absent before this release).
    const named = isTransaction ? stringField(message, 'merchant_account_id') : undefined;
    // The owner of a new transaction is saved with the message's webhook events (one commit), or alone when it has none.
    const createdBy =
      isTransaction && message.type === 'TransactionCreated'
        ? stringField(message.data, 'merchantAccountId')
        : undefined;
    const owner = createdBy ? { streamId: message.stream_id, merchantAccountId: createdBy } : undefined;

    const names = [...new Set(Array.isArray(message.names) ? message.names : message.name ? [message.name] : [])];
    const todo = names.filter((name) => typeof name === 'string' && !this.store.hasEvent(eventKey(message.id, name)));
    if (todo.length === 0) {
      // Named by the relay, the transaction's later messages will be too: the row is kept for one of an earlier
      // release's relay (a roll-back).
      if (owner) this.store.saveOwner(owner.streamId, owner.merchantAccountId);
      return;
    }

    const merchantAccountId = isTransaction
      ? (named ?? owner?.merchantAccountId ?? this.store.ownerOf(message.stream_id))
      : null;
    if (isTransaction && merchantAccountId === null) {
      this.onError(
        new Error(`no TransactionCreated seen for ${message.stream_id}`),
        `event ${message.id} (${todo.join(', ')}) skipped: unknown merchant account`,
      );
      return;
    }
    const createdAt = eventTime(message, this.context.now());
    const rendered = new Map<string, Promise<Readonly<Record<string, unknown>>>>();
    const events: NewWebhookEvent[] = [];
    for (const name of todo) {
      const ref = resourceOf(message, name, merchantAccountId);
      if (!ref) {
        this.onError(
          new Error(`cannot tell the resource of ${name} in ${message.stream_id}`),
          `event ${message.id} (${name}) skipped`,
        );
        continue;
      }
      const cacheKey = `${ref.pattern}\u0000${ref.id}`;
      let target = rendered.get(cacheKey);
      if (!target) {
        target = renderTarget(
          this.options.rpc,
          ref,
          { name, occurredAt: createdAt },
          this.options.render,
          this.targets,
        );
        rendered.set(cacheKey, target);
      }
      const body: WebhookEvent = {
        type: 'event',
        id: message.id,
        name,
        created_at: createdAt,
        merchant_account_id: merchantAccountId,
        target: await target,
      };
      events.push({
        key: eventKey(message.id, name),
        messageId: message.id,
        name,
        streamId: message.stream_id,
        resourceId: ref.id,
        merchantAccountId,
        createdAt,
        body: JSON.stringify(body),
        traceContext: contextHeaders(),
      });
    }
    // Asked before the store's transaction, inside which the subscriptions' answers are not kept (`KeptAnswers`).
    const subscribers = new Map(
      events.map((event) => [
        event.key,
        this.directory.matching(event.merchantAccountId, event.name).map((subscription) => subscription.id),
      ]),
    );
    const created = this.store.ingest(
      events,
      (event) => subscribers.get(event.key) ?? [],
      this.context.newId,
      this.context.now(),
      owner,
    );
    // The first attempt from here, not from the worker's next turn: the deliveries are committed.
    if (created > 0) this.worker.attemptNow();
  }

  // ---- queries --------------------------------------------------------------------------------------------------

  private list(request: WebhookDeliveryListRequest): Page<WebhookDelivery> {
    const subscription = this.visibleSubscription(request);
    const status = request.status ?? null;
    if (status !== null && !(deliveryStatusValues as readonly string[]).includes(status)) {
      throw ApiError.badRequest('Invalid status', [
        {
          location: 'query',
          pointer: '/status',
          message: `must be one of ${deliveryStatusValues.join(', ')}`,
          type: 'invalid',
        },
      ]);
    }
    const limit = Math.min(100, Math.max(1, Number.isInteger(request.limit) ? (request.limit as number) : 20));
    if (request.cursor && decodeCursor(request.cursor) === null) throw invalidCursor('query');
    const filter = { subscriptionId: subscription.id, status, eventName: request.event_name ?? null };
    const keyOf = (row: DeliveryRow) => String(row.seq);
    const page = keysetPage<DeliveryRow>(
      { limit, ...(request.cursor ? { cursor: request.cursor } : {}) },
      keyOf,
      (key, count) => this.store.listPage(filter, 'after', key === null ? null : Number(key), count),
      (key, count) => this.store.listPage(filter, 'before', Number(key), count),
    );
    const attempts = this.store.attemptsOf(page.items.map((row) => row.id));
    return { ...page, items: page.items.map((row) => toWireDelivery(row, attempts.get(row.id) ?? [])) };
  }

  private get(request: WebhookDeliveryRef): WebhookDelivery {
    return this.render(this.ownedDelivery(request).id);
  }

  // ---- replays --------------------------------------------------------------------------------------------------

  private replayDelivery(request: WebhookDeliveryRef): WebhookDelivery {
    const delivery = this.ownedDelivery(request);
    this.store.reschedule(delivery.id, this.context.now());
    this.worker.kick();
    return this.render(delivery.id);
  }

  private replayRange(request: WebhookReplayRangeRequest): WebhookReplayResult {
    const subscription = this.visibleSubscription(request);
    const source = request.body ?? request;
    const parsed = webhookReplayRangeSchema.safeParse({
      from: source.from,
      to: source.to,
      ...(source.cursor !== undefined ? { cursor: source.cursor } : {}),
      ...(source.limit !== undefined ? { limit: source.limit } : {}),
    });
    if (!parsed.success) {
      throw ApiError.badRequest(
        'Invalid replay range',
        parsed.error.issues.map((issue) => ({
          location: 'body' as const,
          pointer: `/${issue.path.join('/')}`,
          message: issue.message,
          type: issue.code,
        })),
      );
    }
    const { from, to, cursor, limit } = parsed.data;
    const fromMs = Date.parse(from);
    const toMs = Date.parse(to);
    if (fromMs > toMs)
      throw ApiError.badRequest('`from` is after `to`', [
        { location: 'body', pointer: '/from', message: 'must not be after `to`', type: 'invalid' },
      ]);
    let after = 0;
    if (cursor) {
      const decoded = decodeCursor(cursor);
      const seq = decoded && 'after' in decoded ? Number(decoded.after) : Number.NaN;
      if (!Number.isSafeInteger(seq) || seq < 0) throw invalidCursor('body');
      after = seq;
    }
    const result = this.store.replayRange(
      {
        subscriptionId: subscription.id,
        merchantAccountId: subscription.merchantAccountId,
        eventNames: subscription.eventNames,
      },
      { fromMs, toMs, after, limit },
      this.context.newId,
      this.context.now(),
    );
    if (result.scheduled > 0) this.worker.kick();
    return {
      type: 'webhook-replay',
      scheduled: result.scheduled,
      next_cursor: result.more && result.last !== null ? encodeCursor({ after: String(result.last) }) : null,
    };
  }

  // ---- helpers --------------------------------------------------------------------------------------------------

  /** The subscription when the caller may see it (a deleted one is not found): else 404. */
  private visibleSubscription(ref: WebhookSubscriptionRef): SubscriptionTarget {
    if (typeof ref?.merchant_account_id !== 'string' || typeof ref.subscription_id !== 'string')
      throw ApiError.notFound();
    const subscription = this.directory.find(ref.subscription_id);
    if (!subscription || !visibleTo(ref, subscription)) throw ApiError.notFound();
    return subscription;
  }

  private ownedDelivery(request: WebhookDeliveryRef): DeliveryRow {
    const subscription = this.visibleSubscription(request);
    const delivery = typeof request.delivery_id === 'string' ? this.store.find(request.delivery_id) : null;
    if (!delivery || delivery.subscriptionId !== subscription.id) throw ApiError.notFound();
    return delivery;
  }

  private render(deliveryId: string): WebhookDelivery {
    const row = this.store.find(deliveryId);
    if (!row) throw ApiError.notFound();
    return toWireDelivery(row, this.store.attemptsOf([row.id]).get(row.id) ?? []);
  }
}

const eventKey = (messageId: string, name: string): string => `${messageId}:${name}`;

const invalidCursor = (location: 'query' | 'body') =>
  ApiError.badRequest('Invalid cursor', [
    { location, pointer: '/cursor', message: 'is not a cursor of this list', type: 'invalid' },
  ]);
