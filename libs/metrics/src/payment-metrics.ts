/**
 * Payments as the providers answer them: authorization outcomes per connection, and the latency of every call to a
 * provider per payment service definition and operation.
 */
import { Counter, Histogram } from 'prom-client';
import { registry } from './registry';

const authorizations = new Counter({
  name: 'switchyard_authorizations_total',
  help:
    'Authorization attempts by connection (payment service id) and the outcome its provider answered: succeeded, declined, ' +
    'failed, pending, buyer_approval_required, unknown (no answer). A failover attempt counts at the connection it tried.',
  labelNames: ['payment_service_id', 'outcome'] as const,
  registers: [registry],
});

const providerRequestDuration = new Histogram({
  name: 'switchyard_provider_request_duration_seconds',
  help: 'Time a call to a payment provider took (answered, refused or failed), by payment service definition and connector operation.',
  labelNames: ['payment_service_definition_id', 'operation'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export function countAuthorization(paymentServiceId: string, outcome: string): void {
  authorizations.inc({ payment_service_id: paymentServiceId, outcome });
}

/** One call to a provider took `seconds` (answered, refused by the provider, failed or timed out). */
export function observeProviderCall(paymentServiceDefinitionId: string, operation: string, seconds: number): void {
  providerRequestDuration.observe({ payment_service_definition_id: paymentServiceDefinitionId, operation }, seconds);
}
