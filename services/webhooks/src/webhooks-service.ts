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
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { loadWebhooksKey } from './subscriptions/secret-box';
import { randomBytes } from 'node:crypto';
import { Deliveries, type DeliveriesOptions } from './delivery/deliveries.slice';
import { WebhookSubscriptions } from './subscriptions/webhook-subscriptions.slice';

export interface WebhooksServiceOptions extends ServiceHostOptions {
  /** Where the services' events come from (`transactions.events`, `identity.events`). */
  readonly bus: MessageBus;
  /** Calls to the other services (rendering an event's target: `transactions.*`, `identity.*`). */
  readonly rpc: RpcClient;
  /** The webhooks key (`loadWebhooksKey`); default: a random key, for tests that keep nothing. */
  readonly key?: Buffer;
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
}

/** The options every runtime reads from its settings (the embedded one and the webhooks process alike). */
export function webhooksOptionsFrom(
  settings: Settings,
  onError: NonNullable<DeliveriesOptions['onError']>,
): Pick<WebhooksServiceOptions, 'pollIntervalMs' | 'key' | 'allowPrivateUrls' | 'retry' | 'workerIntervalMs' | 'onError' | 'groupId'> {
  return {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    key: loadWebhooksKey({ configured: settings.WEBHOOK_SECRETS_KEY, dataDir: settings.dataDir }),
    allowPrivateUrls: settings.WEBHOOK_ALLOW_PRIVATE_URLS,
    retry: { baseMs: settings.WEBHOOK_RETRY_BASE_MS, maxMs: settings.WEBHOOK_RETRY_MAX_MS, maxAgeMs: settings.WEBHOOK_MAX_AGE_MS, timeoutMs: settings.WEBHOOK_TIMEOUT_MS },
    workerIntervalMs: settings.WEBHOOK_WORKER_INTERVAL_MS,
    groupId: settings.WEBHOOKS_CONSUMER_GROUP,
    onError,
  };
}

export class WebhooksService {
  readonly subscriptions: WebhookSubscriptions;
  readonly deliveries: Deliveries;
  private readonly host: ServiceHost;

  constructor(options: WebhooksServiceOptions) {
    this.host = new ServiceHost(options);
    this.subscriptions = new WebhookSubscriptions(this.host.context, { key: options.key ?? randomBytes(32), allowPrivateUrls: options.allowPrivateUrls ?? false });
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
  }

  /** Brings the read models up to date and follows the log, then starts delivering. */
  async start(): Promise<void> {
    await this.host.catchUpAndFollow();
    await this.deliveries.start();
  }

  /** Stops delivering first, then the read models. */
  async stop(): Promise<void> {
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
