/** The gateway as its own process (distributed runtime): HTTP in front, the services over TCP, Kafka, Redis. */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { RedisKeyValueStore } from '@switchyard/kv';
import { RoutingRpcClient, TcpRpcClient } from '@switchyard/rpc';
import { startGateway } from './start-gateway';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('gateway', settings);
  const rpc = new RoutingRpcClient({
    identity: TcpRpcClient.fromUrl(settings.IDENTITY_RPC_URL, settings.RPC_TIMEOUT_MS),
    transactions: TcpRpcClient.fromUrl(settings.TRANSACTIONS_RPC_URL, settings.RPC_TIMEOUT_MS),
    webhooks: TcpRpcClient.fromUrl(settings.WEBHOOKS_RPC_URL, settings.RPC_TIMEOUT_MS),
  });
  const bus = new KafkaMessageBus({ brokers: kafkaBrokers(settings), clientId: 'gateway' });
  const redis = new RedisKeyValueStore({ url: settings.REDIS_URL });
  const gateway = await startGateway({ rpc, bus, sharedCache: redis, clockSkewSeconds: settings.JWT_CLOCK_SKEW_SECONDS, keyUsageFlushMs: settings.KEY_USAGE_FLUSH_MS, onError: (error, what) => log.error({ err: error }, what) });
  await gateway.app.listen(settings.PORT, settings.HOST);
  log.info({ port: settings.PORT, host: settings.HOST, identity: settings.IDENTITY_RPC_URL, transactions: settings.TRANSACTIONS_RPC_URL, webhooks: settings.WEBHOOKS_RPC_URL }, 'gateway listening');

  stopOnSignals(log, async () => {
    await gateway.stop();
    await Promise.allSettled([rpc.close(), bus.close(), redis.close()]);
  });
});
