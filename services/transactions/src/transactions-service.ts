/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP.
 */
import { transactionsPatterns } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { hkdfSync, randomBytes } from 'node:crypto';
import { PaymentServices } from './payment-services/payment-services.slice';
import { ProviderConnectors, type ProviderSettings } from './transactions/provider-connectors';
import { Transactions } from './transactions/transactions.slice';
import { CardVault, loadVaultKey } from './vault/card-vault';
import type { Settings } from '@switchyard/config';

export interface TransactionsServiceOptions extends ServiceHostOptions {
  /** The card vault key (`loadVaultKey`); default: a random key, for tests that keep nothing. */
  readonly vaultKey?: Buffer;
  /** Where providers live and where they send notifications; without it no transaction can reach a provider. */
  readonly providers?: ProviderSettings;
}

/**
 * The options every runtime reads from its settings (the embedded one and the transactions process alike); each
 * says where its gateway and its simulator are.
 */
export function transactionsOptionsFrom(
  settings: Settings,
  where: { readonly publicBaseUrl: () => string; readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string } },
): Pick<TransactionsServiceOptions, 'pollIntervalMs' | 'vaultKey' | 'providers'> {
  return {
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
  readonly transactions: Transactions;
  readonly vault: CardVault;
  private readonly host: ServiceHost;

  constructor(options: TransactionsServiceOptions) {
    this.host = new ServiceHost(options);
    this.paymentServices = new PaymentServices(this.host.context);
    const vaultKey = options.vaultKey ?? randomBytes(32);
    this.vault = new CardVault(options.db, { key: vaultKey, now: this.host.context.now });
    this.transactions = new Transactions(this.host.context, {
      paymentServices: this.paymentServices,
      vault: this.vault,
      connectors: new ProviderConnectors(options.providers ?? { publicBaseUrl: () => 'http://127.0.0.1' }),
      fingerprintKey: Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), 'switchyard/idempotency-fingerprint/v1', 32)),
    });
    this.host.add(this.paymentServices, this.transactions);
  }

  start(): Promise<void> {
    return this.host.catchUpAndFollow();
  }

  stop(): Promise<void> {
    return this.host.stop();
  }

  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(transactionsPatterns.ping);
  }
}
