/** The gateway as its own process (distributed runtime): HTTP in front, the services over TCP, Kafka, Redis. */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { startTracing } from '@switchyard/telemetry';
import { FallbackRateLimiter, InMemoryRateLimiter, RedisKeyValueStore, RedisRateLimiter } from '@switchyard/kv';
import { loadRpcCredentials, RoutingRpcClient } from '@switchyard/rpc';
import { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import { dashboardSettingsFrom } from './dashboard';
import { startGateway } from './start-gateway';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('gateway', settings);
  const credentials = loadRpcCredentials('gateway', settings);
  const tracing = startTracing('gateway', settings);
  const rpc = new RoutingRpcClient({
    identity: TcpRpcClient.fromUrl(settings.IDENTITY_RPC_URL, 'identity', credentials, settings.RPC_TIMEOUT_MS),
    transactions: TcpRpcClient.fromUrl(
      settings.TRANSACTIONS_RPC_URL,
      'transactions',
      credentials,
      settings.RPC_TIMEOUT_MS,
    ),
    vault: TcpRpcClient.fromUrl(settings.VAULT_RPC_URL, 'vault', credentials, settings.RPC_TIMEOUT_MS),
    'gift-cards': TcpRpcClient.fromUrl(settings.GIFT_CARDS_RPC_URL, 'gift-cards', credentials, settings.RPC_TIMEOUT_MS),
    webhooks: TcpRpcClient.fromUrl(settings.WEBHOOKS_RPC_URL, 'webhooks', credentials, settings.RPC_TIMEOUT_MS),
  });
  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'gateway',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const redis = new RedisKeyValueStore({ url: settings.REDIS_URL });
  // The enumeration rate limit, shared by every gateway through Redis; while Redis is unreachable each gateway limits
  // on its own (fails open to limit × gateway processes, docs/rate-limits.md), warning at most once a minute.
  const redisRateLimiter = new RedisRateLimiter({ url: settings.REDIS_URL });
  const localRateLimiter = new InMemoryRateLimiter();
  const rateLimiter = new FallbackRateLimiter({
    primary: redisRateLimiter,
    fallback: localRateLimiter,
    onFallback: ({ error, decidedLocally }) =>
      log.warn(
        { err: error, decidedLocally },
        'Redis unreachable: enumeration rate limits are decided by this gateway process alone',
      ),
    onRecovered: ({ decidedLocally }) =>
      log.info({ decidedLocally }, 'Redis reachable again: enumeration rate limits are shared again'),
  });
  const gateway = await startGateway({
    rpc,
    bus,
    sharedCache: redis,
    dashboard: dashboardSettingsFrom(settings),
    rateLimiter,
    enumerationLimitPerMinute: settings.ENUMERATION_RATE_LIMIT_PER_MINUTE,
    clockSkewSeconds: settings.JWT_CLOCK_SKEW_SECONDS,
    keyUsageFlushMs: settings.KEY_USAGE_FLUSH_MS,
    jwtVerifyWorkers: settings.JWT_VERIFY_WORKERS,
    trustedProxies: settings.TRUSTED_PROXIES,
    metricsEnabled: settings.METRICS_ENABLED,
    ...(settings.METRICS_PORT !== undefined ? { metrics: { host: settings.HOST, port: settings.METRICS_PORT } } : {}),
    log,
    onError: (error, what) => log.error({ err: error }, what),
  });
  await gateway.app.listen(settings.PORT, settings.HOST);
  log.info(
    {
      node: process.version,
      port: settings.PORT,
      host: settings.HOST,
      identity: settings.IDENTITY_RPC_URL,
      transactions: settings.TRANSACTIONS_RPC_URL,
      giftCards: settings.GIFT_CARDS_RPC_URL,
      vault: settings.VAULT_RPC_URL,
      webhooks: settings.WEBHOOKS_RPC_URL,
    },
    'gateway listening',
  );

  stopOnSignals(log, async () => {
    await gateway.stop();
    await Promise.allSettled([
      rpc.close(),
      bus.close(),
      redis.close(),
      redisRateLimiter.close(),
      localRateLimiter.close(),
    ]);
    await tracing.shutdown();
  });
});
