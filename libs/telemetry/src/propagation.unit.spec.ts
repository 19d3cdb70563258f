/** Which ids are taken from outside, and what travels with a call, a message or an event while tracing is off. */
import { consumeMessage, contextFromHeaders, contextHeaders, eventMetadata, traceOutgoingMessage } from './propagation';
import { acceptableId, currentContext, logFields, runWithContext } from './request-context';
import { parseOtlpHeaders, tracesUrl, tracingEnabled } from './tracing';

describe('ids from outside', () => {
  it.each(['req-1', '7f3c9a1e-0d52-4b8e-9a4f-2c6b1d8e5a70', 'Root.1:abc_def', 'a'.repeat(128)])('takes %s', (id) => {
    expect(acceptableId(id)).toBe(id);
  });

  it.each([
    undefined,
    '',
    ' spaced',
    'has space',
    'a'.repeat(129),
    '-leading-dash',
    'new\nline',
    '4111111111111111',
    'order-4111111111111111',
    42,
  ])('refuses %j', (id) => {
    expect(acceptableId(id)).toBeUndefined();
  });
});

describe('the context while tracing is off', () => {
  const request = { requestId: 'req-1', correlationId: 'req-1', causationId: 'req-1' };

  it('is off without an endpoint', () => {
    expect(tracingEnabled()).toBe(false);
    expect(tracesUrl({})).toBeUndefined();
  });

  it('gives log lines the ids of the work they are written in, and none outside', () => {
    expect(logFields()).toEqual({});
    expect(runWithContext(request, () => logFields())).toEqual({ request_id: 'req-1', correlation_id: 'req-1' });
  });

  it('sends the ids along, without a traceparent, and reads them back', () => {
    const headers = runWithContext(request, () => contextHeaders());
    expect(headers).toEqual({ 'request-id': 'req-1', 'correlation-id': 'req-1', 'causation-id': 'req-1' });
    expect(contextFromHeaders(headers)).toEqual(request);
  });

  it('records the correlation and causation ids in the metadata of the events appended', () => {
    expect(eventMetadata()).toEqual({});
    expect(runWithContext(request, () => eventMetadata())).toEqual({ correlationId: 'req-1', causationId: 'req-1' });
  });

  it('attributes a message to the request that started its chain, caused by its event', async () => {
    const outgoing = traceOutgoingMessage('transactions.events', 'evt-1', {
      correlationId: 'req-1',
      causationId: 'req-1',
    });
    expect(outgoing.headers).toEqual({ 'correlation-id': 'req-1' });
    const seen = await consumeMessage(
      { topic: 'transactions.events', headers: { ...outgoing.headers, 'event-id': 'evt-1' } },
      'webhooks',
      async () => currentContext(),
    );
    expect(seen).toEqual({ requestId: 'req-1', correlationId: 'req-1', causationId: 'evt-1' });
  });

  it('drops ids that are not well-formed', () => {
    expect(contextFromHeaders({ 'request-id': 'bad id', 'correlation-id': '4111111111111111' })).toEqual({});
  });
});

describe('OTLP settings', () => {
  it('sends to <endpoint>/v1/traces unless the traces endpoint is given', () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      tracesUrl({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other/traces',
      }),
    ).toBe('http://other/traces');
  });

  it('reads OTEL_EXPORTER_OTLP_HEADERS', () => {
    expect(parseOtlpHeaders('api-key=a%3Db, x-team = payments ,broken')).toEqual({
      'api-key': 'a=b',
      'x-team': 'payments',
    });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});
