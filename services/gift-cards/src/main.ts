/**
 * The gift cards service as its own process (distributed runtime): serves `gift-cards.*` over NestJS TCP on its own
 * certificate, keeps its store (DATA_DIR/gift-cards.db) and relays it to `gift-cards.events`, and follows
 * `transactions.events` for the stored cards' usage.
 *
 * Its couplings with the transactions process, over RPC (rpc-services admits each side for these patterns only):
 * - the key hand-over at start (`gift-card-directory.keys`): the legacy key and the Idempotency-Key fingerprint key,
 *   derived from the transactions service's vault root; asked again until the transactions process answers;
 * - the merchant accounts' gift card services (`gift-card-directory.*`): the connector is built here;
 * - a split payment's stored cards (`gift-cards.describe`, `gift-cards.belongs-to`), which it asks of this one;
 * - and over Kafka: split tender's redemption requests from `transactions.events`, answered on `gift-cards.events`.
 *
 * The first start moves gift cards out of transactions.db (`openGiftCardsStorage`): only after the key hand-over, so
 * the transactions service is up and its vault root settled before the moved rows leave its file.
 */
import 'reflect-metadata';
import path from 'node:path';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import { compareEventStoreDbPositions, compareSqlitePositions, EventStoreDbEventStore } from '@switchyard/eventstore';
import { startMetricsServer } from '@switchyard/metrics';
import { loadRpcCredentials } from '@switchyard/rpc';
import { startTcpRpcServer, TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import { startTracing } from '@switchyard/telemetry';
import { giftCardKeysOverRpc, giftCardServicesOverRpc } from './gift-cards/gift-card-services-over-rpc';
import { GiftCardsService } from './gift-cards-service';
import { giftCardsRelay } from './gift-cards-relay';
import { openGiftCardsStorage } from './gift-cards-storage';
import { loadGiftCardsKey } from './vault/gift-cards-key';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('gift-cards', settings);
  const credentials = loadRpcCredentials('gift-cards', settings);
  const tracing = startTracing('gift-cards', settings);
  const transactions = TcpRpcClient.fromUrl(
    settings.TRANSACTIONS_RPC_URL,
    'transactions',
    credentials,
    settings.RPC_TIMEOUT_MS,
  );
  // The key hand-over: nothing of the keys is logged, only that the transactions process is not there yet.
  const keys = await giftCardKeysOverRpc(transactions, {
    retryMs: 1_000,
    onRetry: (error) =>
      log.warn({ err: error }, 'the transactions service has not handed over the gift card keys yet; asking again'),
  });

  // Older releases kept gift cards in the transactions store: in EventStoreDB mode its node, read once.
  const transactionEvents = settings.TRANSACTIONS_EVENTSTORE_URL
    ? EventStoreDbEventStore.connect(settings.TRANSACTIONS_EVENTSTORE_URL)
    : undefined;
  const storage = await openGiftCardsStorage({
    dataDir: settings.dataDir,
    ...(transactionEvents ? { transactionEvents } : {}),
  }).finally(() => transactionEvents?.close());
  if (storage.migration.ran && storage.migration.copied > 0)
    log.info({ migration: storage.migration }, 'gift cards moved to their own store');

  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'gift-cards',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    batchWindowMs: settings.KAFKA_BATCH_WINDOW_MS,
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const giftCards = new GiftCardsService({
    store: storage.store,
    db: storage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    key: loadGiftCardsKey({ configured: settings.GIFT_CARDS_KEY, dataDir: settings.dataDir }),
    ...keys,
    services: giftCardServicesOverRpc(transactions, {
      ...(settings.MOCK_CARD_URL
        ? { mockCard: { baseUrl: settings.MOCK_CARD_URL, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS } }
        : {}),
    }),
    transactionsTopic: {
      bus,
      groupId: settings.GIFT_CARDS_CONSUMER_GROUP,
      comparePositions: settings.TRANSACTIONS_EVENTSTORE_URL ? compareEventStoreDbPositions : compareSqlitePositions,
    },
    onError: (error, what) => log.warn({ err: error }, `gift cards: ${what}`),
    handOverTtlMs: settings.GIFT_CARD_HAND_OVER_TTL_MS,
  });
  // The stored cards' usage before this process followed transactions.events: folded once from the transactions
  // service's file when it is here (SQLite mode, one DATA_DIR), only read.
  if (
    !settings.TRANSACTIONS_EVENTSTORE_URL &&
    (await giftCards.foldUsageFrom(path.join(settings.dataDir, 'transactions.db')))
  )
    log.info('the stored gift cards’ usage folded from the transactions store');
  await giftCards.start();

  const relay = giftCardsRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, 'relay to Kafka failed; retrying from its checkpoint'),
  });
  relay.start();

  const server = await startTcpRpcServer(
    settings.GIFT_CARDS_RPC_URL,
    { ...giftCards.rpcHandlers(), ...giftCards.paymentRpcHandlers() },
    {
      credentials,
      onUnexpected: (error) => log.error({ err: error }, 'RPC handler failed'),
      onRefused: (refusal) => log.warn({ refusal }, 'RPC call refused'),
    },
  );
  log.info(
    { node: process.version, rpc: settings.GIFT_CARDS_RPC_URL, dataDir: settings.dataDir },
    'gift cards service listening',
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
    await giftCards.stop();
    await Promise.allSettled([transactions.close(), bus.close()]);
    await storage.close();
    await tracing.shutdown();
  });
});
