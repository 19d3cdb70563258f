/**
 * Sends due deliveries: every tick (and whenever something changes) it takes the heads of the lanes that are due
 * and not already in flight, POSTs each — signed, with a timeout — records the attempt, and settles or reschedules
 * the delivery. Different lanes go concurrently (at most `concurrency` requests in flight); one lane strictly one
 * at a time, in order.
 *
 * What happens to deliveries of a subscription that stopped taking them:
 * - deactivated (`active: false`): its queued deliveries are held — postponed without an attempt, re-checked every
 *   `holdMs` — and go out once it is active again; past their maximum age they fail like any other.
 * - deleted (the directory no longer finds it): its queued deliveries fail at once, without an attempt.
 *
 * A crash between sending and recording sends the delivery again after the restart, under the same webhook id
 * (at least once; receivers deduplicate on it).
 */
import { countWebhookAttempt } from '@switchyard/metrics';
import {
  contextFromHeaders,
  markFailed,
  runWithContext,
  setAttributes,
  SpanKind,
  startSpan,
  tracingEnabled,
  type Span,
} from '@switchyard/telemetry';
import { signatureHeaders } from '@switchyard/webhook-signature';
import type { Logger } from 'pino';
import type { SubscriptionDirectory, SubscriptionTarget } from '../subscription-directory';
import { webhookUrlProblem } from '../subscriptions/webhook-url';
import { deliveryErrorClass } from './guarded-fetch';
import type { DeliveryRow, DeliveryStore } from './delivery-store';
import { nextAttemptAfterFailure, type RetrySettings } from './retry-policy';

export interface DeliveryWorkerOptions {
  readonly store: DeliveryStore;
  readonly directory: SubscriptionDirectory;
  readonly settings: RetrySettings;
  readonly intervalMs: number;
  readonly now: () => Date;
  readonly fetch: typeof fetch;
  /**
   * WEBHOOK_ALLOW_PRIVATE_URLS. Off, a stored URL is checked again before every attempt (a subscription made while
   * private URLs were allowed, or before the rule was tightened, gets `forbidden_address` without a connection).
   */
  readonly allowPrivateUrls: boolean;
  /** Requests in flight at most (each to a different lane). */
  readonly concurrency: number;
  readonly onError: (error: unknown, what: string) => void;
  readonly random?: () => number;
  /** One `info` line per attempt (ids, status, duration; never the URL, a header or the body). */
  readonly log?: Pick<Logger, 'info'>;
}

interface AttemptOutcome {
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** What identifies an attempt in its log line and span: ids and the event name. */
const attemptFields = (delivery: DeliveryRow) => ({
  delivery_id: delivery.id,
  subscription_id: delivery.subscriptionId,
  event_id: delivery.eventId,
  event_name: delivery.eventName,
  resource_id: delivery.resourceId,
  attempt: delivery.failures + 1,
});

const attemptAttributes = (delivery: DeliveryRow) =>
  Object.fromEntries(Object.entries(attemptFields(delivery)).map(([key, value]) => [`webhook.${key}`, value]));

/** The event body with every `billing_details` member null (issue 22, item 4); untouched when it has none. */
function withoutBillingDetails(body: string): string {
  if (!body.includes('"billing_details":{')) return body;
  return JSON.stringify(JSON.parse(body), (key, value: unknown) =>
    key === 'billing_details' && value !== null ? null : value,
  );
}

const laneOf = (delivery: Pick<DeliveryRow, 'subscriptionId' | 'streamId'>): string =>
  `${delivery.subscriptionId}\u0000${delivery.streamId}`;

export class DeliveryWorker {
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private kickScheduled = false;
  private running = false;

  constructor(private readonly options: DeliveryWorkerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.options.store.promoteAll(this.options.now());
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
    this.kick();
  }

  /** Stops taking deliveries; resolves when the attempts under way are recorded (each ends within its timeout). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * Starts the attempts that are due now, before returning (the ingest, right after its commit: a new delivery's
   * first attempt is under way before its bus message is acknowledged). The same choice as a tick — heads of lanes
   * not in flight, at most `concurrency` — so order and one attempt at a time per delivery hold.
   */
  attemptNow(): void {
    this.tick();
  }

  /** Looks for due deliveries soon (after new deliveries, a replay, or a finished attempt). */
  kick(): void {
    if (!this.running || this.kickScheduled) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      this.tick();
    });
  }

  private tick(): void {
    if (!this.running) return;
    try {
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0) return;
      // Lanes in flight still have their head among the due ones: ask for enough to find `free` others.
      const due = this.options.store.due(this.options.now().getTime(), free + this.inFlight.size);
      let started = 0;
      for (const delivery of due) {
        if (started >= free) break;
        const lane = laneOf(delivery);
        if (this.inFlight.has(lane)) continue;
        started += 1;
        // In the context its event came in: the attempt's lines and span belong to the request that caused it.
        const run = runWithContext(contextFromHeaders(delivery.traceContext, delivery.eventId), () =>
          this.process(delivery),
        )
          .catch((error: unknown) => this.options.onError(error, 'delivering a webhook'))
          .finally(() => {
            this.inFlight.delete(lane);
            this.kick();
          });
        this.inFlight.set(lane, run);
      }
    } catch (error) {
      this.options.onError(error, 'looking for due webhook deliveries');
    }
  }

  private async process(delivery: DeliveryRow): Promise<void> {
    const { store, directory, settings } = this.options;
    const subscription = directory.find(delivery.subscriptionId);
    if (subscription === null) {
      store.failUndoneOf(delivery.subscriptionId, this.options.now());
      return;
    }
    if (!subscription.active) {
      const now = this.options.now();
      if (now.getTime() > delivery.scheduledMs + settings.maxAgeMs) store.settleWithoutAttempt(delivery, 'failed', now);
      else store.postpone(delivery, now.getTime() + this.holdMs(), now);
      return;
    }
    const attemptedAt = this.options.now();
    const span = startSpan('webhook delivery', {
      kind: SpanKind.CLIENT,
      ...(tracingEnabled() ? { attributes: attemptAttributes(delivery) } : {}),
    });
    const outcome = await this.send(subscription, delivery, attemptedAt);
    const nowMs = this.options.now().getTime();
    const succeeded = outcome.responseStatus !== null && outcome.responseStatus >= 200 && outcome.responseStatus < 300;
    const failures = succeeded ? delivery.failures : delivery.failures + 1;
    const next = succeeded
      ? null
      : nextAttemptAfterFailure({
          failures,
          scheduledMs: delivery.scheduledMs,
          nowMs,
          settings,
          ...(this.options.random ? { random: this.options.random } : {}),
        });
    countWebhookAttempt(succeeded ? 'succeeded' : next === null ? 'failed' : 'retrying');
    this.reportAttempt(span, delivery, outcome, succeeded ? 'succeeded' : next === null ? 'failed' : 'retrying');
    store.recordAttempt(
      delivery,
      { deliveryId: delivery.id, attemptedAt: attemptedAt.toISOString(), ...outcome },
      { status: succeeded ? 'succeeded' : next === null ? 'failed' : 'retrying', nextAttemptMs: next, failures },
      new Date(nowMs),
    );
  }

  /** Ends the attempt's span and logs its line. */
  private reportAttempt(
    span: Span,
    delivery: DeliveryRow,
    outcome: AttemptOutcome,
    status: 'succeeded' | 'retrying' | 'failed',
  ): void {
    setAttributes(span, {
      outcome: status,
      ...(outcome.responseStatus !== null ? { 'http.response.status_code': outcome.responseStatus } : {}),
    });
    if (status !== 'succeeded')
      markFailed(span, { type: outcome.responseStatus === null ? 'no_answer' : String(outcome.responseStatus) });
    span.end();
    this.options.log?.info(
      {
        ...attemptFields(delivery),
        outcome: status,
        response_status: outcome.responseStatus,
        duration_ms: outcome.durationMs,
        ...(outcome.error ? { error: outcome.error } : {}),
      },
      'webhook delivery attempted',
    );
  }

  /**
   * One POST of the delivery's body — without buyers' billing details unless the subscription may have them — signed
   * with the subscription's active secrets of this moment.
   */
  private async send(subscription: SubscriptionTarget, delivery: DeliveryRow, at: Date): Promise<AttemptOutcome> {
    const { timeoutMs } = this.options.settings;
    const body = subscription.billingDetails === true ? delivery.body : withoutBillingDetails(delivery.body);
    // The stored URL meets today's rule, whatever the rule was when it was stored (no connection otherwise).
    if (!this.options.allowPrivateUrls && webhookUrlProblem(subscription.url, { allowPrivate: false }) !== null) {
      return { responseStatus: null, error: 'forbidden_address', durationMs: 0 };
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Switchyard-Webhooks/1',
      ...signatureHeaders({
        webhookId: delivery.id,
        secrets: this.options.directory.activeSecrets(subscription.id).map((secret) => secret.secret),
        rawBody: body,
        timestamp: Math.floor(at.getTime() / 1000),
      }),
    };
    if (subscription.basicAuth) {
      headers.authorization = `Basic ${Buffer.from(`${subscription.basicAuth.username}:${subscription.basicAuth.password}`, 'utf8').toString('base64')}`;
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const started = performance.now();
    const elapsed = () => Math.max(0, Math.round(performance.now() - started));
    try {
      // Redirects are not followed: a 3xx is a failed attempt (and a redirect could lead past the URL checks).
      const response = await this.options.fetch(subscription.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
      const durationMs = elapsed();
      // The answer's body is not needed: release the connection.
      await response.body?.cancel().catch(() => undefined);
      return { responseStatus: response.status, error: null, durationMs };
    } catch (error) {
      // A class, never the resolver's or socket's message: that would tell which inner hosts and ports exist.
      return { responseStatus: null, error: deliveryErrorClass(error, timedOut), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** How long a delivery of an inactive subscription waits before it is looked at again. */
  private holdMs(): number {
    return Math.max(this.options.intervalMs, Math.min(this.options.settings.maxMs, 30_000));
  }
}
