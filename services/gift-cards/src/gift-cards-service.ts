/**
 * The gift cards service: stored gift cards (`gift-card-<uuid>`) with their number and PIN in the gift card vault,
 * issue, activate and balances at the merchant account's gift card provider, over its own event store and local
 * SQLite (`gift-cards` in DATA_DIR). Framework-free like the other services: the embedded runtime registers its
 * handlers in process; in the distributed runtime it is a process of its own (`main.ts`) serving `gift-cards.*`.
 *
 * The merchant accounts' gift card services are the transactions service's connections (`GiftCardServiceDirectory`).
 * A stored card's usage comes from the split payments' `GiftCardRedemptionSucceeded` on the transaction streams: the
 * usage read model follows the transactions service's store (`transactionEvents`, embedded: read-your-writes) or its
 * topic `transactions.events` (`transactionsTopic`, distributed: a moment behind), either with its own bookkeeping here.
 * A split payment's stored cards are described through `describe` and `belongsTo` (`GiftCardSource` of the
 * transactions service), in process or over `paymentRpcHandlers`; their redemptions and reversals are asked of
 * `redemptions` with events, and only this service reads their number and PIN (`credentialsFor`).
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { GiftCardLegacyKeys } from '@switchyard/vault';
import type { MessageBus } from '@switchyard/bus';
import { giftCardDigitsOf, type GiftCardCredentials } from '@switchyard/connectors';
import {
  giftCardPatterns,
  giftCardPaymentPatterns,
  type EmbedBuyerPin,
  type GiftCardBelongsToRequest,
  type GiftCardDescribeRequest,
  type GiftCardDigitsWire,
  type GiftCardForgetHandOverRequest,
  type GiftCardHandOver,
  type GiftCardHandOverRequest,
} from '@switchyard/contracts';
import type { EventStore } from '@switchyard/eventstore';
import { Projector, type TopicProjection } from '@switchyard/readmodel';
import type { RpcHandler, RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { giftCardsUpcasters } from './event-schema';
import { giftCardUsageFromTopic } from './gift-cards/gift-card-usage-consumer';
import { GiftCards, type GiftCardServiceDirectory } from './gift-cards/gift-cards.slice';
import { GiftCardRedemptionConsumer } from './redemptions/gift-card-redemption-consumer';
import { GiftCardRedemptions } from './redemptions/gift-card-redemptions';
import { GiftCardVault } from './vault/gift-card-vault';

export interface GiftCardsServiceOptions extends ServiceHostOptions {
  /** The gift cards key (`loadGiftCardsKey`): its vault's number/PIN ciphertexts and sealed answers. */
  readonly key: Buffer;
  /**
   * The transactions service's vault root, under which stored cards were sealed before the gift cards key: the start
   * seals them again under `key` (`GiftCardVault.rewrapLegacy`). Absent: there are none.
   */
  readonly legacyKeys?: GiftCardLegacyKeys;
  /** Keys the request fingerprints kept with Idempotency-Keys (they cover card numbers and PINs). */
  readonly fingerprintKey: Buffer;
  readonly services: GiftCardServiceDirectory;
  /** The transactions service's store, for the stored cards' usage (embedded runtime). */
  readonly transactionEvents?: EventStore;
  /**
   * Its topic instead (distributed runtime): the usage follows `transactions.events` as `groupId`, and split tender's
   * redemption and reversal requests as `<groupId>.redemptions`. Neither this nor `transactionEvents`: no usage is
   * counted.
   */
  readonly transactionsTopic?: {
    readonly bus: MessageBus;
    readonly groupId: string;
    readonly comparePositions: (a: string, b: string) => number;
  };
  /**
   * Where split tender's redemption requests come from: `transactions.events` on this bus as `groupId` (the embedded
   * runtime's in-process bus). Absent: with `transactionsTopic`, its bus as `<its groupId>.redemptions`; else none.
   */
  readonly redemptionRequests?: { readonly bus: MessageBus; readonly groupId: string };
  /** How long a handed-over card no redemption asked for is kept (GIFT_CARD_HAND_OVER_TTL_MS). */
  readonly handOverTtlMs?: number;
}

/**
 * Default of `handOverTtlMs`: a payment asks for its gift cards' redemptions once its payment method is authorized,
 * which a buyer's challenge can hold up for minutes; an hour leaves room, and recovery has rolled the payment back by
 * then (a reversal needs no card).
 */
export const DEFAULT_GIFT_CARD_HAND_OVER_TTL_MS = 60 * 60 * 1000;

/** How often the one-off cards past their time are erased. */
const HAND_OVER_SWEEP_INTERVAL_MS = 60_000;

const HAND_OVER_DIGEST_PURPOSE = 'switchyard/gift-card-hand-over-digest/v1';

export class GiftCardsService {
  readonly giftCards: GiftCards;
  private readonly host: ServiceHost;
  private readonly usage: Projector | null;
  private readonly usageFromBus: TopicProjection | null;
  /** Split tender's redemptions and reversals, asked for with events (`GiftCardRedemptionRequested`, …). */
  readonly redemptions: GiftCardRedemptions;
  private readonly redemptionRequests: GiftCardRedemptionConsumer | null;
  private readonly vault: GiftCardVault;
  private readonly fingerprintKey: Buffer;
  private readonly handOverTtlMs: number;
  private sweeping: NodeJS.Timeout | null = null;
  private readonly onError: GiftCardsServiceOptions['onError'];

  constructor(options: GiftCardsServiceOptions) {
    this.host = new ServiceHost({ ...options, upcasters: giftCardsUpcasters });
    this.vault = new GiftCardVault(options.db, {
      key: options.key,
      ...(options.legacyKeys ? { legacyKeys: options.legacyKeys } : {}),
      now: this.host.context.now,
    });
    this.fingerprintKey = options.fingerprintKey;
    this.onError = options.onError;
    this.handOverTtlMs = options.handOverTtlMs ?? DEFAULT_GIFT_CARD_HAND_OVER_TTL_MS;
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
    this.usageFromBus =
      !this.usage && options.transactionsTopic
        ? giftCardUsageFromTopic(options.db, this.giftCards.readModel.usageProjection, options.transactionsTopic)
        : null;
    this.redemptions = new GiftCardRedemptions({
      store: options.store,
      services: options.services,
      credentialsFor: (merchantAccountId, giftCardId) =>
        this.giftCards.credentialsFor(merchantAccountId, giftCardId) ??
        this.vault.revealOneOff(merchantAccountId, giftCardId),
      handedOver: {
        holds: (merchantAccountId, giftCardId) => this.vault.holdsOneOff(merchantAccountId, giftCardId),
        erase: (merchantAccountId, giftCardId) => void this.vault.eraseOneOff(merchantAccountId, giftCardId),
      },
      now: this.host.context.now,
    });
    const requests =
      options.redemptionRequests ??
      (options.transactionsTopic
        ? { bus: options.transactionsTopic.bus, groupId: `${options.transactionsTopic.groupId}.redemptions` }
        : null);
    this.redemptionRequests = requests ? new GiftCardRedemptionConsumer(this.redemptions, requests) : null;
  }

  /** Seals what is left under the legacy key again, brings the read models up to date, then follows both logs. */
  async start(): Promise<void> {
    this.vault.rewrapLegacy();
    this.sweepHandedOver();
    this.sweeping = setInterval(() => {
      try {
        this.sweepHandedOver();
      } catch (error) {
        // Tried again on the next round.
        this.onError?.(error, 'erasing the handed-over gift cards past their time');
      }
    }, HAND_OVER_SWEEP_INTERVAL_MS);
    this.sweeping.unref();
    await this.catchUp();
    await this.host.catchUpAndFollow();
    this.usage?.start();
    await Promise.all([this.usageFromBus?.start(), this.redemptionRequests?.start()]);
  }

  /**
   * Distributed runtime, before `start`: the stored cards' usage folded once from the transactions service's SQLite
   * file (same DATA_DIR) when it never was — a data directory of a release that ran embedded or kept gift cards in
   * the transactions service: those payments never reached this broker. Answers whether it folded.
   */
  foldUsageFrom(transactionsFile: string): Promise<boolean> {
    return this.usageFromBus?.foldFromSqliteFile(transactionsFile) ?? Promise.resolve(false);
  }

  async stop(): Promise<void> {
    if (this.sweeping) clearInterval(this.sweeping);
    this.sweeping = null;
    await this.redemptionRequests?.stop();
    await this.usageFromBus?.stop();
    await this.usage?.stop();
    await this.host.stop();
  }

  /** Read-your-writes: the stored cards and their usage (a payment that just used a card shows in its count). */
  async catchUp(): Promise<void> {
    await Promise.all([this.host.catchUp(), this.usage?.catchUp()]);
  }

  /** A stored card's number and PIN, for this service's own provider calls only (never log, persist or emit them). */
  async credentialsFor(merchantAccountId: string, giftCardId: string): Promise<GiftCardCredentials | null> {
    return this.giftCards.credentialsFor(merchantAccountId, giftCardId);
  }

  /**
   * The gift cards a `POST /transactions` gives by number and PIN, handed over by the gateway before the transactions
   * service sees them: each kept encrypted as a one-off card (its redemption's answer erases it), answered with what
   * may be shown of it and a keyed digest for the Idempotency-Key fingerprint. The numbers and PINs were validated by
   * the gateway; a malformed one is a RangeError that names neither.
   */
  handOver(request: GiftCardHandOverRequest): GiftCardHandOver[] {
    const cards = request.cards.map((card) => ({
      id: randomUUID(),
      secret: { number: card.number, pin: card.pin },
    }));
    this.vault.storeOneOffs(request.merchant_account_id, cards);
    return cards.map(({ id, secret }) => {
      const digits = giftCardDigitsOf(secret.number);
      const digest = createHmac('sha256', this.fingerprintKey)
        .update(`${HAND_OVER_DIGEST_PURPOSE}:${JSON.stringify([secret.number, secret.pin])}`)
        .digest('hex');
      return { id, bin: digits.bin, sub_bin: digits.subBin, last4: digits.last4, digest };
    });
  }

  /**
   * Erases the one-off cards of a request that created no transaction (refused, or a replay): the transactions
   * service asks before it answers, so a refusal leaves nothing behind. A stored card's id erases nothing.
   */
  async forgetHandedOver(merchantAccountId: string, giftCardIds: readonly string[]): Promise<void> {
    this.vault.eraseOneOffs(merchantAccountId, giftCardIds);
  }

  /** Erases the handed-over cards no redemption asked for in `handOverTtlMs`; answers how many. */
  sweepHandedOver(): number {
    return this.vault.sweepOneOffs(new Date(this.host.context.now().getTime() - this.handOverTtlMs));
  }

  async belongsTo(merchantAccountId: string, giftCardId: string, buyer: NonNullable<EmbedBuyerPin>): Promise<boolean> {
    return this.giftCards.belongsTo(merchantAccountId, giftCardId, buyer);
  }

  /** What may be shown of a stored card (never its number or PIN); null when unknown, deleted or another account's. */
  async describe(
    merchantAccountId: string,
    giftCardId: string,
  ): Promise<{ readonly bin: string; readonly subBin: string; readonly last4: string } | null> {
    const card = this.giftCards.find(merchantAccountId, giftCardId);
    return card ? { bin: card.bin, subBin: card.subBin, last4: card.last4 } : null;
  }

  /**
   * `describe` and `belongsTo` for the transactions process (distributed runtime; rpc-services admits only it). A
   * stored card's number and PIN never leave this service: the redemptions are asked of it with events.
   */
  paymentRpcHandlers(): RpcHandlers {
    return {
      [giftCardPaymentPatterns.describe]: async (payload) => {
        const request = payload as GiftCardDescribeRequest;
        const digits = await this.describe(request.merchant_account_id, request.gift_card_id);
        return digits
          ? ({ bin: digits.bin, sub_bin: digits.subBin, last4: digits.last4 } satisfies GiftCardDigitsWire)
          : null;
      },
      [giftCardPaymentPatterns.belongsTo]: async (payload) => {
        const request = payload as GiftCardBelongsToRequest;
        return this.belongsTo(request.merchant_account_id, request.gift_card_id, request.buyer);
      },
      [giftCardPaymentPatterns.forgetHandOver]: async (payload) => {
        const request = payload as GiftCardForgetHandOverRequest;
        await this.forgetHandedOver(request.merchant_account_id, request.gift_card_ids);
        return null;
      },
    };
  }

  rpcHandlers(): RpcHandlers {
    const handlers: Record<string, RpcHandler> = {
      ...this.host.rpcHandlers(giftCardPatterns.ping),
      [giftCardPatterns.handOver]: async (payload) => this.handOver(payload as GiftCardHandOverRequest),
    };
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
