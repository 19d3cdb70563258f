/**
 * The identity service as its own process (distributed runtime): serves RPC over NestJS TCP, keeps its read models
 * from its event store, and relays its events to Kafka (`identity.events`).
 */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import {
  createLogger,
  holdDataDirReader,
  kafkaBrokers,
  loadSettings,
  runMain,
  stopOnSignals,
} from '@switchyard/config';
import { startTracing } from '@switchyard/telemetry';
import { startMetricsServer } from '@switchyard/metrics';
import { openServiceStorage } from '@switchyard/readmodel';
import { loadRpcCredentials } from '@switchyard/rpc';
import { startTcpRpcServer } from '@switchyard/rpc/src/tcp-rpc';
import { IdentityService } from './identity-service';
import { identityRelay } from './identity-relay';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('identity', settings);
  // Before anything else: without credentials the service would start only to refuse every call.
  const credentials = loadRpcCredentials('identity', settings);
  const tracing = startTracing('identity', settings);
  const storage = openServiceStorage('identity', { dataDir: settings.dataDir, eventStoreUrl: settings.EVENTSTORE_URL });
  const identity = new IdentityService({
    store: storage.store,
    db: storage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
  });
  await identity.start();

  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'identity',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const relay = identityRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, 'relay to Kafka failed; retrying from its checkpoint'),
  });
  relay.start();

  const server = await startTcpRpcServer(settings.IDENTITY_RPC_URL, identity.rpcHandlers(), {
    credentials,
    onUnexpected: (error) => log.error({ err: error }, 'RPC handler failed'),
    onRefused: (refusal) => log.warn({ refusal }, 'RPC call refused'),
  });
  log.info(
    { node: process.version, rpc: settings.IDENTITY_RPC_URL, dataDir: settings.dataDir },
    'identity service listening',
  );
  // Without EventStoreDB, the CLI writes keys into this data directory: this file tells it a server reads them.
  const releaseDataDir = settings.EVENTSTORE_URL ? () => undefined : holdDataDirReader(settings.dataDir, 'identity');
  const metrics =
    settings.METRICS_ENABLED && settings.METRICS_PORT !== undefined
      ? await startMetricsServer({ host: settings.HOST, port: settings.METRICS_PORT })
      : null;
  if (metrics) log.info({ url: metrics.url }, 'metrics served');

  stopOnSignals(log, async () => {
    await metrics?.close();
    await server.close();
    await relay.stop();
    await identity.stop();
    await bus.close();
    await storage.close();
    await tracing.shutdown();
    releaseDataDir();
  });
});
