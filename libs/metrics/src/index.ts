export { collectProcessMetrics, metricsContentType, renderMetrics, secondsSince } from './registry';
export { countRateLimitRefusal, observeHttpRequest, routeLabel } from './http-metrics';
export { countAuthorization, observeProviderCall } from './payment-metrics';
export { observeRelayed, timeEventStoreAppend, type EventStoreKind } from './event-metrics';
export { countWebhookAttempt, registerWebhookBacklog, type WebhookAttemptOutcome } from './webhook-metrics';
export { startMetricsServer, type RunningMetricsServer } from './metrics-server';
export {
  countDeadLetter,
  countDeadLetterOutcome,
  registerConsumerLag,
  registerParkedStreams,
  type ConsumerLag,
  type DeadLetterOutcome,
  type DeadLetterReason,
  type ParkedStreamCount,
} from './bus-metrics';
