/**
 * Gateway → service round trip over NestJS microservice transports: TCP, Redis (pub/sub) and Kafka
 * (request/reply topics). Each transport serves one echo handler on loopback; the client sends sequential
 * requests (concurrency 1) and 16 at a time. Prints p50/p99 latency and requests/s per transport.
 *
 *   node -r ./scripts/register.cjs bench/rpc-transports.bench.ts [--requests 2000] [--only tcp,redis,kafka]
 */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
  type ClientOptions,
  type ClientProxy,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';

const argValue = (name: string) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const REQUESTS = Number(argValue('--requests') ?? 2000);
const ONLY = (argValue('--only') ?? 'tcp,redis,kafka').split(',');
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

@Controller()
class EchoController {
  @MessagePattern('bench.echo')
  echo(@Payload() payload: unknown) {
    return { ok: true, value: payload };
  }
}
@Module({ controllers: [EchoController] })
class EchoModule {}

type Transports = Record<string, { server: MicroserviceOptions; client: ClientOptions }>;
const runId = Date.now();
const transports: Transports = {
  tcp: {
    server: { transport: Transport.TCP, options: { host: '127.0.0.1', port: 4901 } },
    client: { transport: Transport.TCP, options: { host: '127.0.0.1', port: 4901 } },
  },
  redis: {
    server: { transport: Transport.REDIS, options: { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) } },
    client: { transport: Transport.REDIS, options: { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) } },
  },
  kafka: {
    server: {
      transport: Transport.KAFKA,
      options: {
        client: { clientId: `bench-server-${runId}`, brokers, logLevel: 1 },
        consumer: { groupId: `bench-server-${runId}`, maxWaitTimeInMs: 10 },
      },
    },
    client: {
      transport: Transport.KAFKA,
      options: {
        client: { clientId: `bench-client-${runId}`, brokers, logLevel: 1 },
        consumer: { groupId: `bench-client-${runId}`, maxWaitTimeInMs: 10 },
      },
    },
  },
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function measure(client: ClientProxy, concurrency: number, requests: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next += 1;
        const t0 = process.hrtime.bigint();
        await firstValueFrom(client.send('bench.echo', { kid: 'x'.repeat(86) }));
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: requests / seconds };
}

async function main() {
  const rows: string[] = [];
  for (const name of ONLY) {
    const transport = transports[name];
    if (!transport) continue;
    if (name === 'kafka') {
      // Nest's Kafka client needs the request topic and its `.reply` topic before it subscribes.
      const { Kafka, logLevel } = await import('kafkajs');
      const admin = new Kafka({ clientId: `bench-admin-${runId}`, brokers, logLevel: logLevel.ERROR }).admin();
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic: 'bench.echo' }, { topic: 'bench.echo.reply' }],
        waitForLeaders: true,
      });
      await admin.disconnect();
    }
    const server = await NestFactory.createMicroservice<MicroserviceOptions>(EchoModule, {
      ...transport.server,
      logger: ['error'],
    });
    await server.listen();
    const client = ClientProxyFactory.create(transport.client) as ClientProxy & {
      subscribeToResponseOf?: (pattern: string) => void;
    };
    client.subscribeToResponseOf?.('bench.echo');
    await client.connect();
    const requests = name === 'kafka' ? Math.min(REQUESTS, 500) : REQUESTS;
    await measure(client, 4, Math.min(200, requests)); // warm-up
    for (const concurrency of [1, 16]) {
      const result = await measure(client, concurrency, requests);
      rows.push(
        `| ${name.padEnd(5)} | ${String(concurrency).padStart(2)} | ${String(requests).padStart(5)} | ${result.p50.toFixed(3).padStart(7)} | ${result.p99.toFixed(3).padStart(7)} | ${result.rps.toFixed(0).padStart(6)} |`,
      );
    }
    await client.close();
    await server.close();
  }
  console.log('| transport | concurrency | requests | p50 ms | p99 ms | req/s |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  process.exit(0);
}

void main();
