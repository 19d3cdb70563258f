/**
 * The vault's slices and keys, built on one service context: the card vault and its key ring, buyers, their stored
 * payment methods, checkout sessions, network tokens, digital wallets and the account updater. Today the
 * transactions service composes them on its own host (docs/architecture.md, The vault); the vault's process will
 * compose the same object on a host of its own.
 */
import type Database from 'better-sqlite3';
import { hkdfSync, randomBytes } from 'node:crypto';
import type { BinData } from '@switchyard/bin-data';
import { connectorRegistry, SimulatorTokenServiceProvider, type TokenServiceProvider } from '@switchyard/connectors';
import type { EventStore } from '@switchyard/eventstore';
import { SqliteEventStore } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { ServiceSlice } from '@switchyard/service';
import { AccountUpdater } from './account-updater/account-updater.slice';
import { accountUpdaterServiceFor, type AccountUpdaterProviders } from './account-updater/account-updater-service';
import { Buyers } from './buyers/buyers.slice';
import { CheckoutSessions } from './checkout-sessions/checkout-sessions.slice';
import { DigitalWallets } from './digital-wallets/digital-wallets.slice';
import { PazePayments } from './digital-wallets/paze-payments';
import { pazeDevelopmentSigningKeys, type PazeSigningKeys } from './digital-wallets/paze-signing-keys';
import {
  NetworkTokens,
  type NetworkTokenConnections,
  type NetworkTokenMerchantAccounts,
} from './network-tokens/network-tokens.slice';
import { buyerDirectory } from './payment-methods/buyer-directory';
import { PaymentMethods, type BuyerDirectory } from './payment-methods/payment-methods.slice';
import { CardAliases } from './forwarder/card-aliases';
import { forwardHosts, type ForwardHosts } from './forwarder/forward-hosts';
import { OutboundForwarder } from './forwarder/outbound-forwarder';
import { CardVault } from './vault/card-vault';
import { keyRing, openVaultKeys, type KeyRing, type VaultKeys } from './vault/vault-keys';
import type { VaultContext } from './vault-context';

export interface VaultSlicesOptions {
  /** The host's context the slices append and project through. */
  readonly context: VaultContext;
  /** The SQLite file of the vault's rows, keys and read models (the host's). */
  readonly db: Database.Database;
  /** The host's event store; SQLite on `db` lets the vault rely on the events' FULL commit for its rows. */
  readonly store: EventStore;
  /** The vault's key-encryption keys (`loadKeyRing`: VAULT_KEY, VAULT_RETIRED_KEYS); default: a random key, for tests that keep nothing. */
  readonly keyRing?: KeyRing;
  /** Shorthand for a key ring of one key (tests). */
  readonly vaultKey?: Buffer;
  /** BIN data (card type, issuer country and name in card summaries). */
  readonly binData: BinData;
  /** The simulator (network token service, account updater service); absent: neither is reachable. */
  readonly providers?: AccountUpdaterProviders;
  /** The network token service; default the simulator's (`providers.mockCard`). */
  readonly tokenService?: TokenServiceProvider;
  /** Identity's merchant account settings; absent: every account has network tokens and the account updater off. */
  readonly merchantAccounts?: NetworkTokenMerchantAccounts;
  /** Whether a merchant account's card connections take network tokens (the transactions service's payment services). */
  readonly connections: NetworkTokenConnections;
  /** Whether `POST /payment-methods/{id}/network-tokens` provisions (NETWORK_TOKENS_API_PROVISIONING); default true. */
  readonly networkTokensApiProvisioning?: boolean;
  /** How long a method stored by a purchase waits for the provider's vault token (VAULT_TOKEN_TIMEOUT_MS). */
  readonly vaultTokenTimeoutMs?: number;
  /** Paze's signing keys (PAZE_SIGNING_KEYS, `loadPazeSigningKeys`; null: none, Paze refused); absent: the development key (docs/paze.md). */
  readonly pazeSigningKeys?: PazeSigningKeys | null;
  /** How long a card alias stands for its card (`CardAliases`, CARD_ALIAS_TTL_MS); default 60 s. */
  readonly cardAliasTtlMs?: number;
  /** The hosts the forwarder may send a card to (`forwardHosts`); default the providers' own and loopback. */
  readonly forwardHosts?: ForwardHosts;
  /** Told of background work that failed (it is retried). */
  readonly onBackgroundError: (error: unknown) => void;
}

export class VaultSlices {
  readonly vaultKeys: VaultKeys;
  readonly vault: CardVault;
  /** A 32-byte key for sealing one kind of secret at rest (derived from the vault root under `label`). */
  readonly sealingKey: (label: string) => Buffer;
  readonly buyers: Buyers;
  readonly buyerDirectory: BuyerDirectory;
  readonly checkoutSessions: CheckoutSessions;
  readonly paymentMethods: PaymentMethods;
  readonly networkTokens: NetworkTokens;
  readonly digitalWallets: DigitalWallets;
  /** Paze payloads of payments, decrypted with the merchant's key. */
  readonly paze: PazePayments;
  readonly accountUpdater: AccountUpdater;
  /** Short-lived aliases of card numbers and security codes, swapped back only by `forwarder`. */
  readonly cardAliases: CardAliases;
  /** The provider calls that carry card aliases: the only place they become card values again. */
  readonly forwarder: OutboundForwarder;

  constructor(options: VaultSlicesOptions) {
    const { context } = options;
    this.vaultKeys = openVaultKeys(
      options.db,
      options.keyRing ?? keyRing(options.vaultKey ?? randomBytes(32)),
      context.now,
    );
    // Every vault-derived key comes from the root, which a rotation of the key-encryption key leaves unchanged.
    const root = this.vaultKeys.root();
    this.sealingKey = (label) => Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), label, 32));
    // SQLite mode: the events are committed, FULL, on this same connection after every card they name.
    const syncedByEvents = options.store instanceof SqliteEventStore && options.store.database === options.db;
    this.vault = new CardVault(options.db, { keys: this.vaultKeys, now: context.now, syncedByEvents });
    this.cardAliases = new CardAliases(options.cardAliasTtlMs !== undefined ? { ttlMs: options.cardAliasTtlMs } : {});
    this.forwarder = new OutboundForwarder({
      aliases: this.cardAliases,
      hosts: options.forwardHosts ?? forwardHosts({ definitions: connectorRegistry.list() }),
    });
    this.buyers = new Buyers(context, {
      onDelete: (merchantAccountId, buyerId) => this.paymentMethods.deleteAllOfBuyer(merchantAccountId, buyerId),
    });
    this.buyerDirectory = buyerDirectory(this.buyers);
    this.checkoutSessions = new CheckoutSessions(context, {
      vault: this.vault,
      binData: options.binData,
      // Looked up when used: the payment methods slice is built next, and itself claims sessions.
      storedPaymentMethods: { usable: (merchantAccountId, id) => this.paymentMethods.usable(merchantAccountId, id) },
    });
    this.paymentMethods = new PaymentMethods(context, {
      vault: this.vault,
      binData: options.binData,
      buyers: this.buyerDirectory,
      checkoutSessions: this.checkoutSessions,
      ...(options.vaultTokenTimeoutMs !== undefined ? { vaultTokenTimeoutMs: options.vaultTokenTimeoutMs } : {}),
      onBackgroundError: options.onBackgroundError,
    });
    const simulator = options.providers?.mockCard;
    this.networkTokens = new NetworkTokens(context, {
      paymentMethods: this.paymentMethods,
      merchantAccounts: options.merchantAccounts ?? { get: async () => null },
      paymentServices: options.connections,
      tokenService:
        options.tokenService ??
        new SimulatorTokenServiceProvider({
          baseUrl: simulator?.baseUrl ?? 'http://127.0.0.1:4010',
          ...(simulator?.timeoutMs ? { timeoutMs: simulator.timeoutMs } : {}),
        }),
      sealingKey: this.sealingKey('switchyard/network-tokens/v1'),
      apiProvisioning: options.networkTokensApiProvisioning ?? true,
      onBackgroundError: options.onBackgroundError,
    });
    this.digitalWallets = new DigitalWallets(context, { sealingKey: this.sealingKey('switchyard/digital-wallets/v1') });
    this.paze = new PazePayments(
      this.digitalWallets,
      context.now,
      options.pazeSigningKeys === undefined ? pazeDevelopmentSigningKeys() : options.pazeSigningKeys,
    );
    this.accountUpdater = new AccountUpdater(context, {
      paymentMethods: this.paymentMethods,
      merchantAccounts: options.merchantAccounts ?? { get: async () => null },
      updater: accountUpdaterServiceFor(options.providers),
      onBackgroundError: options.onBackgroundError,
    });
  }

  /** The slices a host adds, in the order their projections must run. */
  slices(): readonly ServiceSlice[] {
    return [
      this.buyers,
      this.paymentMethods,
      this.checkoutSessions,
      this.digitalWallets,
      this.networkTokens,
      this.accountUpdater,
    ];
  }

  /**
   * The vault's projections of the transactions service's events (a stored method's usage, from `TransactionCreated`):
   * a host follows the store those events are in with them.
   */
  transactionEventProjections(): readonly Projection[] {
    return [this.paymentMethods.readModel.usageProjection];
  }

  /**
   * One round of the vault's timed work: expired checkout sessions, methods that waited too long for a vault token,
   * the account updater's results, the network tokens of deleted methods still owed a deletion.
   */
  backgroundRound(): Promise<unknown>[] {
    return [
      this.checkoutSessions.expireSessions(),
      this.paymentMethods.expireWaiting(),
      this.accountUpdater.poll(),
      this.networkTokens.deleteTokensOfDeletedMethods(),
    ];
  }

  stop(): void {
    this.networkTokens.stop();
  }
}
