/**
 * The embedded runtime: every service in one process on embedded adapters (SQLite event stores under DATA_DIR,
 * the in-process bus and RPC, in-memory caches). The same service code as the distributed runtime.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { InProcessMessageBus, SqliteBusState, type MessageBus } from '@switchyard/bus';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { holdDataDirReader, type Settings } from '@switchyard/config';
import { dashboardSettingsFrom, startGateway, type RunningGateway } from '@switchyard/gateway';
import { GiftCardsService, giftCardsRelay, loadGiftCardsKey, openGiftCardsStorage } from '@switchyard/gift-cards';
import { IdentityService, identityRelay } from '@switchyard/identity';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { startTracing } from '@switchyard/telemetry';
import {
  merchantAccountsOverRpc,
  TransactionsService,
  transactionsOptionsFrom,
  transactionsRelay,
  vaultDirectoryRpcHandlers,
  vaultOverRpc,
} from '@switchyard/transactions';
import {
  openVaultStorage,
  startVaultThread,
  VaultService,
  vaultOptionsFrom,
  vaultRelay,
  type VaultThread,
} from '@switchyard/vault';
import { WebhooksService, webhooksOptionsFrom, webhooksRelay } from '@switchyard/webhooks';
import type { Logger } from 'pino';
import { DemoCheckout, DemoCheckoutModule, demoCheckoutEnabled } from './demo';

export interface EmbeddedService {
  readonly gateway: RunningGateway;
  readonly identity: IdentityService;
  readonly transactions: TransactionsService;
  /** The vault service in this thread; a getter that throws when it runs on a thread of its own (VAULT_THREAD). */
  readonly vault: VaultService;
  readonly giftCards: GiftCardsService;
  readonly webhooks: WebhooksService;
  readonly bus: MessageBus;
  /** The in-process mock-card simulator; null when MOCK_CARD_URL points at one elsewhere. */
  readonly simulator: RunningSimulator | null;
  /** The demo checkout's merchant backend (`/demo/checkout`); null when DEMO_CHECKOUT is off. */
  readonly demoCheckout: DemoCheckout | null;
  stop(): Promise<void>;
}

export async function startEmbedded(settings: Settings, log: Logger): Promise<EmbeddedService> {
  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): started first, so every span of the services has somewhere to go.
  const tracing = startTracing('switchyard', settings);
  // The relays move their checkpoints once `publish` resolves; in memory, that must wait until the consumers (the
  // webhooks service) have stored what they make of the events, or a kill -9 in between would lose them.
  // Dead letters and parked streams survive a restart (DATA_DIR/bus.db), and `cli dead-letters` reads and commands them.
  const busState = SqliteBusState.open(settings.dataDir);
  const bus = new InProcessMessageBus({
    publishWaitsForConsumers: true,
    durable: busState,
    durablePollIntervalMs: settings.POLL_INTERVAL_MS,
    redelivery: { maxAttempts: settings.BUS_MAX_ATTEMPTS },
  });
  const relayOptions = (service: string) => ({
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error: unknown) => log.warn({ err: error }, `${service} relay failed; retrying from its checkpoint`),
  });

  const identityStorage = openServiceStorage('identity', { dataDir: settings.dataDir });
  const identity = new IdentityService({
    store: identityStorage.store,
    db: identityStorage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
  });
  await identity.start();
  const transactionsStorage = openServiceStorage('transactions', { dataDir: settings.dataDir });
  // The simulator calls the gateway back: at PUBLIC_BASE_URL, else where the gateway ended up listening.
  let gateway: RunningGateway | undefined;
  const publicBaseUrl = () =>
    settings.PUBLIC_BASE_URL ?? listeningUrl(gateway) ?? `http://${settings.HOST}:${settings.PORT}`;
  const webhookSecret = settings.MOCK_CARD_WEBHOOK_SECRET ?? randomBytes(24).toString('base64url');
  const simulator = settings.MOCK_CARD_URL
    ? null
    : await startSimulator({
        host: '127.0.0.1',
        port: settings.MOCK_CARD_PORT,
        webhookSecret,
        ...(settings.MOCK_CARD_LEDGER_CAPACITY ? { ledgerCapacity: settings.MOCK_CARD_LEDGER_CAPACITY } : {}),
      });
  if (simulator) log.info({ url: simulator.url }, 'mock-card simulator listening');
  const rpc = new InProcessRpc((error) => log.error({ err: error }, 'RPC handler failed'));
  rpc.register(identity.rpcHandlers());
  const transactionsOptions = transactionsOptionsFrom(settings, {
    publicBaseUrl,
    mockCard: { baseUrl: settings.MOCK_CARD_URL ?? simulator?.url ?? '', webhookSecret },
  });
  // The vault: its own store (DATA_DIR/vault.db; the first start moves its streams and card rows out of
  // transactions.db). Before the gift cards' storage: the vault root is settled in transactions.db (openVaultKeys
  // looks at vault_gift_cards) before the moved gift card rows are erased from it. On a worker thread of its own
  // (VAULT_THREAD, default), asked as the distributed runtime asks its process; else in this thread.
  const mockCardUrl = settings.MOCK_CARD_URL ?? simulator?.url;
  const vaultThread: VaultThread | null = settings.VAULT_THREAD
    ? await startVaultThread({
        settings,
        mockCard: mockCardUrl ? { baseUrl: mockCardUrl, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS } : null,
        rpc,
        bus,
        log,
        onExit: (error) =>
          log.error({ err: error }, 'the vault thread stopped: every card payment fails until the service restarts'),
      })
    : null;
  if (vaultThread) rpc.forward(vaultThread.patterns, vaultThread.rpc);
  const inProcess = vaultThread
    ? null
    : await inProcessVault(settings, rpc, transactionsOptions, transactionsStorage, log);
  const transactions = new TransactionsService({
    merchantAccounts: merchantAccountsOverRpc(rpc),
    store: transactionsStorage.store,
    db: transactionsStorage.db,
    vault: vaultThread
      ? await vaultOverRpc({ rpc: vaultThread.rpc, forwardRpc: vaultThread.rpc, retryMs: 50 })
      : inProcess!.vault,
    ...transactionsOptions,
    onBackgroundError: (error) => log.warn({ err: error }, 'transactions background work failed'),
  });
  await inProcess?.vault.start();
  await transactions.start();

  if (inProcess) rpc.register(inProcess.vault.rpcHandlers());
  // The vault's thread asks which card connections take network tokens (`connectionsOverRpc`).
  else rpc.register(vaultDirectoryRpcHandlers(transactions.paymentServices));
  rpc.register(transactions.rpcHandlers());
  // Gift cards: their own store (DATA_DIR/gift-cards.db; the first start moves them out of transactions.db).
  // After the vault's storage: the vault root is settled before the moved gift card rows are erased from transactions.db.
  const giftCardsStorage = await openGiftCardsStorage({ dataDir: settings.dataDir });
  if (giftCardsStorage.migration.ran && giftCardsStorage.migration.copied > 0)
    log.info({ migration: giftCardsStorage.migration }, 'gift cards moved to gift-cards.db');
  const giftCards = new GiftCardsService({
    store: giftCardsStorage.store,
    db: giftCardsStorage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    key: loadGiftCardsKey({ configured: settings.GIFT_CARDS_KEY, dataDir: settings.dataDir }),
    ...transactions.giftCardKeys,
    services: transactions.giftCardServices,
    transactionEvents: transactionsStorage.store,
    // Split tender's redemption requests, from the transactions relay on the in-process bus (subscribed before the
    // relays start).
    redemptionRequests: { bus, groupId: 'gift-cards.redemptions' },
    handOverTtlMs: settings.GIFT_CARD_HAND_OVER_TTL_MS,
  });
  await giftCards.start();
  transactions.useGiftCards(giftCards);
  // Split tender: the gift cards service's answers, on the in-process bus (subscribed before the relays start).
  await transactions.followGiftCardOutcomes({ bus, groupId: 'transactions.gift-card-outcomes' });
  rpc.register(giftCards.rpcHandlers());

  // Webhooks: follows the other services' topics on the in-process bus and renders targets by calling their
  // patterns on the same in-process RPC. Started before the relays, so it is subscribed before they publish.
  const webhooksStorage = openServiceStorage('webhooks', { dataDir: settings.dataDir });
  const webhooks = new WebhooksService({
    store: webhooksStorage.store,
    db: webhooksStorage.db,
    bus,
    rpc,
    ...webhooksOptionsFrom(settings, (error, what) => log.warn({ err: error }, `webhooks: ${what}`)),
    log,
  });
  rpc.register(webhooks.rpcHandlers());
  await webhooks.start();

  const relays = [
    identityRelay(identityStorage, bus, relayOptions('identity')),
    transactionsRelay(transactionsStorage, bus, relayOptions('transactions')),
    ...(inProcess ? [vaultRelay(inProcess.storage, bus, relayOptions('vault'))] : []),
    giftCardsRelay(giftCardsStorage, bus, relayOptions('gift-cards')),
    webhooksRelay(webhooksStorage, bus, relayOptions('webhooks')),
  ];
  for (const relay of relays) relay.start();
  // The demo checkout (issue 9): a merchant page and backend served beside the API; the secure fields it loads come
  // from the service's address (PUBLIC_BASE_URL, else where it listens), the page is meant to be opened on another.
  const demoCheckout = demoCheckoutEnabled(settings) ? new DemoCheckout(identity, rpc, publicBaseUrl) : null;
  gateway = await startGateway({
    ...(demoCheckout ? { modules: [DemoCheckoutModule.register(demoCheckout)] } : {}),
    rpc,
    bus,
    dashboard: dashboardSettingsFrom(settings),
    clockSkewSeconds: settings.JWT_CLOCK_SKEW_SECONDS,
    keyUsageFlushMs: settings.KEY_USAGE_FLUSH_MS,
    enumerationLimitPerMinute: settings.ENUMERATION_RATE_LIMIT_PER_MINUTE,
    jwtVerifyWorkers: settings.JWT_VERIFY_WORKERS,
    trustedProxies: settings.TRUSTED_PROXIES,
    metricsEnabled: settings.METRICS_ENABLED,
    ...(settings.METRICS_PORT !== undefined ? { metrics: { host: settings.HOST, port: settings.METRICS_PORT } } : {}),
    log,
    onError: (error, what) => log.error({ err: error }, what),
  });

  const running = gateway;
  // Without EventStoreDB, the CLI writes keys into this data directory: this file tells it a server reads them.
  const releaseDataDir = settings.EVENTSTORE_URL ? () => undefined : holdDataDirReader(settings.dataDir, 'embedded');
  return {
    gateway: running,
    identity,
    transactions,
    get vault(): VaultService {
      if (!inProcess)
        throw new Error('the vault runs on a thread of its own (VAULT_THREAD=false keeps it in this one)');
      return inProcess.vault;
    },
    giftCards,
    webhooks,
    bus,
    simulator,
    demoCheckout,
    stop: async () => {
      await running.stop();
      await simulator?.stop();
      for (const relay of relays) await relay.stop();
      // Deliveries call identity and transactions: they stop first.
      await webhooks.stop();
      await Promise.all([identity.stop(), giftCards.stop(), transactions.stop()]);
      await (inProcess ? inProcess.vault.stop() : vaultThread?.stop());
      await bus.close();
      await busState.close();
      await Promise.all([
        identityStorage.close(),
        giftCardsStorage.close(),
        transactionsStorage.close(),
        inProcess?.storage.close(),
        webhooksStorage.close(),
      ]);
      await tracing.shutdown();
      releaseDataDir();
    },
  };
}

/** The vault service in this thread (VAULT_THREAD=false), on its store; started by the caller. */
async function inProcessVault(
  settings: Settings,
  rpc: InProcessRpc,
  transactionsOptions: ReturnType<typeof transactionsOptionsFrom>,
  transactionsStorage: ServiceStorage,
  log: Logger,
): Promise<{ vault: VaultService; storage: ServiceStorage }> {
  const vaultOptions = vaultOptionsFrom(settings);
  const storage = await openVaultStorage({ dataDir: settings.dataDir, keyRing: vaultOptions.keyRing });
  if (storage.migration.ran && storage.migration.copied > 0)
    log.info({ migration: storage.migration }, 'the vault moved to vault.db');
  const vault = new VaultService({
    store: storage.store,
    db: storage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    merchantAccounts: merchantAccountsOverRpc(rpc),
    ...(transactionsOptions.providers ? { providers: transactionsOptions.providers } : {}),
    ...vaultOptions,
    transactionEvents: transactionsStorage.store,
    onBackgroundError: (error) => log.warn({ err: error }, 'vault background work failed; retrying'),
  });
  return { vault, storage };
}

/** `http://127.0.0.1:<port>` of a gateway that listens; undefined before it does. */
function listeningUrl(gateway: RunningGateway | undefined): string | undefined {
  const address = gateway?.app.getHttpServer().address() as AddressInfo | string | null | undefined;
  if (!address || typeof address === 'string') return undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
