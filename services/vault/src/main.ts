/**
 * The vault service as its own process (distributed runtime): the only process that holds card data and the vault's
 * keys. Serves `vault.*` to the gateway (buyers, payment methods, checkout sessions, network tokens, digital wallets,
 * the card hand-over of a `POST /transactions`) and its port to the transactions process (`vault-port.*`: card
 * summaries, aliases, the outbound forwarder for card-bearing provider calls, the key hand-over) over NestJS TCP on
 * its own certificate; keeps its store (DATA_DIR/vault.db) and relays it to `vault.events`; follows
 * `transactions.events` for the stored methods' usage; asks the transactions process for a merchant account's card
 * connections (network tokens) and identity for merchant account settings.
 *
 * The first start moves the vault's streams and card rows out of the transactions service's storage
 * (`openVaultStorage`) before it answers anyone: the transactions process waits for the key hand-over, and the gift
 * cards process for the transactions process's, so the vault root is settled before either moves anything.
 */
import 'reflect-metadata';
import { KafkaMessageBus } from '@switchyard/bus';
import { createLogger, kafkaBrokers, loadSettings, runMain, stopOnSignals } from '@switchyard/config';
import path from 'node:path';
import { compareEventStoreDbPositions, compareSqlitePositions, EventStoreDbEventStore } from '@switchyard/eventstore';
import { startMetricsServer } from '@switchyard/metrics';
import { loadRpcCredentials, merchantAccountsOverRpc } from '@switchyard/rpc';
import { startTcpRpcServer, TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import { startTracing } from '@switchyard/telemetry';
import { openVaultStorage } from './vault-storage';
import { vaultOptionsFrom } from './vault-options';
import { VaultService } from './vault-service';
import { vaultRelay } from './vault-relay';
import { connectionsOverRpc } from './vault-rpc';

runMain(async () => {
  const settings = loadSettings();
  const log = createLogger('vault', settings);
  const credentials = loadRpcCredentials('vault', settings);
  const tracing = startTracing('vault', settings);
  const identity = TcpRpcClient.fromUrl(settings.IDENTITY_RPC_URL, 'identity', credentials, settings.RPC_TIMEOUT_MS);
  const transactions = TcpRpcClient.fromUrl(
    settings.TRANSACTIONS_RPC_URL,
    'transactions',
    credentials,
    settings.RPC_TIMEOUT_MS,
  );

  // Older releases kept the vault in the transactions store: in EventStoreDB mode its node, read once.
  const transactionEvents = settings.TRANSACTIONS_EVENTSTORE_URL
    ? EventStoreDbEventStore.connect(settings.TRANSACTIONS_EVENTSTORE_URL)
    : undefined;
  const vaultOptions = vaultOptionsFrom(settings);
  const storage = await openVaultStorage({
    dataDir: settings.dataDir,
    keyRing: vaultOptions.keyRing,
    ...(transactionEvents ? { transactionEvents } : {}),
  }).finally(() => transactionEvents?.close());
  if (storage.migration.ran && storage.migration.copied > 0)
    log.info({ migration: storage.migration }, 'the vault moved to its own store');

  const bus = new KafkaMessageBus({
    brokers: kafkaBrokers(settings),
    clientId: 'vault',
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
    batchWindowMs: settings.KAFKA_BATCH_WINDOW_MS,
    commitIntervalMs: settings.KAFKA_COMMIT_INTERVAL_MS,
  });
  const vault = new VaultService({
    store: storage.store,
    db: storage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    // Merchant account settings (network tokens, account updater) are identity's: asked when used.
    merchantAccounts: merchantAccountsOverRpc(identity),
    // The network token service and the account updater service (the simulator's).
    ...(settings.MOCK_CARD_URL
      ? { providers: { mockCard: { baseUrl: settings.MOCK_CARD_URL, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS } } }
      : {}),
    ...vaultOptions,
    transactionsTopic: {
      bus,
      groupId: settings.VAULT_CONSUMER_GROUP,
      comparePositions: settings.TRANSACTIONS_EVENTSTORE_URL ? compareEventStoreDbPositions : compareSqlitePositions,
    },
    onBackgroundError: (error) => log.warn({ err: error }, 'vault background work failed; retrying'),
    onError: (error, what) => log.warn({ err: error }, `vault: ${what}`),
  });
  // Which card connections take network tokens: the transactions process's payment services, asked when needed.
  vault.useConnections(connectionsOverRpc(transactions));
  // The usage of the stored methods before this process followed transactions.events: folded once from the
  // transactions service's file when it is here (SQLite mode, one DATA_DIR), only read.
  if (
    !settings.TRANSACTIONS_EVENTSTORE_URL &&
    (await vault.foldUsageFrom(path.join(settings.dataDir, 'transactions.db')))
  )
    log.info('the stored payment methods’ usage folded from the transactions store');
  await vault.start();

  const relay = vaultRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, 'relay to Kafka failed; retrying from its checkpoint'),
  });
  relay.start();

  const server = await startTcpRpcServer(
    settings.VAULT_RPC_URL,
    // A forwarded provider call takes at most the longest provider time limit.
    {
      ...vault.rpcHandlers(),
      ...vault.portRpcHandlers(Math.max(settings.PROVIDER_TIMEOUT_MS, settings.MOCK_CARD_TIMEOUT_MS)),
    },
    {
      credentials,
      onUnexpected: (error) => log.error({ err: error }, 'RPC handler failed'),
      onRefused: (refusal) => log.warn({ refusal }, 'RPC call refused'),
    },
  );
  log.info(
    { node: process.version, rpc: settings.VAULT_RPC_URL, dataDir: settings.dataDir },
    'vault service listening',
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
    await vault.stop();
    await Promise.allSettled([identity.close(), transactions.close(), bus.close()]);
    await storage.close();
    await tracing.shutdown();
  });
});
