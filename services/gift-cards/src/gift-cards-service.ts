/**
 * The gift cards service: stored gift cards (`gift-card-<uuid>`) with their number and PIN in the gift card vault,
 * issue, activate and balances at the merchant account's gift card provider, over its own event store and local
 * SQLite (`gift-cards` in DATA_DIR). Framework-free like the other services: the embedded runtime registers its
 * handlers in process; in the distributed runtime the transactions process hosts it and serves its RPC patterns
 * (`gift-cards.*`, which the gateway routes there).
 *
 * The merchant accounts' gift card services are the transactions service's connections (`GiftCardServiceDirectory`).
 * A stored card's usage comes from the split payments' `GiftCardRedemptionSucceeded` on the transaction streams: the
 * usage read model follows the transactions service's store (`transactionEvents`) with its own checkpoint here.
 */
import type { GiftCardCredentials } from '@switchyard/connectors';
import { giftCardPatterns, type EmbedBuyerPin } from '@switchyard/contracts';
import type { EventStore } from '@switchyard/eventstore';
import { Projector } from '@switchyard/readmodel';
import type { RpcHandler, RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { giftCardsUpcasters } from './event-schema';
import { GiftCards, type GiftCardServiceDirectory } from './gift-cards/gift-cards.slice';
import { GiftCardVault } from './vault/gift-card-vault';

export interface GiftCardsServiceOptions extends ServiceHostOptions {
  /** The gift cards key (`loadGiftCardsKey`): its vault's number/PIN ciphertexts and sealed answers. */
  readonly key: Buffer;
  /**
   * The transactions service's vault root, under which stored cards were sealed before the gift cards key: the start
   * seals them again under `key` (`GiftCardVault.rewrapLegacy`). Absent: there are none.
   */
  readonly legacyKey?: Buffer;
  /** Keys the request fingerprints kept with Idempotency-Keys (they cover card numbers and PINs). */
  readonly fingerprintKey: Buffer;
  readonly services: GiftCardServiceDirectory;
  /** The transactions service's store, for the stored cards' usage; absent: no usage is counted. */
  readonly transactionEvents?: EventStore;
}

export class GiftCardsService {
  readonly giftCards: GiftCards;
  private readonly host: ServiceHost;
  private readonly usage: Projector | null;
  private readonly vault: GiftCardVault;

  constructor(options: GiftCardsServiceOptions) {
    this.host = new ServiceHost({ ...options, upcasters: giftCardsUpcasters });
    this.vault = new GiftCardVault(options.db, {
      key: options.key,
      ...(options.legacyKey ? { legacyKey: options.legacyKey } : {}),
      now: this.host.context.now,
    });
    this.giftCards = new GiftCards(this.host.context, {
      services: options.services,
      vault: this.vault,
      fingerprintKey: options.fingerprintKey,
    });
    this.host.add(this.giftCards);
    this.usage = options.transactionEvents
      ? new Projector(options.db, options.transactionEvents, [this.giftCards.readModel.usageProjection], {
          ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        })
      : null;
  }

  /** Seals what is left under the legacy key again, brings the read models up to date, then follows both logs. */
  async start(): Promise<void> {
    this.vault.rewrapLegacy();
    await this.catchUp();
    await this.host.catchUpAndFollow();
    this.usage?.start();
  }

  async stop(): Promise<void> {
    await this.usage?.stop();
    await this.host.stop();
  }

  /** Read-your-writes: the stored cards and their usage (a payment that just used a card shows in its count). */
  async catchUp(): Promise<void> {
    await Promise.all([this.host.catchUp(), this.usage?.catchUp()]);
  }

  /** A stored card's number and PIN for a split payment's provider call (never log, persist or emit them). */
  credentialsFor(merchantAccountId: string, giftCardId: string): GiftCardCredentials | null {
    return this.giftCards.credentialsFor(merchantAccountId, giftCardId);
  }

  belongsTo(merchantAccountId: string, giftCardId: string, buyer: NonNullable<EmbedBuyerPin>): boolean {
    return this.giftCards.belongsTo(merchantAccountId, giftCardId, buyer);
  }

  rpcHandlers(): RpcHandlers {
    const handlers: Record<string, RpcHandler> = { ...this.host.rpcHandlers(giftCardPatterns.ping) };
    // The reads show usage up to the payments made so far (they were read-your-writes when one service held both).
    for (const pattern of [giftCardPatterns.list, giftCardPatterns.get, giftCardPatterns.buyerList]) {
      const read = handlers[pattern]!;
      handlers[pattern] = async (payload, call) => {
        await this.usage?.catchUp();
        return read(payload, call);
      };
    }
    return handlers;
  }
}
