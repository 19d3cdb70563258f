/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP. The vault is a service of its
 * own (`VaultService`, services/vault, on its own store): this one asks it through `VaultPort` and gets from it the
 * keys it derived from the vault root before the split.
 */
import {
  GIFT_CARD_STREAM_PREFIXES,
  transactionsPatterns,
  VAULT_STREAM_PREFIXES,
  type EmbedBuyerPin,
} from '@switchyard/contracts';
import type { MessageBus } from '@switchyard/bus';
import type { RpcHandlers } from '@switchyard/rpc';
import { RetentionSweeper, ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import type { ThreeDSecureDirectory } from '@switchyard/connectors';
import { AuthorizationStatsSlice } from './authorization-stats/authorization-stats.slice';
import { authorizationStatsRetention } from './authorization-stats/authorization-stats.retention';
import { idempotencyRetention } from './idempotency/idempotency.retention';
import { FlowRules } from './flow-rules/flow-rules.slice';
import { PaymentServices } from './payment-services/payment-services.slice';
import { ProviderConnectors, type ProviderSettings } from './transactions/provider-connectors';
import { OneOffCardShredder } from './transactions/one-off-cards';
import { Transactions } from './transactions/transactions.slice';
import { transactionsUpcasters } from './event-schema';
import { KnownMerchantAccounts } from './merchant-account-settings';
import type { NetworkTokenMerchantAccounts } from '@switchyard/vault';
import type { Settings } from '@switchyard/config';
import { withoutStreams } from '@switchyard/eventstore';
import type { GiftCardSource } from './transactions/gift-card-payments';
import { giftCardDirectoryRpcHandlers, giftCardServiceDirectory, type GiftCardServices } from './gift-card-services';
import type { VaultPort } from './vault-port';
import type { CardForwarding } from './transactions/provider-connectors';
import { simulatorDirectory, type ThreeDSecureDirectoryDefinition } from './transactions/three-d-secure';

export { simulatorDirectory, type ThreeDSecureDirectoryDefinition } from './transactions/three-d-secure';

/** Two 32-byte keys (`GiftCardLegacyKeys` of @switchyard/vault), as this service passes them on unread. */
interface GiftCardLegacyKeysOf {
  readonly secret: Buffer;
  readonly responses: Buffer;
}

/** The vault service as this one uses it (`VaultService` of @switchyard/vault, in process for now). */
export interface TransactionsVault {
  /** Everything the slices ask of the vault. */
  readonly port: VaultPort;
  /** Card-bearing calls (providers, the 3-D Secure directory): aliases swapped back only by the vault's forwarder. */
  readonly cardForwarding: CardForwarding;
  /** The keys this service derived from the vault root before the split, with the same values. */
  keysForTransactions(): {
    readonly fingerprintKey: Buffer;
    readonly returnTokenKey: Buffer;
    /** The gift card vault's keys derived from the vault root (never the root), passed on to the gift cards service. */
    readonly giftCardLegacyKeys: GiftCardLegacyKeysOf;
  };
  /** Tells the vault which card connections take network tokens: this service's payment services. */
  useConnections(connections: Pick<PaymentServices, 'activeConnections'>): void;
}

export interface TransactionsServiceOptions extends ServiceHostOptions {
  /** The vault service. */
  readonly vault: TransactionsVault;
  /** Where providers live and where they send notifications; without it no transaction can reach a provider. */
  readonly providers?: ProviderSettings;
  /**
   * The 3-D Secure directory server, built per merchant account with the vault's forwarder as its fetch (held to its
   * declared hosts); absent: 3-D Secure cannot run (recorded as a setup error).
   */
  readonly directory?: ThreeDSecureDirectoryDefinition;
  /** Default true. */
  readonly issuerMandatedThreeDSecure?: boolean;
  /**
   * Refuse a card given by number that the gateway did not hand to the vault (400 `card_data_not_handed_over`): the
   * distributed runtime's transactions process, outside the card data environment. Default false (in process, a
   * caller may still give one: it goes to the vault at once).
   */
  readonly cardDataByHandOverOnly?: boolean;
  /** Default 10 minutes (BUYER_APPROVAL_WINDOW_MS). */
  readonly buyerApprovalWindowMs?: number;
  /** Default 1 minute (GIFT_CARD_RECOVERY_AFTER_MS). */
  readonly giftCardRecoveryAfterMs?: number;
  /** How long a split payment waits for the gift cards service's answer to a stored card's redemption or reversal. */
  readonly giftCardOutcomeTimeoutMs?: number;
  /** Default 1 minute (RECONCILE_AFTER_MS). */
  readonly reconcileAfterMs?: number;
  /** Identity's merchant accounts (whether one exists); absent: not checked. */
  readonly merchantAccounts?: NetworkTokenMerchantAccounts;
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
  | 'providers'
  | 'directory'
  | 'issuerMandatedThreeDSecure'
  | 'buyerApprovalWindowMs'
  | 'giftCardRecoveryAfterMs'
  | 'giftCardOutcomeTimeoutMs'
  | 'reconcileAfterMs'
  | 'retention'
> {
  const directoryUrl = settings.THREE_DS_DIRECTORY_URL ?? where.mockCard?.baseUrl;
  return {
    ...(directoryUrl
      ? { directory: simulatorDirectory({ baseUrl: directoryUrl, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS }) }
      : {}),
    issuerMandatedThreeDSecure: settings.ISSUER_MANDATED_3DS,
    buyerApprovalWindowMs: settings.BUYER_APPROVAL_WINDOW_MS,
    giftCardRecoveryAfterMs: settings.GIFT_CARD_RECOVERY_AFTER_MS,
    // The gift cards service's answer: the provider's own time limit, and a margin for the two relays between.
    giftCardOutcomeTimeoutMs: settings.MOCK_CARD_TIMEOUT_MS + 5_000,
    reconcileAfterMs: settings.RECONCILE_AFTER_MS,
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

/** A directory server per merchant account, its calls through the vault's forwarder for that account. */
function directoriesFor(
  definition: ThreeDSecureDirectoryDefinition,
  forwarding: CardForwarding,
): (merchantAccountId: string) => ThreeDSecureDirectory {
  const directories = new Map<string, ThreeDSecureDirectory>();
  return (merchantAccountId) => {
    let directory = directories.get(merchantAccountId);
    if (!directory) {
      directory = definition.create(forwarding.fetchFor(merchantAccountId, definition.hosts));
      directories.set(merchantAccountId, directory);
    }
    return directory;
  };
}

export { merchantAccountsOverRpc } from './merchant-account-settings';
export * from './gift-card-services';

/** Streams of this store that other services own now: they neither read nor write them here. */
export const TRANSACTIONS_MOVED_STREAMS: readonly string[] = [...GIFT_CARD_STREAM_PREFIXES, ...VAULT_STREAM_PREFIXES];

export class TransactionsService {
  readonly paymentServices: PaymentServices;
  readonly flowRules: FlowRules;
  /** The merchant accounts' gift card services, for the gift cards service. */
  readonly giftCardServices: GiftCardServices;
  readonly transactions: Transactions;
  /** Authorization rate and latency per connection and minute (the operator dashboard's chart). */
  readonly authorizationStats: AuthorizationStatsSlice;
  /**
   * For the gift cards service: the vault root, under which the stored gift cards' numbers and PINs were sealed before
   * it had a key of its own (`legacyKey`: it seals them again under GIFT_CARDS_KEY), and the Idempotency-Key
   * fingerprint key its moved keys were recorded with.
   */
  readonly giftCardKeys: { readonly legacyKeys: GiftCardLegacyKeysOf; readonly fingerprintKey: Buffer };
  private readonly host: ServiceHost;
  private readonly holdWindowMs: number;
  private readonly giftCardRecoveryAfterMs: number;
  private readonly reconcileAfterMs: number;
  /** The gift cards service, once composed (`useGiftCards`): a split payment's stored cards. */
  private giftCardSource: GiftCardSource | null = null;
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
    // Stored gift cards and the vault moved to their services' stores (their storages' migrations).
    this.host = new ServiceHost({
      ...options,
      store: withoutStreams(options.store, TRANSACTIONS_MOVED_STREAMS),
      upcasters: transactionsUpcasters,
    });
    // Card-bearing provider calls go through the vault's forwarder.
    const connectors = new ProviderConnectors(
      options.providers ?? { publicBaseUrl: () => 'http://127.0.0.1' },
      options.vault.cardForwarding,
    );
    this.paymentServices = new PaymentServices(this.host.context, undefined, (id) => connectors.notificationUrl(id));
    this.flowRules = new FlowRules(this.host.context, this.paymentServices);
    options.vault.useConnections(this.paymentServices);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    // The keys derived from the vault root before the split: handed over by the vault, unchanged.
    const vaultKeys = options.vault.keysForTransactions();
    this.holdWindowMs = options.buyerApprovalWindowMs ?? 10 * 60 * 1000;
    this.giftCardRecoveryAfterMs = options.giftCardRecoveryAfterMs ?? 60 * 1000;
    this.reconcileAfterMs = options.reconcileAfterMs ?? 60 * 1000;
    const fingerprintKey = vaultKeys.fingerprintKey;
    this.giftCardKeys = { legacyKeys: vaultKeys.giftCardLegacyKeys, fingerprintKey };
    this.giftCardServices = giftCardServiceDirectory(this.paymentServices, (connection) =>
      connectors.giftCardConnectorFor(connection),
    );
    this.transactions = new Transactions(this.host.context, {
      paymentServices: this.paymentServices,
      flowRules: this.flowRules,
      directory: options.directory ? directoriesFor(options.directory, options.vault.cardForwarding) : null,
      settings: {
        issuerMandatedThreeDSecure: options.issuerMandatedThreeDSecure ?? true,
        holdWindowMs: this.holdWindowMs,
        returnTokenKey: vaultKeys.returnTokenKey,
        giftCardRecoveryAfterMs: this.giftCardRecoveryAfterMs,
        ...(options.giftCardOutcomeTimeoutMs !== undefined
          ? { giftCardOutcomeTimeoutMs: options.giftCardOutcomeTimeoutMs }
          : {}),
        cardDataByHandOverOnly: options.cardDataByHandOverOnly ?? false,
      },
      giftCardCredentials: {
        describe: async (merchantAccountId, giftCardId) =>
          (await this.giftCardSource?.describe(merchantAccountId, giftCardId)) ?? null,
        belongsTo: async (merchantAccountId, giftCardId, buyer: NonNullable<EmbedBuyerPin>) =>
          (await this.giftCardSource?.belongsTo(merchantAccountId, giftCardId, buyer)) ?? false,
        forgetHandedOver: async (merchantAccountId, giftCardIds) =>
          this.giftCardSource?.forgetHandedOver(merchantAccountId, giftCardIds),
      },
      onBackgroundError: this.onBackgroundError,
      vault: options.vault.port,
      connectors,
      fingerprintKey,
      merchantAccounts: options.merchantAccounts ? new KnownMerchantAccounts(options.merchantAccounts) : null,
    });
    const oneOffCards = new OneOffCardShredder(options.db, options.vault.port, this.onBackgroundError);
    this.oneOffCards = { shredDue: () => oneOffCards.shredDue(), stop: () => oneOffCards.stop() };
    this.host.add(this.paymentServices, this.flowRules, this.transactions, oneOffCards);
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
    const shortest = Math.min(this.holdWindowMs, this.giftCardRecoveryAfterMs, this.reconcileAfterMs);
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

  /**
   * Follows the gift cards service's answers to split tender's requests (`gift-cards.events` as `groupId`: the
   * in-process bus embedded, Kafka distributed); a stored gift card is redeemed only while this runs.
   */
  followGiftCardOutcomes(options: { readonly bus: MessageBus; readonly groupId: string }): Promise<void> {
    return this.transactions.followGiftCardOutcomes(options);
  }

  async stop(): Promise<void> {
    clearInterval(this.holdTimer);
    await this.transactions.stopFollowingGiftCardOutcomes();
    await this.retention?.stop();
    await this.host.stop();
    await this.transactions.forgetSecurityCodesNow();
    await this.oneOffCards.stop();
  }

  /** Read-your-writes for the read models, and the one-off cards of completed requests shredded. */
  async catchUp(): Promise<void> {
    await this.host.catchUp();
    await this.oneOffCards.shredDue();
  }

  /**
   * Where a split payment's stored gift cards come from: the gift cards service (composed after this one, in process)
   * or its process (`giftCardsOverRpc`).
   */
  useGiftCards(source: GiftCardSource): void {
    this.giftCardSource = source;
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(transactionsPatterns.ping);
  }

  /**
   * What the gift cards process asks of this one (`giftCardDirectoryPatterns`; rpc-services admits only it): a
   * merchant account's active gift card service with what its connector is built from, a connection's name as it is
   * now, and the key hand-over at its start (base64; the keys stay derived from this service's vault root).
   */
  giftCardDirectoryRpcHandlers(): RpcHandlers {
    return giftCardDirectoryRpcHandlers(this.paymentServices, this.giftCardKeys);
  }
}
