/**
 * What mutual TLS costs a call between services (docs/architecture.md, "Authentication between services"): the same
 * NestJS TCP round trip with a ~1 KB payload, in plain TCP (the transport before issue 22) and in mutual TLS 1.3
 * (`startTcpRpcServer` with its allow-list check, a client with a service certificate). Client and server share this
 * process, so CPU per call is both ends together. Sequential calls (concurrency 1) for latency, 16 at a time for
 * throughput, then fresh connections (handshake + one call). Rounds interleave the two transports; medians printed.
 *
 *   node -r ./scripts/register.cjs bench/rpc-tls.bench.ts [--seconds 3] [--rounds 3]
 */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientTCP, MessagePattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { serveCall, type RpcHandler } from '@switchyard/rpc';
import { clientTlsOptions, startTcpRpcServer } from '@switchyard/rpc/src/tcp-rpc';
import { freePort } from '@switchyard/testing/src/probes';
import { rpcCredentialsForTests } from '@switchyard/testing/src/rpc-credentials';

const argValue = (name: string) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const SECONDS = Number(argValue('--seconds') ?? 3);
const ROUNDS = Number(argValue('--rounds') ?? 3);
const CONNECTIONS = 100;
const PATTERN = 'identity.bench-echo';
const payload = {
  merchant_account_id: 'default',
  body: {
    amount: 1299,
    currency: 'USD',
    metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, 'x'.repeat(24)])),
  },
};
const echo: RpcHandler = async (value) => value;

/** The transport as it was: plain Nest TCP, the envelope unwrapped by a controller, no caller check. */
@Controller()
class PlainController {
  @MessagePattern(PATTERN)
  handle(@Payload() data: { $context: Record<string, string>; payload: unknown }) {
    return serveCall(
      PATTERN,
      echo,
      data.payload,
      { caller: 'unauthenticated', actor: null },
      () => undefined,
      data.$context,
    );
  }
}
@Module({ controllers: [PlainController] })
class PlainModule {}

type Client = ClientTCP;
const call = (client: Client) => firstValueFrom(client.send(PATTERN, { $context: {}, payload }));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

async function sequential(client: Client) {
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end) {
    const start = performance.now();
    await call(client);
    latencies.push(performance.now() - start);
  }
  const cpuPerCall = cpuMicros(cpu) / latencies.length;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuPerCallMicros: cpuPerCall };
}

async function concurrent(client: Client) {
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < end) {
        await call(client);
        done += 1;
      }
    }),
  );
  return { perSecond: done / ((performance.now() - started) / 1000) };
}

async function connections(makeClient: () => Client) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CONNECTIONS; i += 1) {
    const client = makeClient();
    await call(client);
    await client.close();
  }
  return {
    msPerConnection: (performance.now() - started) / CONNECTIONS,
    cpuPerConnectionMicros: cpuMicros(cpu) / CONNECTIONS,
  };
}

async function main() {
  const credentials = await rpcCredentialsForTests();
  const [plainPort, tlsPort] = [await freePort(), await freePort()];
  const plain = await NestFactory.createMicroservice<MicroserviceOptions>(PlainModule, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: plainPort },
    logger: ['error'],
  });
  await plain.listen();
  const tls = await startTcpRpcServer(
    `tcp://127.0.0.1:${tlsPort}`,
    { [PATTERN]: echo },
    {
      credentials: credentials.of('identity'),
      onUnexpected: () => undefined,
      onRefused: (refusal) => console.error('refused', refusal),
    },
  );
  const makers = {
    plain: () => new ClientTCP({ host: '127.0.0.1', port: plainPort }),
    'mutual TLS': () =>
      new ClientTCP({
        host: '127.0.0.1',
        port: tlsPort,
        tlsOptions: clientTlsOptions(credentials.of('gateway'), 'identity'),
      }),
  };
  const results: Record<
    string,
    { p50: number[]; p99: number[]; cpu: number[]; perSecond: number[]; connect: number[]; connectCpu: number[] }
  > = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, make] of Object.entries(makers)) {
      const client = make();
      for (let i = 0; i < 200; i += 1) await call(client); // warm-up
      const seq = await sequential(client);
      const conc = await concurrent(client);
      await client.close();
      const conn = await connections(make);
      const entry = (results[name] ??= { p50: [], p99: [], cpu: [], perSecond: [], connect: [], connectCpu: [] });
      entry.p50.push(seq.p50);
      entry.p99.push(seq.p99);
      entry.cpu.push(seq.cpuPerCallMicros);
      entry.perSecond.push(conc.perSecond);
      entry.connect.push(conn.msPerConnection);
      entry.connectCpu.push(conn.cpuPerConnectionMicros);
    }
  }
  const bytes = JSON.stringify(payload).length;
  console.log(`node ${process.version}, ${SECONDS} s per cell, ${ROUNDS} rounds, medians; payload ${bytes} B`);
  const header = ['transport', 'p50 ms (c=1)', 'p99 ms (c=1)', 'CPU µs per call (both ends)', 'calls/s (c=16)'];
  header.push('new connection + 1 call, ms', 'its CPU µs');
  console.log(`| ${header.join(' | ')} |\n|${'---|'.repeat(header.length)}`);
  for (const [name, r] of Object.entries(results)) {
    const cells = [median(r.p50).toFixed(3), median(r.p99).toFixed(3), median(r.cpu).toFixed(0)];
    cells.push(median(r.perSecond).toFixed(0));
    cells.push(median(r.connect).toFixed(2), median(r.connectCpu).toFixed(0));
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  await plain.close();
  await tls.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
