/**
 * The webhooks service as its own process (distributed runtime): serves RPC over NestJS TCP, keeps its read models
 * from its event store, consumes the other services' topics from Kafka to deliver webhooks, calls identity and
 * transactions over TCP to render what it delivers, and relays its own events to Kafka (`webhooks.events`).
 */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { startTracing } from '@switchyard/telemetry';
import { startMetricsServer } from '@switchyard/metrics';
import { openServiceStorage } from '@switchyard/readmodel';
import { loadRpcCredentials, RoutingRpcClient } from '@switchyard/rpc';
import { startTcpRpcServer, TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';

import { WebhooksService, webhooksOptionsFrom } from './webhooks-service';
import { webhooksRelay } from './webhooks-relay';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('webhooks', settings);
  const credentials = loadRpcCredentials('webhooks', settings);
  const tracing = startTracing('webhooks', settings);
  const storage = openServiceStorage('webhooks', { dataDir: settings.dataDir, eventStoreUrl: settings.EVENTSTORE_URL });
  // The ingest waits on other services (a render RPC per event): partitions are handled side by side, so one slow
  // render holds back only its partition (a resource's events share one, so they stay in order). 6: the partitions
  // of transactions.events (docs/operations.md, Kafka topics).
  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'webhooks',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    batchWindowMs: settings.KAFKA_BATCH_WINDOW_MS,
    partitionsConsumedConcurrently: 6,
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const rpc = new RoutingRpcClient({
    identity: TcpRpcClient.fromUrl(settings.IDENTITY_RPC_URL, 'identity', credentials, settings.RPC_TIMEOUT_MS),
    transactions: TcpRpcClient.fromUrl(
      settings.TRANSACTIONS_RPC_URL,
      'transactions',
      credentials,
      settings.RPC_TIMEOUT_MS,
    ),
  });
  const webhooks = new WebhooksService({
    store: storage.store,
    db: storage.db,
    bus,
    rpc,
    ...webhooksOptionsFrom(settings, (error, what) => log.warn({ err: error }, `webhooks: ${what}`)),
    log,
  });
  await webhooks.start();

  const relay = webhooksRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, 'relay to Kafka failed; retrying from its checkpoint'),
  });
  relay.start();

  const server = await startTcpRpcServer(settings.WEBHOOKS_RPC_URL, webhooks.rpcHandlers(), {
    credentials,
    onUnexpected: (error) => log.error({ err: error }, 'RPC handler failed'),
    onRefused: (refusal) => log.warn({ refusal }, 'RPC call refused'),
  });
  log.info(
    {
      node: process.version,
      rpc: settings.WEBHOOKS_RPC_URL,
      dataDir: settings.dataDir,
      allowPrivateUrls: settings.WEBHOOK_ALLOW_PRIVATE_URLS,
    },
    'webhooks service listening',
  );
  const metrics =
    settings.METRICS_ENABLED && settings.METRICS_PORT !== undefined
      ? await startMetricsServer({ host: settings.HOST, port: settings.METRICS_PORT })
      : null;
  if (metrics) log.info({ url: metrics.url }, 'metrics served');

  stopOnSignals(log, async () => {
    await metrics?.close();
    await server.close();
    await relay.stop();
    await webhooks.stop();
    await Promise.allSettled([rpc.close(), bus.close()]);
    await storage.close();
    await tracing.shutdown();
  });
});
