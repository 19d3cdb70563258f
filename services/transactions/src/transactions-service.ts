/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP.
 */
import { transactionsPatterns } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { hkdfSync, randomBytes } from 'node:crypto';
import { loadBinData, type BinData } from '@switchyard/bin-data';
import { SimulatorDirectoryServer, type ThreeDSecureDirectory } from '@switchyard/connectors';
import { FlowRules } from './flow-rules/flow-rules.slice';
import { GiftCards } from './gift-cards/gift-cards.slice';
import { PaymentServices } from './payment-services/payment-services.slice';
import { ProviderConnectors, type ProviderSettings } from './transactions/provider-connectors';
import { Transactions } from './transactions/transactions.slice';
import { CardVault, loadVaultKey } from './vault/card-vault';
import { GiftCardVault } from './vault/gift-card-vault';
import type { Settings } from '@switchyard/config';

export interface TransactionsServiceOptions extends ServiceHostOptions {
  /** The card vault key (`loadVaultKey`); default: a random key, for tests that keep nothing. */
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
  /** Default 1 minute (RECONCILE_AFTER_MS). */
  readonly reconcileAfterMs?: number;
  /** Told of a failed round of the hold-window timer (it tries again on its next tick). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/**
 * The options every runtime reads from its settings (the embedded one and the transactions process alike); each
 * says where its gateway and its simulator are.
 */
export function transactionsOptionsFrom(
  settings: Settings,
  where: { readonly publicBaseUrl: () => string; readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string } },
): Pick<TransactionsServiceOptions, 'pollIntervalMs' | 'vaultKey' | 'providers' | 'binData' | 'directory' | 'issuerMandatedThreeDSecure' | 'buyerApprovalWindowMs' | 'giftCardRecoveryAfterMs' | 'reconcileAfterMs'> {
  const directoryUrl = settings.THREE_DS_DIRECTORY_URL ?? where.mockCard?.baseUrl;
  return {
    binData: loadBinData(settings.BIN_DATA_FILE ? { file: settings.BIN_DATA_FILE } : {}),
    ...(directoryUrl ? { directory: new SimulatorDirectoryServer({ baseUrl: directoryUrl, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS }) } : {}),
    issuerMandatedThreeDSecure: settings.ISSUER_MANDATED_3DS,
    buyerApprovalWindowMs: settings.BUYER_APPROVAL_WINDOW_MS,
    giftCardRecoveryAfterMs: settings.GIFT_CARD_RECOVERY_AFTER_MS,
    reconcileAfterMs: settings.RECONCILE_AFTER_MS,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    vaultKey: loadVaultKey({ ...(settings.VAULT_KEY ? { configured: settings.VAULT_KEY } : {}), dataDir: settings.dataDir }),
    providers: {
      publicBaseUrl: where.publicBaseUrl,
      ...(where.mockCard ? { mockCard: { ...where.mockCard, timeoutMs: settings.MOCK_CARD_TIMEOUT_MS } } : {}),
    },
  };
}

export class TransactionsService {
  readonly paymentServices: PaymentServices;
  readonly flowRules: FlowRules;
  readonly giftCards: GiftCards;
  readonly transactions: Transactions;
  readonly vault: CardVault;
  private readonly host: ServiceHost;
  private readonly holdWindowMs: number;
  private readonly giftCardRecoveryAfterMs: number;
  private readonly reconcileAfterMs: number;
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly onBackgroundError: (error: unknown) => void;

  constructor(options: TransactionsServiceOptions) {
    this.host = new ServiceHost(options);
    const connectors = new ProviderConnectors(options.providers ?? { publicBaseUrl: () => 'http://127.0.0.1' });
    this.paymentServices = new PaymentServices(this.host.context, undefined, (id) => connectors.notificationUrl(id));
    this.flowRules = new FlowRules(this.host.context, this.paymentServices);
    const vaultKey = options.vaultKey ?? randomBytes(32);
    const derived = (label: string) => Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), label, 32));
    this.holdWindowMs = options.buyerApprovalWindowMs ?? 10 * 60 * 1000;
    this.giftCardRecoveryAfterMs = options.giftCardRecoveryAfterMs ?? 60 * 1000;
    this.reconcileAfterMs = options.reconcileAfterMs ?? 60 * 1000;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.vault = new CardVault(options.db, { key: vaultKey, now: this.host.context.now });
    const fingerprintKey = derived('switchyard/idempotency-fingerprint/v1');
    this.giftCards = new GiftCards(this.host.context, {
      paymentServices: this.paymentServices,
      connectors,
      vault: new GiftCardVault(options.db, { key: vaultKey, now: this.host.context.now }),
      fingerprintKey,
    });
    this.transactions = new Transactions(this.host.context, {
      paymentServices: this.paymentServices,
      flowRules: this.flowRules,
      binData: options.binData ?? loadBinData({}),
      directory: options.directory ?? null,
      settings: {
        issuerMandatedThreeDSecure: options.issuerMandatedThreeDSecure ?? true,
        holdWindowMs: this.holdWindowMs,
        returnTokenKey: derived('switchyard/buyer-return-token/v1'),
        giftCardRecoveryAfterMs: this.giftCardRecoveryAfterMs,
      },
      giftCardCredentials: this.giftCards,
      onBackgroundError: this.onBackgroundError,
      vault: this.vault,
      connectors,
      fingerprintKey,
    });
    this.host.add(this.paymentServices, this.flowRules, this.giftCards, this.transactions);
  }

  /**
   * Serves once every read model is current; then, every so often, completes expired create holds and rolls back
   * gift card payments left unfinished, and reconciles authorizations whose outcome is still unknown.
   */
  async start(): Promise<void> {
    await this.host.catchUpAndFollow();
    const shortest = Math.min(this.holdWindowMs, this.giftCardRecoveryAfterMs, this.reconcileAfterMs);
    const every = Math.max(50, Math.min(Math.floor(shortest / 4), 5_000));
    let running = false;
    this.holdTimer = setInterval(() => {
      if (running) return;
      running = true;
      // Each round settles independently: one failing (a provider down) does not hold the others back.
      Promise.allSettled([this.transactions.expireHolds(), this.transactions.recoverGiftCardPayments(), this.transactions.reconcile(this.reconcileAfterMs)])
        .then((results) => results.forEach((r) => r.status === 'rejected' && this.onBackgroundError(r.reason)))
        .catch(this.onBackgroundError) // retried on the next tick
        .finally(() => {
          running = false;
        });
    }, every);
    this.holdTimer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.holdTimer);
    return this.host.stop();
  }

  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(transactionsPatterns.ping);
  }
}
