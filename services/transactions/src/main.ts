/**
 * The transactions service as its own process (distributed runtime): serves RPC over NestJS TCP, keeps its read
 * models from its event store, and relays its events to Kafka (`transactions.events`). It holds no card data and no
 * vault key: the vault is a process of its own (services/vault/src/main.ts), asked over RPC (`vaultOverRpc`: its port,
 * the outbound forwarder that makes every card-bearing provider call, the keys it hands over at this one's start; it
 * asks back for the card connections, `vaultDirectoryRpcHandlers`). The gift cards service is a process of its own
 * too (services/gift-cards/src/main.ts): this one asks it for a split payment's stored cards (`giftCardsOverRpc`) and
 * serves it the merchant accounts' gift card services and the key hand-over (`giftCardDirectoryRpcHandlers`).
 */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { startTracing } from '@switchyard/telemetry';
import { startMetricsServer } from '@switchyard/metrics';
import { openServiceStorage } from '@switchyard/readmodel';
import { loadRpcCredentials, RoutingRpcClient } from '@switchyard/rpc';
import { startTcpRpcServer, TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import {
  giftCardsOverRpc,
  merchantAccountsOverRpc,
  TransactionsService,
  transactionsOptionsFrom,
} from './transactions-service';
import { transactionsRelay } from './transactions-relay';
import { vaultDirectoryRpcHandlers, vaultOverRpc } from './vault-over-rpc';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('transactions', settings);
  const credentials = loadRpcCredentials('transactions', settings);
  const tracing = startTracing('transactions', settings);
  const storage = openServiceStorage('transactions', {
    dataDir: settings.dataDir,
    eventStoreUrl: settings.EVENTSTORE_URL,
  });
  // Merchant account settings (network tokens, account updater) are the identity service's: asked when used.
  const rpc = new RoutingRpcClient({
    identity: TcpRpcClient.fromUrl(settings.IDENTITY_RPC_URL, 'identity', credentials, settings.RPC_TIMEOUT_MS),
    'gift-cards': TcpRpcClient.fromUrl(settings.GIFT_CARDS_RPC_URL, 'gift-cards', credentials, settings.RPC_TIMEOUT_MS),
  });
  const transactionsOptions = transactionsOptionsFrom(settings, {
    publicBaseUrl: () => settings.PUBLIC_BASE_URL ?? `http://127.0.0.1:${settings.PORT}`,
    ...(settings.MOCK_CARD_URL && settings.MOCK_CARD_WEBHOOK_SECRET
      ? { mockCard: { baseUrl: settings.MOCK_CARD_URL, webhookSecret: settings.MOCK_CARD_WEBHOOK_SECRET } }
      : {}),
  });
  // The vault's process: its keys handed over first (asked until it answers; it moves its data out of this
  // service's file before it answers, so this service starts on what is left).
  const forwardRpc = TcpRpcClient.fromUrl(
    settings.VAULT_RPC_URL,
    'vault',
    credentials,
    Math.max(settings.PROVIDER_TIMEOUT_MS, settings.MOCK_CARD_TIMEOUT_MS) + settings.RPC_TIMEOUT_MS,
  );
  const vaultRpc = TcpRpcClient.fromUrl(settings.VAULT_RPC_URL, 'vault', credentials, settings.RPC_TIMEOUT_MS);
  const vault = await vaultOverRpc({
    rpc: vaultRpc,
    forwardRpc,
    retryMs: 1_000,
    onRetry: (error) => log.warn({ err: error }, 'the vault service has not handed over its keys yet; asking again'),
  });
  const transactions = new TransactionsService({
    merchantAccounts: merchantAccountsOverRpc(rpc),
    store: storage.store,
    db: storage.db,
    vault,
    // Outside the card data environment: a card number reaches this process only by mistake, and is refused.
    cardDataByHandOverOnly: true,
    ...transactionsOptions,
    onBackgroundError: (error) => log.warn({ err: error }, 'transactions background work failed'),
  });
  await transactions.start();
  // A split payment's stored gift cards: asked of the gift cards process when used (a 502 while it is down).
  transactions.useGiftCards(giftCardsOverRpc(rpc));

  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'transactions',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const relay = transactionsRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, 'relay to Kafka failed; retrying from its checkpoint'),
  });
  // Split tender: the gift cards service's answers to the redemptions asked of it (before the relay publishes any).
  await transactions.followGiftCardOutcomes({
    bus,
    groupId: `${settings.TRANSACTIONS_CONSUMER_GROUP}.gift-card-outcomes`,
  });
  relay.start();

  const server = await startTcpRpcServer(
    settings.TRANSACTIONS_RPC_URL,
    {
      ...transactions.rpcHandlers(),
      ...transactions.giftCardDirectoryRpcHandlers(),
      ...vaultDirectoryRpcHandlers(transactions.paymentServices),
    },
    {
      credentials,
      onUnexpected: (error) => log.error({ err: error }, 'RPC handler failed'),
      onRefused: (refusal) => log.warn({ refusal }, 'RPC call refused'),
    },
  );
  log.info(
    { node: process.version, rpc: settings.TRANSACTIONS_RPC_URL, dataDir: settings.dataDir },
    'transactions service listening',
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
    await transactions.stop();
    await Promise.allSettled([rpc.close(), vaultRpc.close(), forwardRpc.close(), bus.close()]);
    await storage.close();
    await tracing.shutdown();
  });
});
