/**
 * Issue 12, item 1 acceptance (traces and logs), on the embedded runtime listening on a loopback port:
 *
 * - Traces: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-process OTLP/HTTP collector (JSON), one payment
 *   (a card authorized through the simulator) announced to a webhook subscriber yields ONE trace holding the
 *   gateway's server span, the transactions service's RPC span, the provider call, the bus publish and consume,
 *   and the webhook delivery attempt, each the child of the one before; no card number or security code in any span.
 * - Logs: the service's pino lines written while handling a request with `x-request-id`, and while delivering the
 *   webhook of the event it caused, carry that id as `request_id` and `correlation_id`; no card number in any line.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, loadSettings } from '@switchyard/config';
import { startEmbedded, type EmbeddedService } from '@switchyard/standalone';
import { flushTraces } from '@switchyard/telemetry';
import { createTestDataDir, removeTestDataDir, signToken } from '@switchyard/testing';
import request from 'supertest';
import { card, TEST_PANS } from '../../services/standalone/src/transactions.harness';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import { CLIENT, CONSUMER, OtlpCollector, PRODUCER, SERVER, type ExportedSpan } from './otlp-collector';

const ACCOUNT_HEADER = 'x-service-merchant-account-id';
const account = 'observed';
const SECURITY_CODE = '737';

// ---- the embedded runtime, its logs captured -------------------------------------------------------------------------

const collector = new OtlpCollector();
const receiver = new WebhookReceiver();
const logLines: string[] = [];
const logs = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});
const parsedLogs = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>);

let service: EmbeddedService;
let dataDir: string;
let baseUrl: string;
let token: string;

const api = () => request(baseUrl);
const headers = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  [ACCOUNT_HEADER]: account,
  ...extra,
});

beforeAll(async () => {
  const collectorUrl = await collector.start();
  await receiver.up();
  dataDir = createTestDataDir('tracing');
  const settings = loadSettings({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_WORKER_INTERVAL_MS: '20',
    POLL_INTERVAL_MS: '20',
  });
  service = await startEmbedded(settings, createLogger('switchyard', settings, logs));
  await service.gateway.app.listen(0, '127.0.0.1');
  baseUrl = `http://127.0.0.1:${(service.gateway.app.getHttpServer().address() as AddressInfo).port}`;

  const admin = await service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    { kind: 'operator' },
  );
  token = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key!, expiresIn: 3600 });
  await api().post('/merchant-accounts').set(headers()).send({ id: account, display_name: 'Observed' }).expect(201);
  await api()
    .post('/payment-services')
    .set(headers())
    .send({
      display_name: 'Card simulator',
      payment_service_definition_id: 'mock-card',
      fields: [{ key: 'merchant_id', value: 'sim-observed' }],
      accepted_currencies: ['USD'],
      accepted_countries: ['US'],
    })
    .expect(201);
  await api()
    .post('/webhook-subscriptions')
    .set(headers())
    .send({ url: receiver.url, event_names: ['transaction.authorized'] })
    .expect(201);
});

afterAll(async () => {
  await service?.stop();
  await receiver.down();
  await collector.stop();
  if (dataDir) removeTestDataDir(dataDir);
});

/** Authorizes a card with `x-request-id: requestId` and waits until its `transaction.authorized` webhook arrived. */
async function payAndAwaitWebhook(requestId: string): Promise<{ id: string; responseRequestId: string | undefined }> {
  const response = await api()
    .post('/transactions')
    .set(headers({ 'x-request-id': requestId }))
    .send({ amount: 4_200, currency: 'USD', payment_method: card({ security_code: SECURITY_CODE }) });
  expect(response.status).toBe(201);
  expect(response.body.status).toBe('authorization_succeeded');
  const id = response.body.id as string;
  await receiver.waitFor(
    `the transaction.authorized webhook of ${id}`,
    () => receiver.succeeded.some((hook) => (hook.event.target as { id?: string }).id === id),
    10_000,
  );
  return { id, responseRequestId: response.headers['x-request-id'] };
}

/** Polls (flushing the span processor each time) until the predicate holds over the exported spans. */
async function eventuallyExported(
  what: string,
  predicate: (spans: readonly ExportedSpan[]) => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await flushTraces();
    if (predicate(collector.spans)) return;
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not exported within ${timeoutMs} ms; spans: ${collector.spans.map((span) => span.name).join(', ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a payment traced from the gateway to the webhook delivery', () => {
  let transactionId: string;

  const deliverySpansOf = (spans: readonly ExportedSpan[]) =>
    spans.filter(
      (span) => span.name === 'webhook delivery' && span.attributes['webhook.event_name'] === 'transaction.authorized',
    );

  beforeAll(async () => {
    ({ id: transactionId } = await payAndAwaitWebhook('trace-0001'));
    await eventuallyExported('the delivery span of the payment', (spans) =>
      deliverySpansOf(spans).some((span) => span.attributes['webhook.resource_id'] === transactionId),
    );
  });

  it('exports OTLP/HTTP JSON with the process as service.name', () => {
    expect(collector.contentTypes.length).toBeGreaterThan(0);
    for (const contentType of collector.contentTypes) expect(contentType).toContain('application/json');
    expect(new Set(collector.spans.map((span) => span.service))).toEqual(new Set(['switchyard']));
  });

  it('holds gateway, service, provider, bus and webhook delivery spans under one trace id, each the child of the one before', () => {
    const spans = collector.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ExportedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
    const ancestry = (span: ExportedSpan): ExportedSpan[] => {
      const chain: ExportedSpan[] = [];
      for (let parent = parentOf(span); parent; parent = parentOf(parent)) chain.push(parent);
      return chain;
    };

    const delivery = deliverySpansOf(spans).find((span) => span.attributes['webhook.resource_id'] === transactionId)!;
    expect(delivery.kind).toBe(CLIENT);
    expect(delivery.attributes['http.response.status_code']).toBe(200);
    const trace = spans.filter((span) => span.traceId === delivery.traceId);
    const chain = ancestry(delivery);

    // The root: the gateway's server span of POST /transactions.
    const gateway = chain.at(-1)!;
    expect(gateway).toMatchObject({ name: 'POST /transactions', kind: SERVER, parentSpanId: undefined });
    expect(gateway.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/transactions',
      'http.response.status_code': 201,
      'request.id': 'trace-0001',
    });

    // The transactions service handling the request (in-process RPC in the embedded runtime): a child of the gateway span.
    const handling = trace.find((span) => span.name === 'transactions.create')!;
    expect(handling).toMatchObject({ kind: SERVER, parentSpanId: gateway.spanId });
    expect(handling.attributes).toMatchObject({
      'rpc.system': 'switchyard',
      'rpc.service': 'transactions',
      'rpc.method': 'transactions.create',
    });

    // The provider call: the connector's operation inside the service's span, its HTTP request to the simulator inside that.
    const authorize = trace.find((span) => span.name === 'provider authorize')!;
    expect(ancestry(authorize)).toContain(handling);
    expect(authorize.attributes).toMatchObject({
      payment_service_definition_id: 'mock-card',
      amount: 4_200,
      currency: 'USD',
      outcome: 'succeeded',
      reference: transactionId,
    });
    expect(authorize.attributes.payment_service_id).toEqual(expect.any(String));
    const providerHttp = trace.find((span) => span.name === 'POST /v1/authorizations')!;
    expect(providerHttp).toMatchObject({ kind: CLIENT, parentSpanId: authorize.spanId });
    expect(providerHttp.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/v1/authorizations',
      'http.response.status_code': 201,
    });

    // The event it caused: published by the transactions relay, consumed by the webhooks service, delivered later.
    const consume = parentOf(delivery)!;
    expect(consume).toMatchObject({ name: 'process transactions.events', kind: CONSUMER });
    expect(consume.attributes).toMatchObject({
      'messaging.destination.name': 'transactions.events',
      'messaging.consumer.group.name': 'webhooks',
    });
    const publish = parentOf(consume)!;
    expect(publish).toMatchObject({ name: 'publish transactions.events', kind: PRODUCER });
    expect(publish.attributes['messaging.message.id']).toBe(consume.attributes['messaging.message.id']);
    // The event was appended while the service handled the request.
    expect(ancestry(publish)).toContain(handling);
    expect(chain).toEqual(expect.arrayContaining([consume, publish, handling, gateway]));
  });

  it('records no card number, security code or secret in any span', () => {
    const everything = collector.bodies.join('\n');
    for (const pan of TEST_PANS) expect(everything).not.toContain(pan);
    expect(everything).not.toContain(`"${SECURITY_CODE}"`);
    expect(everything).not.toContain('whsec_');
    expect(everything).not.toContain(token);
  });
});

describe('request and correlation ids in the logs', () => {
  it('echoes a well-formed x-request-id and puts it on the gateway lines and on the webhook delivery lines of the event it caused', async () => {
    const requestId = 'logs-7f3c9a1e-0d52-4b8e-9a4f-2c6b1d8e5a70';
    const { id, responseRequestId } = await payAndAwaitWebhook(requestId);
    expect(responseRequestId).toBe(requestId);

    const deliveryLine = () =>
      parsedLogs().find(
        (line) =>
          line.msg === 'webhook delivery attempted' &&
          line.resource_id === id &&
          line.event_name === 'transaction.authorized',
      );
    const deadline = Date.now() + 5_000;
    while (!deliveryLine() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

    const gatewayLine = parsedLogs().find((line) => line.msg === 'request completed' && line.request_id === requestId);
    expect(gatewayLine).toMatchObject({
      request_id: requestId,
      correlation_id: requestId,
      method: 'POST',
      route: '/transactions',
      status: 201,
    });
    expect(gatewayLine?.trace_id).toEqual(expect.stringMatching(/^[0-9a-f]{32}$/));
    expect(deliveryLine()).toMatchObject({
      request_id: requestId,
      correlation_id: requestId,
      response_status: 200,
      outcome: 'succeeded',
    });
    // The delivery's line and the request's line name the same trace.
    expect(deliveryLine()?.trace_id).toBe(gatewayLine?.trace_id);
  });

  it('replaces a missing or malformed x-request-id with a generated one', async () => {
    const missing = await api().get('/transactions').set(headers()).expect(200);
    expect(missing.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    for (const malformed of ['has spaces', 'x'.repeat(200), TEST_PANS[0]]) {
      const response = await api()
        .get('/transactions')
        .set(headers({ 'x-request-id': malformed }))
        .expect(200);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('writes no card number or security code in any line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const everything = logLines.join('\n');
    for (const pan of TEST_PANS) expect(everything).not.toContain(pan);
    expect(everything).not.toContain(`"${SECURITY_CODE}"`);
  });
});
