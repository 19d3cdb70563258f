/**
 * Traces and log ids across processes: the distributed runtime (identity, transactions, webhooks, gateways and the
 * simulator as separate OS processes over TCP, Kafka and Redis), every process exporting to one in-process OTLP
 * collector. One payment with `x-request-id` gives one trace holding the gateway's spans, the transactions process's
 * (the TCP call, the provider call, the publish to Kafka) and the webhooks process's (the Kafka consume, the
 * delivery), each process under its own `service.name`; the gateway's and the webhooks process's log lines carry the
 * request id.
 */
import { describeWithInfra, signToken } from '@switchyard/testing';
import { TEST_PANS } from '../../services/standalone/src/transactions.harness';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import { distributedInfrastructure, startDistributedRuntime, type DistributedRuntime } from '../distributed.fixture';
import { CLIENT, CONSUMER, OtlpCollector, PRODUCER, SERVER, type ExportedSpan } from './otlp-collector';

const infrastructure = await distributedInfrastructure();
const account = 'observed-distributed';
const requestId = 'distributed-trace-0001';

describeWithInfra('a payment traced through the distributed runtime', infrastructure, () => {
  const collector = new OtlpCollector();
  const receiver = new WebhookReceiver();
  let runtime: DistributedRuntime;
  let token: string;
  let transactionId: string;

  const send = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${runtime.baseUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'x-service-merchant-account-id': account,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
    return { body: JSON.parse(text) as Record<string, unknown>, headers: response.headers };
  };

  const deliverySpan = () =>
    collector.spans.find(
      (span) =>
        span.name === 'webhook delivery' &&
        span.attributes['webhook.resource_id'] === transactionId &&
        span.attributes['webhook.event_name'] === 'transaction.authorized',
    );

  beforeAll(async () => {
    const endpoint = await collector.start();
    await receiver.up();
    runtime = await startDistributedRuntime({
      name: 'tracing',
      mockCard: true,
      logLevel: 'info',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, WEBHOOK_WORKER_INTERVAL_MS: '20', POLL_INTERVAL_MS: '20' },
    });
    const key = await runtime.createApiKey('admin', ['administrator']);
    token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 600 });
    await send('POST', '/merchant-accounts', { id: account, display_name: 'Observed' });
    await send('POST', '/payment-services', {
      display_name: 'Card simulator',
      payment_service_definition_id: 'mock-card',
      fields: [{ key: 'merchant_id', value: 'sim-observed' }],
      accepted_currencies: ['USD'],
      accepted_countries: ['US'],
    });
    await send('POST', '/webhook-subscriptions', { url: receiver.url, event_names: ['transaction.authorized'] });

    const paid = await send(
      'POST',
      '/transactions',
      {
        amount: 4_200,
        currency: 'USD',
        payment_method: { method: 'card', number: TEST_PANS[0], expiration_date: '11/30', security_code: '737' },
      },
      { 'x-request-id': requestId },
    );
    expect(paid.body.status).toBe('authorization_succeeded');
    expect(paid.headers.get('x-request-id')).toBe(requestId);
    transactionId = paid.body.id as string;
    await receiver.waitFor(
      'the transaction.authorized webhook',
      () => receiver.succeeded.some((hook) => (hook.event.target as { id?: string }).id === transactionId),
      30_000,
      () => runtime.describe(),
    );
    // Each process exports its spans in batches every 5 s.
    const deadline = Date.now() + 20_000;
    while (!deliverySpan() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    // The request's spans end before the delivery's: give the other processes' next batch a moment too.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
  }, 180_000);

  afterAll(async () => {
    await runtime?.stop();
    await receiver.down();
    await collector.stop();
  });

  it('links the gateway, the transactions process and the webhooks process under one trace id', () => {
    const delivery = deliverySpan();
    expect(
      delivery,
      `no delivery span; spans: ${collector.spans.map((span) => `${span.service}/${span.name}`).join(', ')}`,
    ).toBeDefined();
    const trace = collector.spans.filter((span) => span.traceId === delivery!.traceId);
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const parentOf = (span: ExportedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
    const ancestry = (span: ExportedSpan): ExportedSpan[] => {
      const chain: ExportedSpan[] = [];
      for (let parent = parentOf(span); parent; parent = parentOf(parent)) chain.push(parent);
      return chain;
    };
    const named = (service: string, name: string) =>
      trace.filter((span) => span.service === service && span.name === name);

    const gateway = named('gateway', 'POST /transactions')[0]!;
    expect(gateway).toMatchObject({ kind: SERVER, parentSpanId: undefined });
    expect(gateway.attributes['request.id']).toBe(requestId);
    // Over TCP: the gateway's client span, then the transactions process's server span.
    const call = named('gateway', 'transactions.create')[0]!;
    expect(call).toMatchObject({ kind: CLIENT, parentSpanId: gateway.spanId });
    const handling = named('transactions', 'transactions.create')[0]!;
    expect(handling).toMatchObject({ kind: SERVER, parentSpanId: call.spanId });
    const providerHttp = named('transactions', 'POST /v1/authorizations')[0]!;
    expect(ancestry(providerHttp)).toContain(handling);
    // Over Kafka: published by the transactions relay, consumed by the webhooks process, then delivered.
    const consume = parentOf(delivery!)!;
    expect(consume).toMatchObject({ service: 'webhooks', name: 'process transactions.events', kind: CONSUMER });
    const publish = parentOf(consume)!;
    expect(publish).toMatchObject({ service: 'transactions', name: 'publish transactions.events', kind: PRODUCER });
    expect(ancestry(publish)).toContain(handling);
    expect(delivery!.service).toBe('webhooks');
  });

  it('puts the request id on the gateway’s line of the request and the webhooks process’s line of its delivery', () => {
    const lines = (output: string) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const gatewayLine = lines(runtime.processes.gateway!.output()).find(
      (line) => line.msg === 'request completed' && line.route === '/transactions',
    );
    expect(gatewayLine).toMatchObject({
      name: 'gateway',
      request_id: requestId,
      correlation_id: requestId,
      status: 201,
    });
    const deliveryLine = lines(runtime.processes.webhooks!.output()).find(
      (line) => line.msg === 'webhook delivery attempted' && line.resource_id === transactionId,
    );
    expect(deliveryLine).toMatchObject({
      name: 'webhooks',
      request_id: requestId,
      correlation_id: requestId,
      outcome: 'succeeded',
    });
    expect(deliveryLine?.trace_id).toBe(gatewayLine?.trace_id);
  });

  it('exports and logs no card number', () => {
    const everything = [
      ...collector.bodies,
      ...Object.values(runtime.processes).map((process) => process.output()),
    ].join('\n');
    for (const pan of TEST_PANS) expect(everything).not.toContain(pan);
  });
});
