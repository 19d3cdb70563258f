/**
 * Webhook delivery: the attempts by outcome, the failed ones, and the backlog — deliveries not yet done, counted
 * from the delivery store of each webhooks service of the process when scraped.
 */
import { Counter, Gauge } from 'prom-client';
import { registry } from './registry';

export type WebhookAttemptOutcome = 'succeeded' | 'retrying' | 'failed';

const deliveries = new Counter({
  name: 'switchyard_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: succeeded (2xx), retrying (failed, another attempt is scheduled), failed (failed, given up).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const deliveryFailures = new Counter({
  name: 'switchyard_webhook_delivery_failures_total',
  help: 'Webhook delivery attempts that failed: no 2xx answer (another status, a timeout, a refused or broken connection).',
  registers: [registry],
});

/** How many deliveries each webhooks service of the process has still to do. */
const backlogSources = new Set<() => number>();

new Gauge({
  name: 'switchyard_webhook_backlog',
  help: 'Webhook deliveries not yet done (pending or retrying), counted when scraped.',
  registers: [registry],
  collect() {
    let backlog = 0;
    for (const count of backlogSources) backlog += count();
    this.set(backlog);
  },
});

export function countWebhookAttempt(outcome: WebhookAttemptOutcome): void {
  deliveries.inc({ outcome });
  if (outcome !== 'succeeded') deliveryFailures.inc();
}

/** Adds a webhooks service's backlog to the gauge; the function returned takes it away (when the service stops). */
export function registerWebhookBacklog(count: () => number): () => void {
  backlogSources.add(count);
  return () => void backlogSources.delete(count);
}
