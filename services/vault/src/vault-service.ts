/**
 * The vault service (issue 19): the vault's slices (`VaultSlices`: the card vault and its keys, buyers, stored
 * payment methods, checkout sessions, network tokens, digital wallets, the account updater, card aliases and the
 * outbound forwarder) on a `ServiceHost` of its own, over its own store and SQLite file (`vault` in DATA_DIR:
 * `openVaultStorage`), relayed to `vault.events` (`vaultRelay`). Framework-free like the other services: the embedded
 * runtime registers its handlers in process; in the distributed runtime it is a process of its own (`main.ts`),
 * which the transactions process asks over RPC (`portRpcHandlers`).
 *
 * What the transactions service asks of it goes through `port` (its `VaultPort`, every answer a Promise); the keys
 * transactions derived from the vault root before the split are handed over by `keysForTransactions`, with the same
 * values. A stored method's usage comes from the transactions service's `TransactionCreated`: that projection follows
 * the transactions store (`transactionEvents`, embedded) with its own checkpoint here, or its topic
 * (`transactionsTopic`, distributed).
 */
import { transactionsTopic, vaultPatterns, type CardHandOverRequest } from '@switchyard/contracts';
import type { MessageBus } from '@switchyard/bus';
import type { EventStore } from '@switchyard/eventstore';
import { Projector, TopicProjection } from '@switchyard/readmodel';
import type { RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { loadBinData } from '@switchyard/bin-data';
import type { ProviderFetch } from '@switchyard/connectors';
import { InProcessVault } from './in-process-vault';
import type { NetworkTokenConnections } from './network-tokens/network-tokens.slice';
import { storedMethodUsedBy } from './payment-methods/payment-methods.read-model';
import { VaultSlices, type VaultSlicesOptions } from './vault-slices';
import { vaultPortRpcHandlers } from './vault-rpc';
import { giftCardLegacyKeysOf, type GiftCardLegacyKeys } from './vault/vault-cipher';

export interface VaultServiceOptions
  extends ServiceHostOptions,
    Omit<VaultSlicesOptions, 'context' | 'db' | 'store' | 'binData' | 'connections' | 'onBackgroundError'> {
  /** BIN data (card summaries); default: the shipped sample. */
  readonly binData?: VaultSlicesOptions['binData'];
  /** The transactions service's store: `TransactionCreated` counts a stored method's use (embedded runtime). */
  readonly transactionEvents?: EventStore;
  /**
   * Its topic instead (distributed runtime): the usage follows `transactions.events` as `groupId`. Neither this nor
   * `transactionEvents`: no use is counted.
   */
  readonly transactionsTopic?: {
    readonly bus: MessageBus;
    readonly groupId: string;
    readonly comparePositions: (a: string, b: string) => number;
  };
  /** Told of background work that failed (it is retried on the next round). */
  readonly onBackgroundError?: (error: unknown) => void;
  /** How long a card handed over by the gateway waits for its payment before it is removed; default 10 minutes. */
  readonly cardHandOverTtlMs?: number;
}

/** The keys the transactions service derived from the vault root before the split, handed over with the same values. */
export interface TransactionsVaultKeys {
  /** Keys the request fingerprints kept with Idempotency-Keys. */
  readonly fingerprintKey: Buffer;
  /** Keys the buyer-return tokens. */
  readonly returnTokenKey: Buffer;
  /**
   * The two keys the gift card vault derived from the vault root, under which stored gift cards were sealed before
   * GIFT_CARDS_KEY (the gift cards service's legacy keys): never the root itself.
   */
  readonly giftCardLegacyKeys: GiftCardLegacyKeys;
}

export class VaultService {
  readonly slices: VaultSlices;
  /** The transactions service's `VaultPort`, answered in this process. */
  readonly port: InProcessVault;
  /**
   * Card-bearing calls (the providers', the 3-D Secure directory's): built with the aliases the port issues
   * (`cardAliases`), sent through the forwarder's fetch, which swaps them back and calls only the declared hosts.
   */
  readonly cardForwarding: {
    fetchFor(merchantAccountId: string, hosts: readonly string[]): ProviderFetch;
  };
  private readonly host: ServiceHost;
  private readonly usage: Projector | null;
  private readonly usageFromTopic: TopicProjection | null;
  private readonly onBackgroundError: (error: unknown) => void;
  private connections: NetworkTokenConnections = { activeConnections: () => [] };
  private timer: NodeJS.Timeout | undefined;
  private readonly roundEveryMs: number;

  constructor(options: VaultServiceOptions) {
    this.host = new ServiceHost(options);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    const binData = options.binData ?? loadBinData({});
    this.slices = new VaultSlices({
      ...options,
      context: this.host.context,
      binData,
      // Looked up when used: the transactions service's payment services, composed after this service.
      connections: { activeConnections: (merchantAccountId) => this.connections.activeConnections(merchantAccountId) },
      onBackgroundError: this.onBackgroundError,
    });
    this.host.add(...this.slices.slices());
    this.port = new InProcessVault(
      this.slices,
      binData,
      options.cardHandOverTtlMs !== undefined ? { handOverTtlMs: options.cardHandOverTtlMs } : {},
    );
    this.cardForwarding = {
      fetchFor: (merchantAccountId, hosts) => this.slices.forwarder.fetchFor(merchantAccountId, hosts),
    };
    this.usage = options.transactionEvents
      ? new Projector(options.db, options.transactionEvents, [...this.slices.transactionEventProjections()], {
          ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        })
      : null;
    this.usageFromTopic =
      !this.usage && options.transactionsTopic
        ? new TopicProjection(options.db, this.slices.paymentMethods.readModel.usageProjection, {
            ...options.transactionsTopic,
            topic: transactionsTopic,
            types: new Set(['TransactionCreated']),
            // A payment by a card given with it (most of them) changes no usage: no commit.
            applies: (event) => storedMethodUsedBy(event) !== null,
            seenTable: 'payment_method_usage_events',
            // Read by the next use of the method, not by the payment that used it.
            batched: true,
          })
        : null;
    const waitingAtMost = this.slices.paymentMethods.vaultTokenTimeoutMs;
    this.roundEveryMs = Math.max(50, Math.min(Math.floor(waitingAtMost / 4), 5_000));
  }

  /** Whether a merchant account's card connections take network tokens: the transactions service's payment services. */
  useConnections(connections: NetworkTokenConnections): void {
    this.connections = connections;
  }

  keysForTransactions(): TransactionsVaultKeys {
    return {
      fingerprintKey: this.slices.sealingKey('switchyard/idempotency-fingerprint/v1'),
      returnTokenKey: this.slices.sealingKey('switchyard/buyer-return-token/v1'),
      giftCardLegacyKeys: giftCardLegacyKeysOf(this.slices.vaultKeys.root()),
    };
  }

  /**
   * Serves once every read model is current; then follows both logs and, every so often, runs the vault's timed
   * work (`VaultSlices.backgroundRound`).
   */
  async start(): Promise<void> {
    await this.catchUp();
    await this.host.catchUpAndFollow();
    this.usage?.start();
    await this.usageFromTopic?.start();
    let running = false;
    this.timer = setInterval(() => {
      if (running) return;
      running = true;
      Promise.allSettled([
        ...this.slices.backgroundRound(),
        Promise.resolve().then(() => this.port.sweepHandedOverCards()),
      ])
        .then((results) => results.forEach((r) => r.status === 'rejected' && this.onBackgroundError(r.reason)))
        .finally(() => {
          running = false;
        });
    }, this.roundEveryMs);
    this.timer.unref();
  }

  /**
   * Distributed runtime, before `start`: the stored methods' usage folded once from the transactions service's store
   * when it never was (a data directory of a release that kept the vault in the transactions service, or ran
   * embedded: those payments never reached this broker, or are past the topic's retention), from its SQLite file in
   * the same DATA_DIR when it is there. Answers whether it folded.
   */
  foldUsageFrom(transactionsFile: string): Promise<boolean> {
    return this.usageFromTopic?.foldFromSqliteFile(transactionsFile) ?? Promise.resolve(false);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.port.releaseTakenCards();
    this.slices.stop();
    await this.usage?.stop();
    await this.usageFromTopic?.stop();
    await this.host.stop();
  }

  /** Read-your-writes: the vault's read models and the stored methods' usage. */
  async catchUp(): Promise<void> {
    await Promise.all([this.host.catchUp(), this.usage?.catchUp()]);
  }

  rpcHandlers(): RpcHandlers {
    return {
      ...this.host.rpcHandlers(vaultPatterns.ping),
      // The gateway's, for a POST /transactions: the card data never reaches the transactions service.
      [vaultPatterns.handOverCard]: async (payload) => this.port.handOverCard(payload as CardHandOverRequest),
    };
  }

  /**
   * The vault's own process: what the transactions process asks (its `VaultPort`, the forwarder, the key hand-over;
   * `vault-rpc.ts`). `forwardTimeoutMs`: the longest a forwarded provider call may take.
   */
  portRpcHandlers(forwardTimeoutMs: number): RpcHandlers {
    return vaultPortRpcHandlers({
      port: this.port,
      cardForwarding: this.cardForwarding,
      keys: () => this.keysForTransactions(),
      forwardTimeoutMs,
    });
  }
}
