/**
 * The webhooks service: subscriptions (with their signing secrets) and deliveries, over its own event store and
 * local SQLite. Framework-free like identity and transactions: the embedded runtime registers its handlers in
 * process, `main.ts` serves them over NestJS TCP. Delivery reads subscriptions only through the
 * `SubscriptionDirectory` port, which the subscriptions slice implements.
 */
import type { MessageBus } from '@switchyard/bus';
import { webhookPatterns } from '@switchyard/contracts';
import type { RpcClient, RpcHandlers } from '@switchyard/rpc';
import type { Settings } from '@switchyard/config';
import { RetentionSweeper, ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { webhooksUpcasters } from './event-schema';
import { loadWebhooksKeyRing, type WebhooksKeyRing } from './subscriptions/webhooks-keys';
import { randomBytes } from 'node:crypto';
import { Deliveries, type DeliveriesOptions } from './delivery/deliveries.slice';
import { deliveryRetention } from './delivery/delivery-retention';
import { WebhookSubscriptions } from './subscriptions/webhook-subscriptions.slice';

export interface WebhooksServiceOptions extends ServiceHostOptions {
  /** Where the services' events come from (`transactions.events`, `identity.events`). */
  readonly bus: MessageBus;
  /** Calls to the other services (rendering an event's target: `transactions.*`, `identity.*`). */
  readonly rpc: RpcClient;
  /** The webhooks key (`loadWebhooksKey`) or key ring (`loadWebhooksKeyRing`); default: a random key, for tests that keep nothing. */
  readonly key?: Buffer | WebhooksKeyRing;
  /** Reads the key ring again (its files) when a value names a key it lacks. */
  readonly reloadKeys?: () => WebhooksKeyRing;
  /** WEBHOOK_ALLOW_PRIVATE_URLS (default false). */
  readonly allowPrivateUrls?: boolean;
  readonly retry?: DeliveriesOptions['retry'];
  /** WEBHOOKS_CONSUMER_GROUP (default `webhooks`). */
  readonly groupId?: string;
  readonly workerIntervalMs?: number;
  /** The HTTP client deliveries use (tests). */
  readonly fetch?: typeof fetch;
  /** Delivery failures nobody waits for (a skipped message, a worker error); default: a line on stderr. */
  readonly onError?: DeliveriesOptions['onError'];
  /** The process's logger: a line per delivery attempt, with the request and correlation ids of its event. */
  readonly log?: DeliveriesOptions['log'];
  /** Pruning of finished deliveries and their events (docs/operations.md, Retention); absent: none. */
  readonly retention?: { readonly intervalMs: number; readonly batchSize: number; readonly deliveriesDays: number };
}

/** The options every runtime reads from its settings (the embedded one and the webhooks process alike). */
export function webhooksOptionsFrom(
  settings: Settings,
  onError: NonNullable<DeliveriesOptions['onError']>,
): Pick<
  WebhooksServiceOptions,
  | 'pollIntervalMs'
  | 'key'
  | 'reloadKeys'
  | 'allowPrivateUrls'
  | 'retry'
  | 'workerIntervalMs'
  | 'onError'
  | 'groupId'
  | 'retention'
> {
  const keys = () =>
    loadWebhooksKeyRing({
      configured: settings.WEBHOOK_SECRETS_KEY,
      retired: settings.WEBHOOK_SECRETS_RETIRED_KEYS,
      dataDir: settings.dataDir,
    });
  return {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    key: keys(),
    reloadKeys: keys,
    allowPrivateUrls: settings.WEBHOOK_ALLOW_PRIVATE_URLS,
    retry: {
      baseMs: settings.WEBHOOK_RETRY_BASE_MS,
      maxMs: settings.WEBHOOK_RETRY_MAX_MS,
      maxAgeMs: settings.WEBHOOK_MAX_AGE_MS,
      timeoutMs: settings.WEBHOOK_TIMEOUT_MS,
    },
    workerIntervalMs: settings.WEBHOOK_WORKER_INTERVAL_MS,
    groupId: settings.WEBHOOKS_CONSUMER_GROUP,
    onError,
    retention: {
      intervalMs: settings.RETENTION_INTERVAL_MS,
      batchSize: settings.RETENTION_BATCH_SIZE,
      deliveriesDays: settings.WEBHOOK_DELIVERY_RETENTION_DAYS,
    },
  };
}

export class WebhooksService {
  readonly subscriptions: WebhookSubscriptions;
  readonly deliveries: Deliveries;
  /** Null when the options ask for no retention. */
  readonly retention: RetentionSweeper | null;
  private readonly host: ServiceHost;

  constructor(options: WebhooksServiceOptions) {
    this.host = new ServiceHost({ ...options, upcasters: webhooksUpcasters });
    this.subscriptions = new WebhookSubscriptions(this.host.context, {
      key: options.key ?? randomBytes(32),
      ...(options.reloadKeys ? { reloadKeys: options.reloadKeys } : {}),
      allowPrivateUrls: options.allowPrivateUrls ?? false,
    });
    this.deliveries = new Deliveries(this.host.context, this.subscriptions, {
      bus: options.bus,
      rpc: options.rpc,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.groupId ? { groupId: options.groupId } : {}),
      ...(options.workerIntervalMs !== undefined ? { workerIntervalMs: options.workerIntervalMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      allowPrivateUrls: options.allowPrivateUrls ?? false,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    this.host.add(this.subscriptions, this.deliveries);
    const retention = options.retention;
    this.retention = retention
      ? new RetentionSweeper({
          tasks: [deliveryRetention(options.db, retention.deliveriesDays)],
          now: this.host.context.now,
          intervalMs: retention.intervalMs,
          batchSize: retention.batchSize,
          onError: (error, task) => options.onError?.(error, `retention of ${task} failed; retried at the next sweep`),
        })
      : null;
  }

  /** Brings the read models up to date and follows the log, then starts delivering. */
  async start(): Promise<void> {
    await this.host.catchUpAndFollow();
    await this.deliveries.start();
    this.retention?.start();
  }

  /** Stops delivering first, then the read models. */
  async stop(): Promise<void> {
    await this.retention?.stop();
    await this.deliveries.stop();
    await this.host.stop();
  }

  /** Read-your-writes, also for writes made by another process into the same store. */
  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(webhookPatterns.ping);
  }
}
