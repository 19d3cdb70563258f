/**
 * A call over TCP carries the caller's context: the handler runs with the request and correlation ids of the request
 * that made the call and, when tracing, in a server span of the caller's trace. A bare payload is still served.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientTCP } from '@nestjs/microservices';
import { currentContext, runWithContext, startSpan, startTracing, type Tracing } from '@switchyard/telemetry';
import { freePort, rpcCredentialsForTests } from '@switchyard/testing';
import { firstValueFrom } from 'rxjs';
import { clientTlsOptions, startTcpRpcServer, TcpRpcClient } from './tcp-rpc';
import type { RpcCredentials } from './rpc-credentials';
import type { RpcReply } from './rpc';

let server: { close(): Promise<void> };
let client: TcpRpcClient;
let port: number;
let tracing: Tracing;
let gateway: RpcCredentials;
/** A pattern the gateway may call on webhooks (`webhooks.*`). */
const PATTERN = 'webhooks.spec-context';
/** Takes the spans and drops them. */
const collector = http.createServer((request, response) =>
  request.resume().on('end', () => response.writeHead(200).end('{}')),
);

const seen = () => {
  const context = currentContext();
  return {
    requestId: context.requestId ?? null,
    correlationId: context.correlationId ?? null,
    traceId: context.span?.spanContext().traceId ?? null,
  };
};

beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  tracing = startTracing('rpc-spec', {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  });
  port = await freePort();
  const credentials = await rpcCredentialsForTests();
  gateway = credentials.of('gateway');
  server = await startTcpRpcServer(
    `tcp://127.0.0.1:${port}`,
    { [PATTERN]: async (payload) => ({ payload, ...seen() }) },
    {
      credentials: credentials.of('webhooks'),
      onUnexpected: () => undefined,
      onRefused: () => undefined,
    },
  );
  client = new TcpRpcClient({ host: '127.0.0.1', port, service: 'webhooks', credentials: gateway, timeoutMs: 5_000 });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await tracing?.shutdown();
  await new Promise((resolve) => collector.close(resolve));
});

it('runs the handler in the caller’s request, correlation and trace', async () => {
  const requestSpan = startSpan('request', { parent: null });
  const answer = await runWithContext(
    { requestId: 'req-42', correlationId: 'req-42', causationId: 'req-42', span: requestSpan },
    () =>
      client.call<{ payload: unknown; requestId: string; correlationId: string; traceId: string }>(PATTERN, { n: 1 }),
  );
  requestSpan.end();
  expect(answer).toEqual({
    payload: { n: 1 },
    requestId: 'req-42',
    correlationId: 'req-42',
    traceId: requestSpan.spanContext().traceId,
  });
});

it('serves a call made outside any request with no ids', async () => {
  expect(await client.call(PATTERN, null)).toMatchObject({ payload: null, requestId: null, correlationId: null });
});

it('still serves a bare payload (a client without the envelope)', async () => {
  const bare = new ClientTCP({ host: '127.0.0.1', port, tlsOptions: clientTlsOptions(gateway, 'webhooks') });
  try {
    const reply = await firstValueFrom(bare.send<RpcReply>(PATTERN, { n: 2 }));
    expect(reply).toMatchObject({ ok: true, value: { payload: { n: 2 }, requestId: null } });
  } finally {
    await bare.close();
  }
});
