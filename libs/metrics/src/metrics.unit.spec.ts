/**
 * The metrics library: each recording function shows up in the process's one registry under its documented name and
 * labels, route labels are templates, the backlog gauge asks its sources when scraped, and the services' metrics
 * server answers the Prometheus text format.
 */
import {
  countAuthorization,
  countRateLimitRefusal,
  countWebhookAttempt,
  metricsContentType,
  observeHttpRequest,
  observeProviderCall,
  observeRelayed,
  registerWebhookBacklog,
  renderMetrics,
  routeLabel,
  startMetricsServer,
  timeEventStoreAppend,
} from './index';

/** The value of the one sample line `series` (name and labels exactly as exposed), or undefined. */
const sample = async (series: string): Promise<number | undefined> => {
  const line = (await renderMetrics()).split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('routeLabel', () => {
  it('writes the router template in the API style', () => {
    expect(routeLabel('/transactions/:transaction_id/refunds/:refund_id')).toBe(
      '/transactions/{transaction_id}/refunds/{refund_id}',
    );
    expect(routeLabel('/healthz')).toBe('/healthz');
  });

  it('is `unmatched` without a route, whatever the URL was', () => {
    expect(routeLabel(undefined)).toBe('unmatched');
    expect(routeLabel('')).toBe('unmatched');
  });
});

describe('HTTP requests', () => {
  it('counts by method, route and status, and times by method and route', async () => {
    observeHttpRequest({ method: 'POST', route: '/transactions', status: 201, seconds: 0.03 });
    observeHttpRequest({ method: 'POST', route: '/transactions', status: 201, seconds: 0.2 });
    expect(await sample('switchyard_http_requests_total{method="POST",route="/transactions",status="201"}')).toBe(2);
    expect(await sample('switchyard_http_request_duration_seconds_count{method="POST",route="/transactions"}')).toBe(2);
    expect(
      await sample('switchyard_http_request_duration_seconds_bucket{le="0.05",method="POST",route="/transactions"}'),
    ).toBe(1);
  });

  it('puts methods outside HTTP’s usual set under OTHER', async () => {
    observeHttpRequest({ method: 'BREW', route: 'unmatched', status: 404, seconds: 0.001 });
    expect(await sample('switchyard_http_requests_total{method="OTHER",route="unmatched",status="404"}')).toBe(1);
  });

  it('counts rate-limit refusals by limit', async () => {
    countRateLimitRefusal('checkout-session');
    expect(await sample('switchyard_rate_limit_refusals_total{limit="checkout-session"}')).toBe(1);
  });
});

describe('payments', () => {
  it('counts authorization outcomes per connection', async () => {
    countAuthorization('c0a8e3f4-0000-4000-8000-000000000001', 'declined');
    expect(
      await sample(
        'switchyard_authorizations_total{payment_service_id="c0a8e3f4-0000-4000-8000-000000000001",outcome="declined"}',
      ),
    ).toBe(1);
  });

  it('times provider calls per definition and operation', async () => {
    observeProviderCall('mock-card', 'refund', 0.02);
    observeProviderCall('mock-card', 'refund', 0.3);
    expect(
      await sample(
        'switchyard_provider_request_duration_seconds_count{payment_service_definition_id="mock-card",operation="refund"}',
      ),
    ).toBe(2);
    expect(
      await sample(
        'switchyard_provider_request_duration_seconds_sum{payment_service_definition_id="mock-card",operation="refund"}',
      ),
    ).toBeCloseTo(0.32);
  });
});

describe('the event log', () => {
  it('times appends whether they succeed or are refused', async () => {
    await timeEventStoreAppend('eventstoredb', Promise.resolve({ nextExpectedRevision: 0 }));
    await expect(timeEventStoreAppend('eventstoredb', Promise.reject(new Error('conflict')))).rejects.toThrow(
      'conflict',
    );
    expect(await sample('switchyard_event_store_append_duration_seconds_count{store="eventstoredb"}')).toBe(2);
  });

  it('observes each relayed event’s lag behind its recording', async () => {
    const tenSecondsAgo = new Date(Date.now() - 10_000).toISOString();
    observeRelayed('identity.events', [{ recordedAt: tenSecondsAgo }, { recordedAt: new Date().toISOString() }]);
    expect(await sample('switchyard_relay_lag_seconds_count{relay="identity.events"}')).toBe(2);
    expect(await sample('switchyard_relay_lag_seconds_bucket{le="5",relay="identity.events"}')).toBe(1);
    expect(await sample('switchyard_relay_lag_seconds_sum{relay="identity.events"}')).toBeGreaterThanOrEqual(10);
  });
});

describe('webhooks', () => {
  it('counts attempts by outcome, and every failed one as a failure', async () => {
    countWebhookAttempt('succeeded');
    countWebhookAttempt('retrying');
    countWebhookAttempt('failed');
    expect(await sample('switchyard_webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
    expect(await sample('switchyard_webhook_deliveries_total{outcome="retrying"}')).toBe(1);
    expect(await sample('switchyard_webhook_delivery_failures_total')).toBe(2);
  });

  it('sums the backlog of every registered service when scraped, until it is unregistered', async () => {
    let first = 3;
    const unregisterFirst = registerWebhookBacklog(() => first);
    const unregisterSecond = registerWebhookBacklog(() => 4);
    expect(await sample('switchyard_webhook_backlog')).toBe(7);
    first = 0;
    expect(await sample('switchyard_webhook_backlog')).toBe(4);
    unregisterSecond();
    unregisterFirst();
    expect(await sample('switchyard_webhook_backlog')).toBe(0);
  });
});

describe('the metrics server', () => {
  it('answers GET /metrics in the Prometheus text format with the process metrics, and 404 elsewhere', async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0 });
    try {
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(metricsContentType);
      const text = await response.text();
      expect(text).toMatch(/^# HELP switchyard_webhook_backlog /m);
      expect(text).toMatch(/^process_cpu_seconds_total /m);
      expect((await fetch(server.url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
