/**
 * Issue 12, item 1 acceptance (metrics), over HTTP on the embedded runtime: after a payment (authorized through the
 * simulator, then captured), a webhook delivered to a live receiver and one failing at a dead one, and an embed token
 * refused by the enumeration limit, `GET /metrics` on METRICS_PORT — without a token — answers the Prometheus text format with every
 * metric of docs/observability.md present and a non-zero sample; labels are route templates and ids of connections,
 * never a transaction id, a card number or a token.
 */
import { freePort, signToken } from '@switchyard/testing';
import request from 'supertest';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../services/standalone/src/embedded.fixture';
import { card, startHarness, TEST_PANS, type Harness } from '../../services/standalone/src/transactions.harness';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';

const account = 'metrics';
let h: Harness;
let connectionId: string;
let transactionId: string;
let embedToken: string;
const live = new WebhookReceiver();
const dead = new WebhookReceiver();

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const scrape = async (): Promise<{ text: string; samples: Sample[]; contentType: string | null }> => {
  const response = await fetch(metricsUrl());
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseExposition(text), contentType: response.headers.get('content-type') };
};

const matching = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );

/** The sum of the samples of `name` with these labels (a counter, a histogram's `_count`). */
const total = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}) =>
  matching(samples, name, labels).reduce((sum, sample) => sum + sample.value, 0);

async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** METRICS_PORT: where the embedded runtime serves /metrics (beside, not on, the API's port). */
let metricsPort: number;
const metricsUrl = (): string => {
  const url = h.fixture.service.gateway.metricsUrl;
  if (!url) throw new Error('the embedded runtime serves no /metrics');
  return url;
};

beforeAll(async () => {
  metricsPort = await freePort();
  h = await startHarness('metrics', {
    env: {
      METRICS_PORT: String(metricsPort),
      ENUMERATION_RATE_LIMIT_PER_MINUTE: '2',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '20',
      // The dead receiver's delivery stays in the backlog, retrying, for the whole spec.
      WEBHOOK_RETRY_BASE_MS: '600000',
      POLL_INTERVAL_MS: '20',
    },
  });
  await h.createAccount(account);
  connectionId = await h.createConnection(account);
  await live.up();
  await dead.up();
  await dead.down();
  for (const receiver of [live, dead]) {
    await h
      .http()
      .post('/webhook-subscriptions')
      .set(h.headers(account))
      .send({ url: receiver.url, event_names: ['transaction.captured'] })
      .expect(201);
  }

  const authorized = await h.authorize(account, { amount: 1_299, intent: 'authorize' });
  expect(authorized.status).toBe('authorization_succeeded');
  transactionId = authorized.id;
  await h.http().post(`/transactions/${transactionId}/capture`).set(h.headers(account)).send({}).expect(200);
  await live.waitFor('the capture webhook', () => live.succeeded.length > 0, 10_000);

  const integration = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: 'shop backend', roles: ['integration'] },
    { kind: 'operator' },
  );
  embedToken = await signToken({
    kid: integration.kid,
    privateKeyPem: integration.private_key!,
    scopes: ['embed'],
    expiresIn: 600,
  });
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const response = await h
      .http()
      .post('/transactions')
      .set({ authorization: `Bearer ${embedToken}`, 'x-service-merchant-account-id': account })
      .send({ amount: 1_299, currency: 'USD', payment_method: card() });
    statuses.push(response.status);
  }
  expect(statuses).toContain(429);

  await eventually(
    'a failed delivery to the dead receiver',
    async () => total((await scrape()).samples, 'switchyard_webhook_delivery_failures_total') > 0,
  );
});

afterAll(async () => {
  await live.down();
  await h?.stop();
});

describe('GET /metrics', () => {
  it('is served on METRICS_PORT only, never on the API port (issue 22, item 7)', async () => {
    expect(new URL(metricsUrl()).port).toBe(String(metricsPort));
    const onApiPort = await fetch(`${h.baseUrl}/metrics`);
    expect(onApiPort.status).toBe(404);
    expect(await onApiPort.text()).not.toContain('switchyard_');
  });

  it('answers the Prometheus text format without a token', async () => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await response.text()).toMatch(/^# HELP switchyard_http_requests_total /m);
  });

  it('has every metric with a non-zero sample after a payment, a webhook and a refusal', async () => {
    const { samples } = await scrape();
    const nonZero = {
      switchyard_http_requests_total: total(samples, 'switchyard_http_requests_total'),
      switchyard_http_request_duration_seconds_count: total(samples, 'switchyard_http_request_duration_seconds_count'),
      switchyard_authorizations_total: total(samples, 'switchyard_authorizations_total'),
      switchyard_provider_request_duration_seconds_count: total(
        samples,
        'switchyard_provider_request_duration_seconds_count',
      ),
      switchyard_event_store_append_duration_seconds_count: total(
        samples,
        'switchyard_event_store_append_duration_seconds_count',
      ),
      switchyard_relay_lag_seconds_count: total(samples, 'switchyard_relay_lag_seconds_count'),
      switchyard_webhook_deliveries_total: total(samples, 'switchyard_webhook_deliveries_total'),
      switchyard_webhook_delivery_failures_total: total(samples, 'switchyard_webhook_delivery_failures_total'),
      switchyard_rate_limit_refusals_total: total(samples, 'switchyard_rate_limit_refusals_total'),
      switchyard_webhook_backlog: total(samples, 'switchyard_webhook_backlog'),
      process_cpu_seconds_total: total(samples, 'process_cpu_seconds_total'),
      nodejs_heap_size_used_bytes: total(samples, 'nodejs_heap_size_used_bytes'),
    };
    const zero = Object.entries(nonZero).filter(([, value]) => !(value > 0));
    expect(zero).toEqual([]);
  });

  it('labels requests by method, route template and status', async () => {
    const { samples } = await scrape();
    expect(
      total(samples, 'switchyard_http_requests_total', { method: 'POST', route: '/transactions', status: '201' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(samples, 'switchyard_http_requests_total', {
        method: 'POST',
        route: '/transactions/{transaction_id}/capture',
        status: '200',
      }),
    ).toBe(1);
    expect(
      total(samples, 'switchyard_http_requests_total', { method: 'POST', route: '/transactions', status: '429' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(samples, 'switchyard_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/transactions/{transaction_id}/capture',
      }),
    ).toBe(1);
    expect(
      matching(samples, 'switchyard_http_request_duration_seconds_bucket', { route: '/transactions', le: '+Inf' }),
    ).not.toEqual([]);

    const unmatched = (list: typeof samples) =>
      total(list, 'switchyard_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' });
    const before = unmatched(samples);
    await fetch(`${h.baseUrl}/no/such/${transactionId}`);
    expect(unmatched((await scrape()).samples)).toBe(before + 1);
  });

  it('counts authorization outcomes per connection and times provider calls per operation', async () => {
    const { samples } = await scrape();
    expect(
      total(samples, 'switchyard_authorizations_total', { payment_service_id: connectionId, outcome: 'succeeded' }),
    ).toBeGreaterThanOrEqual(2);
    for (const operation of ['authorize', 'capture']) {
      expect(
        total(samples, 'switchyard_provider_request_duration_seconds_count', {
          payment_service_definition_id: 'mock-card',
          operation,
        }),
      ).toBeGreaterThanOrEqual(1);
    }
  });

  it('times event store appends and relays, and counts webhook outcomes, the backlog and refusals', async () => {
    const { samples } = await scrape();
    expect(total(samples, 'switchyard_event_store_append_duration_seconds_count', { store: 'sqlite' })).toBeGreaterThan(
      0,
    );
    expect(total(samples, 'switchyard_relay_lag_seconds_count', { relay: 'transactions.events' })).toBeGreaterThan(0);
    expect(total(samples, 'switchyard_webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'switchyard_webhook_deliveries_total', { outcome: 'retrying' })).toBeGreaterThanOrEqual(1);
    // The dead receiver's delivery waits for its next attempt.
    expect(total(samples, 'switchyard_webhook_backlog')).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'switchyard_rate_limit_refusals_total', { limit: 'embed-token' })).toBeGreaterThanOrEqual(1);
  });

  it('holds no card number, token, or transaction id', async () => {
    const { text } = await scrape();
    for (const pan of TEST_PANS) expect(text).not.toContain(pan);
    expect(text).not.toContain(embedToken);
    expect(text).not.toContain(transactionId);
    expect(text).not.toContain('security_code');
  });
});

describe('with METRICS_ENABLED=false', () => {
  let off: EmbeddedFixture;
  beforeAll(async () => {
    off = await startEmbeddedFixture('metrics-off', {
      METRICS_ENABLED: 'false',
      METRICS_PORT: String(await freePort()),
    });
  });
  afterAll(() => off?.stop());

  it('serves no /metrics, not even on METRICS_PORT', async () => {
    expect(off.service.gateway.metricsUrl).toBeNull();
    const server = off.service.gateway.app.getHttpServer();
    await request(server).get('/healthz').expect(200);
    await request(server).get('/metrics').expect(404);
  });
});
