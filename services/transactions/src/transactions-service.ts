/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP.
 */
import { GIFT_CARD_STREAM_PREFIXES, transactionsPatterns, type EmbedBuyerPin } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { RetentionSweeper, ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { loadBinData, type BinData } from '@switchyard/bin-data';
import {
  SimulatorDirectoryServer,
  type GiftCardConnector,
  type ThreeDSecureDirectory,
  type TokenServiceProvider,
} from '@switchyard/connectors';
import { AuthorizationStatsSlice } from './authorization-stats/authorization-stats.slice';
import { authorizationStatsRetention } from './authorization-stats/authorization-stats.retention';
import { idempotencyRetention } from './idempotency/idempotency.retention';
import { FlowRules } from './flow-rules/flow-rules.slice';
import { PaymentServices, type PaymentServiceConnection } from './payment-services/payment-services.slice';
import { ProviderConnectors, type ProviderSettings } from './transactions/provider-connectors';
import { OneOffCardShredder } from './transactions/one-off-cards';
import { Transactions } from './transactions/transactions.slice';
import { transactionsUpcasters } from './event-schema';
import { KnownMerchantAccounts } from './merchant-account-settings';
import {
  AccountUpdater,
  Buyers,
  CardVault,
  CheckoutSessions,
  DigitalWallets,
  InProcessVault,
  NetworkTokens,
  PaymentMethods,
  VaultKeys,
  VaultSlices,
  vaultOptionsFrom,
  type KeyRing,
  type NetworkTokenMerchantAccounts,
  type PazeSigningKeys,
} from '@switchyard/vault';
import type { Settings } from '@switchyard/config';
import { withoutStreams } from '@switchyard/eventstore';
import type { GiftCardCredentialSource } from './transactions/gift-card-payments';
import type { VaultPort } from './vault-port';

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
  /** How long a card alias the vault issues for a provider call is valid; default 1 minute (CARD_ALIAS_TTL_MS). */
  readonly cardAliasTtlMs?: number;
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
  readonly retention?: {
    readonly intervalMs: number;
    readonly batchSize: number;
    readonly authorizationStatsDays: number;
  };
}

/**
 * The options every runtime reads from its settings (the embedded one and the transactions process alike); each
 * says where its gateway and its simulator are.
 */
export function transactionsOptionsFrom(
  settings: Settings,
  where: {
    readonly publicBaseUrl: () => string;
    readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string };
  },
): Pick<
  TransactionsServiceOptions,
  | 'pollIntervalMs'
  | 'keyRing'
  | 'providers'
  | 'binData'
  | 'directory'
  | 'issuerMandatedThreeDSecure'
  | 'buyerApprovalWindowMs'
  | 'giftCardRecoveryAfterMs'
  | 'reconcileAfterMs'
  | 'vaultTokenTimeoutMs'
  | 'cardAliasTtlMs'
  | 'networkTokensApiProvisioning'
  | 'pazeSigningKeys'
  | 'retention'
> {
  const directoryUrl = settings.THREE_DS_DIRECTORY_URL ?? where.mockCard?.baseUrl;
  return {
    binData: loadBinData(settings.BIN_DATA_FILE ? { file: settings.BIN_DATA_FILE } : {}),
    ...(directoryUrl
      ? { directory: new SimulatorDirectoryServer({ baseUrl: directoryUrl, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS }) }
      : {}),
    issuerMandatedThreeDSecure: settings.ISSUER_MANDATED_3DS,
    buyerApprovalWindowMs: settings.BUYER_APPROVAL_WINDOW_MS,
    giftCardRecoveryAfterMs: settings.GIFT_CARD_RECOVERY_AFTER_MS,
    reconcileAfterMs: settings.RECONCILE_AFTER_MS,
    // The vault's own settings (VAULT_KEY and the rest): read by the vault package only.
    ...vaultOptionsFrom(settings),
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    retention: {
      intervalMs: settings.RETENTION_INTERVAL_MS,
      batchSize: settings.RETENTION_BATCH_SIZE,
      authorizationStatsDays: settings.AUTHORIZATION_STATS_RETENTION_DAYS,
    },
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
  activeGiftCardService(
    merchantAccountId: string,
  ): { readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null;
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
  /** The vault's slices and keys (`@switchyard/vault`), composed on this service's host until the vault runs on its own. */
  readonly vaultSlices: VaultSlices;
  /** All this service's slices ask of the vault (`VaultPort`), answered by `vaultSlices` in this process. */
  readonly vaultPort: VaultPort;
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
  /**
   * The one-off card shredder's work outside its projection (`shredDue`, `stop`). Not the slice itself: its table is
   * an outbox, not a read model the CLI may rebuild (`read-models rebuild` finds read models among these fields).
   */
  private readonly oneOffCards: Pick<OneOffCardShredder, 'shredDue' | 'stop'>;
  private readonly onBackgroundError: (error: unknown) => void;
  /** Null when the options ask for no retention. */
  readonly retention: RetentionSweeper | null;

  constructor(options: TransactionsServiceOptions) {
    // Stored gift cards moved to the gift cards service's store (services/gift-cards, its storage's migration).
    this.host = new ServiceHost({
      ...options,
      store: withoutStreams(options.store, GIFT_CARD_STREAM_PREFIXES),
      upcasters: transactionsUpcasters,
    });
    // Card-bearing provider calls go through the vault's forwarder (built with the vault's slices, below).
    const connectors = new ProviderConnectors(options.providers ?? { publicBaseUrl: () => 'http://127.0.0.1' }, {
      alias: (merchantAccountId, card) => this.vaultSlices.cardAliases.issue(merchantAccountId, card),
      fetchFor: (merchantAccountId, hosts) => this.vaultSlices.forwarder.fetchFor(merchantAccountId, hosts),
    });
    this.paymentServices = new PaymentServices(this.host.context, undefined, (id) => connectors.notificationUrl(id));
    this.flowRules = new FlowRules(this.host.context, this.paymentServices);
    const binData = options.binData ?? loadBinData({});
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.vaultSlices = new VaultSlices({
      context: this.host.context,
      db: options.db,
      store: options.store,
      ...(options.keyRing ? { keyRing: options.keyRing } : {}),
      ...(options.vaultKey ? { vaultKey: options.vaultKey } : {}),
      binData,
      ...(options.providers ? { providers: options.providers } : {}),
      ...(options.tokenService ? { tokenService: options.tokenService } : {}),
      ...(options.merchantAccounts ? { merchantAccounts: options.merchantAccounts } : {}),
      connections: this.paymentServices,
      ...(options.networkTokensApiProvisioning !== undefined
        ? { networkTokensApiProvisioning: options.networkTokensApiProvisioning }
        : {}),
      ...(options.vaultTokenTimeoutMs !== undefined ? { vaultTokenTimeoutMs: options.vaultTokenTimeoutMs } : {}),
      ...(options.cardAliasTtlMs !== undefined ? { cardAliasTtlMs: options.cardAliasTtlMs } : {}),
      ...(options.pazeSigningKeys !== undefined ? { pazeSigningKeys: options.pazeSigningKeys } : {}),
      onBackgroundError: this.onBackgroundError,
    });
    this.vaultKeys = this.vaultSlices.vaultKeys;
    this.vault = this.vaultSlices.vault;
    this.sealingKey = this.vaultSlices.sealingKey;
    this.buyers = this.vaultSlices.buyers;
    this.paymentMethods = this.vaultSlices.paymentMethods;
    this.checkoutSessions = this.vaultSlices.checkoutSessions;
    this.networkTokens = this.vaultSlices.networkTokens;
    this.digitalWallets = this.vaultSlices.digitalWallets;
    this.accountUpdater = this.vaultSlices.accountUpdater;
    this.vaultPort = new InProcessVault(this.vaultSlices, binData);
    // Every vault-derived key comes from the root, which a rotation of the key-encryption key leaves unchanged.
    const vaultKey = this.vaultKeys.root();
    const derived = this.sealingKey;
    this.holdWindowMs = options.buyerApprovalWindowMs ?? 10 * 60 * 1000;
    this.giftCardRecoveryAfterMs = options.giftCardRecoveryAfterMs ?? 60 * 1000;
    this.reconcileAfterMs = options.reconcileAfterMs ?? 60 * 1000;
    const fingerprintKey = derived('switchyard/idempotency-fingerprint/v1');
    this.giftCardKeys = { legacyKey: vaultKey, fingerprintKey };
    this.giftCardServices = giftCardServiceDirectory(this.paymentServices, (connection) =>
      connectors.giftCardConnectorFor(connection),
    );
    this.transactions = new Transactions(this.host.context, {
      paymentServices: this.paymentServices,
      flowRules: this.flowRules,
      directory: options.directory ?? null,
      settings: {
        issuerMandatedThreeDSecure: options.issuerMandatedThreeDSecure ?? true,
        holdWindowMs: this.holdWindowMs,
        returnTokenKey: derived('switchyard/buyer-return-token/v1'),
        giftCardRecoveryAfterMs: this.giftCardRecoveryAfterMs,
      },
      giftCardCredentials: {
        credentialsFor: (merchantAccountId, giftCardId) =>
          this.giftCardSource?.credentialsFor(merchantAccountId, giftCardId) ?? null,
        belongsTo: (merchantAccountId, giftCardId, buyer: NonNullable<EmbedBuyerPin>) =>
          this.giftCardSource?.belongsTo(merchantAccountId, giftCardId, buyer) ?? false,
      },
      onBackgroundError: this.onBackgroundError,
      vault: this.vaultPort,
      connectors,
      fingerprintKey,
      merchantAccounts: options.merchantAccounts ? new KnownMerchantAccounts(options.merchantAccounts) : null,
    });
    const oneOffCards = new OneOffCardShredder(options.db, this.vaultPort, this.onBackgroundError);
    this.oneOffCards = { shredDue: () => oneOffCards.shredDue(), stop: () => oneOffCards.stop() };
    this.host.add(this.paymentServices, this.flowRules, this.transactions, oneOffCards);
    this.host.add(...this.vaultSlices.slices());
    this.authorizationStats = new AuthorizationStatsSlice(this.host.context);
    this.host.add(this.authorizationStats);
    const retention = options.retention;
    this.retention = retention
      ? new RetentionSweeper({
          tasks: [
            authorizationStatsRetention(options.db, retention.authorizationStatsDays),
            idempotencyRetention(options.db),
          ],
          now: this.host.context.now,
          intervalMs: retention.intervalMs,
          batchSize: retention.batchSize,
          onError: (error) => this.onBackgroundError(error),
        })
      : null;
  }

  /**
   * Serves once every read model is current; then, every so often, completes expired create holds and rolls back
   * gift card payments left unfinished, and reconciles authorizations whose outcome is still unknown. One-off cards
   * due for shredding when the last process stopped are shredded first.
   */
  async start(): Promise<void> {
    await this.host.catchUpAndFollow();
    await this.oneOffCards.shredDue();
    const shortest = Math.min(
      this.holdWindowMs,
      this.giftCardRecoveryAfterMs,
      this.reconcileAfterMs,
      this.paymentMethods.vaultTokenTimeoutMs,
    );
    const every = Math.max(50, Math.min(Math.floor(shortest / 4), 5_000));
    let running = false;
    this.holdTimer = setInterval(() => {
      if (running) return;
      running = true;
      // Each round settles independently: one failing (a provider down) does not hold the others back.
      Promise.allSettled([
        this.transactions.expireHolds(),
        this.transactions.recoverGiftCardPayments(),
        this.transactions.reconcile(this.reconcileAfterMs),
        this.oneOffCards.shredDue(),
        ...this.vaultSlices.backgroundRound(),
      ])
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
    this.vaultSlices.stop();
    await this.host.stop();
    await this.oneOffCards.stop();
  }

  /** Read-your-writes for the read models, and the one-off cards of completed requests shredded. */
  async catchUp(): Promise<void> {
    await this.host.catchUp();
    await this.oneOffCards.shredDue();
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
      const connection = paymentServices
        .activeConnections(merchantAccountId)
        .find((candidate) => candidate.method === 'gift-card');
      return connection ? { service: giftCardServiceRef(connection), connector: connectorFor(connection) } : null;
    },
    serviceRef: (merchantAccountId, id) => {
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection ? giftCardServiceRef(connection) : null;
    },
  };
}
