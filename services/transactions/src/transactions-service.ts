/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP.
 */
import { GIFT_CARD_STREAM_PREFIXES, transactionsPatterns, type EmbedBuyerPin } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { RetentionSweeper, ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { hkdfSync, randomBytes } from 'node:crypto';
import { loadBinData, type BinData } from '@switchyard/bin-data';
import { SimulatorDirectoryServer, SimulatorTokenServiceProvider, type GiftCardConnector, type ThreeDSecureDirectory, type TokenServiceProvider } from '@switchyard/connectors';
import { NetworkTokens, type NetworkTokenMerchantAccounts } from './network-tokens/network-tokens.slice';
import { AccountUpdater } from './account-updater/account-updater.slice';
import { AuthorizationStatsSlice } from './authorization-stats/authorization-stats.slice';
import { authorizationStatsRetention } from './authorization-stats/authorization-stats.retention';
import { idempotencyRetention } from './idempotency/idempotency.retention';
import { accountUpdaterServiceFor } from './account-updater/account-updater-service';
import { CheckoutSessions } from './checkout-sessions/checkout-sessions.slice';
import { DigitalWallets } from './digital-wallets/digital-wallets.slice';
import { FlowRules } from './flow-rules/flow-rules.slice';
import { PaymentServices, type PaymentServiceConnection } from './payment-services/payment-services.slice';
import { ProviderConnectors, type ProviderSettings } from './transactions/provider-connectors';
import { OneOffCardShredder } from './transactions/one-off-cards';
import { Transactions } from './transactions/transactions.slice';
import { PazePayments } from './transactions/paze-payments';
import { loadPazeSigningKeys, pazeDevelopmentSigningKeys, type PazeSigningKeys } from './digital-wallets/paze-signing-keys';
import { Buyers } from './buyers/buyers.slice';
import { buyerDirectory } from './payment-methods/buyer-directory';
import { PaymentMethods } from './payment-methods/payment-methods.slice';
import { transactionsUpcasters } from './event-schema';
import { KnownMerchantAccounts } from './merchant-account-settings';
import { CardVault } from './vault/card-vault';
import { keyRing, loadKeyRing, openVaultKeys, VaultKeys, type KeyRing } from './vault/vault-keys';
import type { Settings } from '@switchyard/config';
import { SqliteEventStore, withoutStreams } from '@switchyard/eventstore';
import type { GiftCardCredentialSource } from './transactions/gift-card-payments';

export interface TransactionsServiceOptions extends ServiceHostOptions {
  /** The vault's key-encryption keys (`loadKeyRing`: VAULT_KEY, VAULT_RETIRED_KEYS); default: a random key, for tests that keep nothing. */
  readonly keyRing?: KeyRing;
  /** Shorthand for a key ring of one key (tests). */
  readonly vaultKey?: Buffer;
  /** Where providers live and where they send notifications; without it no transaction can reach a provider. */
  readonly providers?: ProviderSettings;
  /** BIN data (issuer country for issuer-mandated 3-D Secure, card type for flow rules); default: the shipped sample. */
  readonly binData?: BinData;
  /** The 3-D Secure directory server; absent: 3-D Secure cannot run (recorded as a setup error). */
  readonly directory?: ThreeDSecureDirectory;
  /** Default true. */
  readonly issuerMandatedThreeDSecure?: boolean;
  /** Default 10 minutes (BUYER_APPROVAL_WINDOW_MS). */
  readonly buyerApprovalWindowMs?: number;
  /** Default 1 minute (GIFT_CARD_RECOVERY_AFTER_MS). */
  readonly giftCardRecoveryAfterMs?: number;
  /** How long a method stored by a purchase waits for the provider's vault token; default 10 minutes (VAULT_TOKEN_TIMEOUT_MS). */
  readonly vaultTokenTimeoutMs?: number;
  /** Default 1 minute (RECONCILE_AFTER_MS). */
  readonly reconcileAfterMs?: number;
  /** Identity's merchant account settings (network tokens read them); absent: every account has network tokens off. */
  readonly merchantAccounts?: NetworkTokenMerchantAccounts;
  /** Whether `POST /payment-methods/{id}/network-tokens` provisions (NETWORK_TOKENS_API_PROVISIONING); default true. */
  readonly networkTokensApiProvisioning?: boolean;
  /** Paze's signing keys (PAZE_SIGNING_KEYS, `loadPazeSigningKeys`; null: none, Paze refused); absent: the development key (docs/paze.md). */
  readonly pazeSigningKeys?: PazeSigningKeys | null;
  /** The network token service; default the simulator's (`providers.mockCard`). */
  readonly tokenService?: TokenServiceProvider;
  /** Told of a failed round of the hold-window timer (it tries again on its next tick). */
  readonly onBackgroundError?: (error: unknown) => void;
  /** Pruning of authorization statistics and expired idempotency records (docs/operations.md, Retention); absent: none. */
  readonly retention?: { readonly intervalMs: number; readonly batchSize: number; readonly authorizationStatsDays: number };
}

/**
 * The options every runtime reads from its settings (the embedded one and the transactions process alike); each
 * says where its gateway and its simulator are.
 */
export function transactionsOptionsFrom(
  settings: Settings,
  where: { readonly publicBaseUrl: () => string; readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string } },
): Pick<TransactionsServiceOptions, 'pollIntervalMs' | 'keyRing' | 'providers' | 'binData' | 'directory' | 'issuerMandatedThreeDSecure' | 'buyerApprovalWindowMs' | 'giftCardRecoveryAfterMs' | 'reconcileAfterMs' | 'vaultTokenTimeoutMs' | 'networkTokensApiProvisioning' | 'pazeSigningKeys' | 'retention'> {
  const directoryUrl = settings.THREE_DS_DIRECTORY_URL ?? where.mockCard?.baseUrl;
  return {
    binData: loadBinData(settings.BIN_DATA_FILE ? { file: settings.BIN_DATA_FILE } : {}),
    ...(directoryUrl ? { directory: new SimulatorDirectoryServer({ baseUrl: directoryUrl, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS }) } : {}),
    issuerMandatedThreeDSecure: settings.ISSUER_MANDATED_3DS,
    buyerApprovalWindowMs: settings.BUYER_APPROVAL_WINDOW_MS,
    giftCardRecoveryAfterMs: settings.GIFT_CARD_RECOVERY_AFTER_MS,
    reconcileAfterMs: settings.RECONCILE_AFTER_MS,
    vaultTokenTimeoutMs: settings.VAULT_TOKEN_TIMEOUT_MS,
    networkTokensApiProvisioning: settings.NETWORK_TOKENS_API_PROVISIONING ?? settings.NODE_ENV !== 'production',
    // Unset in production stops the start here: an unverified Paze payload could come from anyone.
    pazeSigningKeys: loadPazeSigningKeys(settings.PAZE_SIGNING_KEYS, settings.NODE_ENV),
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    retention: { intervalMs: settings.RETENTION_INTERVAL_MS, batchSize: settings.RETENTION_BATCH_SIZE, authorizationStatsDays: settings.AUTHORIZATION_STATS_RETENTION_DAYS },
    keyRing: loadKeyRing({
      ...(settings.VAULT_KEY ? { configured: settings.VAULT_KEY } : {}),
      ...(settings.VAULT_RETIRED_KEYS ? { retired: settings.VAULT_RETIRED_KEYS } : {}),
      dataDir: settings.dataDir,
    }),
    providers: {
      publicBaseUrl: where.publicBaseUrl,
      ...(where.mockCard ? { mockCard: { ...where.mockCard, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS } } : {}),
      providerTimeoutMs: settings.PROVIDER_TIMEOUT_MS,
    },
  };
}

export { merchantAccountsOverRpc } from './merchant-account-settings';

/** A gift card service as a stored gift card names it. */
export interface GiftCardServiceRef {
  readonly id: string;
  readonly definitionId: string;
  readonly displayName: string;
}

/** The gift cards service's view of the merchant accounts' gift card services (these connections are ours). */
export interface GiftCardServices {
  activeGiftCardService(merchantAccountId: string): { readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null;
  serviceRef(merchantAccountId: string, id: string): GiftCardServiceRef | null;
}

export class TransactionsService {
  readonly paymentServices: PaymentServices;
  readonly flowRules: FlowRules;
  /** The merchant accounts' gift card services, for the gift cards service. */
  readonly giftCardServices: GiftCardServices;
  readonly digitalWallets: DigitalWallets;
  readonly buyers: Buyers;
  readonly paymentMethods: PaymentMethods;
  readonly checkoutSessions: CheckoutSessions;
  readonly transactions: Transactions;
  readonly networkTokens: NetworkTokens;
  readonly accountUpdater: AccountUpdater;
  /** Authorization rate and latency per connection and minute (the operator dashboard's chart). */
  readonly authorizationStats: AuthorizationStatsSlice;
  readonly vault: CardVault;
  readonly vaultKeys: VaultKeys;
  /**
   * For the gift cards service: the vault root, under which the stored gift cards' numbers and PINs were sealed before
   * it had a key of its own (`legacyKey`: it seals them again under GIFT_CARDS_KEY), and the Idempotency-Key
   * fingerprint key its moved keys were recorded with.
   */
  readonly giftCardKeys: { readonly legacyKey: Buffer; readonly fingerprintKey: Buffer };
  /** A 32-byte key for sealing one kind of secret at rest (derived from the vault root under `label`). */
  readonly sealingKey: (label: string) => Buffer;
  private readonly host: ServiceHost;
  private readonly holdWindowMs: number;
  private readonly giftCardRecoveryAfterMs: number;
  private readonly reconcileAfterMs: number;
  /** The gift cards service, once composed (`useGiftCards`): a split payment's stored cards. */
  private giftCardSource: GiftCardCredentialSource | null = null;
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly onBackgroundError: (error: unknown) => void;
  /** Null when the options ask for no retention. */
  readonly retention: RetentionSweeper | null;

  constructor(options: TransactionsServiceOptions) {
    // Stored gift cards moved to the gift cards service's store (services/gift-cards, its storage's migration).
    this.host = new ServiceHost({ ...options, store: withoutStreams(options.store, GIFT_CARD_STREAM_PREFIXES), upcasters: transactionsUpcasters });
    const connectors = new ProviderConnectors(options.providers ?? { publicBaseUrl: () => 'http://127.0.0.1' });
    this.paymentServices = new PaymentServices(this.host.context, undefined, (id) => connectors.notificationUrl(id));
    this.flowRules = new FlowRules(this.host.context, this.paymentServices);
    this.vaultKeys = openVaultKeys(options.db, options.keyRing ?? keyRing(options.vaultKey ?? randomBytes(32)), this.host.context.now);
    // Every vault-derived key comes from the root, which a rotation of the key-encryption key leaves unchanged.
    const vaultKey = this.vaultKeys.root();
    const derived = (label: string) => Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), label, 32));
    this.sealingKey = derived;
    this.holdWindowMs = options.buyerApprovalWindowMs ?? 10 * 60 * 1000;
    this.giftCardRecoveryAfterMs = options.giftCardRecoveryAfterMs ?? 60 * 1000;
    this.reconcileAfterMs = options.reconcileAfterMs ?? 60 * 1000;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    // SQLite mode: the events are committed, FULL, on this same connection after every card they name.
    const syncedByEvents = options.store instanceof SqliteEventStore && options.store.database === options.db;
    this.vault = new CardVault(options.db, { keys: this.vaultKeys, now: this.host.context.now, syncedByEvents });
    const fingerprintKey = derived('switchyard/idempotency-fingerprint/v1');
    const binData = options.binData ?? loadBinData({});
    this.giftCardKeys = { legacyKey: vaultKey, fingerprintKey };
    this.giftCardServices = giftCardServiceDirectory(this.paymentServices, (connection) => connectors.giftCardConnectorFor(connection));
    // The vault's slices: buyers, their stored payment methods, checkout sessions, digital wallets (Paze).
    this.buyers = new Buyers(this.host.context, { onDelete: (merchantAccountId, buyerId) => this.paymentMethods.deleteAllOfBuyer(merchantAccountId, buyerId) });
    this.checkoutSessions = new CheckoutSessions(this.host.context, {
      vault: this.vault,
      binData,
      // Looked up when used: the payment methods slice is built next, and itself claims sessions.
      storedPaymentMethods: { usable: (merchantAccountId, id) => this.paymentMethods.usable(merchantAccountId, id) },
    });
    this.paymentMethods = new PaymentMethods(this.host.context, {
      vault: this.vault,
      binData,
      buyers: buyerDirectory(this.buyers),
      checkoutSessions: this.checkoutSessions,
      ...(options.vaultTokenTimeoutMs !== undefined ? { vaultTokenTimeoutMs: options.vaultTokenTimeoutMs } : {}),
      onBackgroundError: this.onBackgroundError,
    });
    this.networkTokens = new NetworkTokens(this.host.context, {
      paymentMethods: this.paymentMethods,
      merchantAccounts: options.merchantAccounts ?? { get: async () => null },
      paymentServices: this.paymentServices,
      tokenService:
        options.tokenService ??
        new SimulatorTokenServiceProvider({ baseUrl: options.providers?.mockCard?.baseUrl ?? 'http://127.0.0.1:4010', ...(options.providers?.mockCard?.timeoutMs ? { timeoutMs: options.providers.mockCard.timeoutMs } : {}) }),
      sealingKey: this.sealingKey('switchyard/network-tokens/v1'),
      apiProvisioning: options.networkTokensApiProvisioning ?? true,
      onBackgroundError: this.onBackgroundError,
    });
    this.digitalWallets = new DigitalWallets(this.host.context, { sealingKey: this.sealingKey('switchyard/digital-wallets/v1') });
    this.transactions = new Transactions(this.host.context, {
      paymentServices: this.paymentServices,
      flowRules: this.flowRules,
      binData,
      directory: options.directory ?? null,
      settings: {
        issuerMandatedThreeDSecure: options.issuerMandatedThreeDSecure ?? true,
        holdWindowMs: this.holdWindowMs,
        returnTokenKey: derived('switchyard/buyer-return-token/v1'),
        giftCardRecoveryAfterMs: this.giftCardRecoveryAfterMs,
      },
      giftCardCredentials: {
        credentialsFor: (merchantAccountId, giftCardId) => this.giftCardSource?.credentialsFor(merchantAccountId, giftCardId) ?? null,
        belongsTo: (merchantAccountId, giftCardId, buyer: NonNullable<EmbedBuyerPin>) => this.giftCardSource?.belongsTo(merchantAccountId, giftCardId, buyer) ?? false,
      },
      onBackgroundError: this.onBackgroundError,
      vault: this.vault,
      connectors,
      fingerprintKey,
      paymentMethods: this.paymentMethods,
      buyers: buyerDirectory(this.buyers),
      checkoutSessions: this.checkoutSessions,
      paze: new PazePayments(this.digitalWallets, this.host.context.now, options.pazeSigningKeys === undefined ? pazeDevelopmentSigningKeys() : options.pazeSigningKeys),
      networkTokens: this.networkTokens,
      merchantAccounts: options.merchantAccounts ? new KnownMerchantAccounts(options.merchantAccounts) : null,
    });
    const oneOffCards = new OneOffCardShredder(options.db, this.vault);
    this.host.add(this.paymentServices, this.flowRules, this.transactions, oneOffCards);
    this.host.add(this.buyers, this.paymentMethods, this.checkoutSessions, this.digitalWallets);
    this.host.add(this.networkTokens);
    this.accountUpdater = new AccountUpdater(this.host.context, {
      paymentMethods: this.paymentMethods,
      merchantAccounts: options.merchantAccounts ?? { get: async () => null },
      updater: accountUpdaterServiceFor(options.providers),
      onBackgroundError: this.onBackgroundError,
    });
    this.host.add(this.accountUpdater);
    this.authorizationStats = new AuthorizationStatsSlice(this.host.context);
    this.host.add(this.authorizationStats);
    const retention = options.retention;
    this.retention = retention
      ? new RetentionSweeper({
          tasks: [authorizationStatsRetention(options.db, retention.authorizationStatsDays), idempotencyRetention(options.db)],
          now: this.host.context.now,
          intervalMs: retention.intervalMs,
          batchSize: retention.batchSize,
          onError: (error) => this.onBackgroundError(error),
        })
      : null;
  }

  /**
   * Serves once every read model is current; then, every so often, completes expired create holds and rolls back
   * gift card payments left unfinished, and reconciles authorizations whose outcome is still unknown.
   */
  async start(): Promise<void> {
    await this.host.catchUpAndFollow();
    const shortest = Math.min(this.holdWindowMs, this.giftCardRecoveryAfterMs, this.reconcileAfterMs, this.paymentMethods.vaultTokenTimeoutMs);
    const every = Math.max(50, Math.min(Math.floor(shortest / 4), 5_000));
    let running = false;
    this.holdTimer = setInterval(() => {
      if (running) return;
      running = true;
      // Each round settles independently: one failing (a provider down) does not hold the others back.
      Promise.allSettled([this.transactions.expireHolds(), this.transactions.recoverGiftCardPayments(), this.transactions.reconcile(this.reconcileAfterMs), this.checkoutSessions.expireSessions(), this.paymentMethods.expireWaiting(), this.accountUpdater.poll()])
        .then((results) => results.forEach((r) => r.status === 'rejected' && this.onBackgroundError(r.reason)))
        .catch(this.onBackgroundError) // retried on the next tick
        .finally(() => {
          running = false;
        });
    }, every);
    this.holdTimer.unref();
    this.retention?.start();
  }

  async stop(): Promise<void> {
    clearInterval(this.holdTimer);
    await this.retention?.stop();
    this.networkTokens.stop();
    return this.host.stop();
  }

  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  /** Where a split payment's stored gift cards come from: the gift cards service (composed after this one). */
  useGiftCards(source: GiftCardCredentialSource): void {
    this.giftCardSource = source;
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(transactionsPatterns.ping);
  }
}

const giftCardServiceRef = (connection: PaymentServiceConnection): GiftCardServiceRef => ({
  id: connection.id,
  definitionId: connection.paymentServiceDefinitionId,
  displayName: connection.displayName,
});

/** A merchant account's gift card service: its active payment service of method `gift-card`. */
export function giftCardServiceDirectory(
  paymentServices: Pick<PaymentServices, 'activeConnections' | 'connection'>,
  connectorFor: (connection: PaymentServiceConnection) => GiftCardConnector,
): GiftCardServices {
  return {
    activeGiftCardService: (merchantAccountId) => {
      const connection = paymentServices.activeConnections(merchantAccountId).find((candidate) => candidate.method === 'gift-card');
      return connection ? { service: giftCardServiceRef(connection), connector: connectorFor(connection) } : null;
    },
    serviceRef: (merchantAccountId, id) => {
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection ? giftCardServiceRef(connection) : null;
    },
  };
}
