/**
 * Gift cards on the wire — issue a virtual card, activate a physical one, check balances, store a card for a buyer
 * and list, read and delete stored cards — and the gift cards service's RPC patterns behind them (`gift-cards.*`). Shapes of `../shared/reference/wire-compat.md` (GiftCard, GiftCardSummary,
 * GiftCardCreate, GiftCardBalanceRequest); issue and activate are ours, in the same style (docs/gift-cards.md).
 */
import { z } from 'zod';
import type { EmbedBuyerPin } from './buyers';
import { giftCardServiceSchema } from './transactions';

/**
 * The streams of the gift cards service's store (`gift-card-<uuid>`): until it had a store of its own they were in the
 * transactions store, which now reads its store without them.
 */
export const GIFT_CARD_STREAM_PREFIXES: readonly string[] = ['gift-card-'];

/** The gift cards service's own events (stored cards), relayed from its store. */
export const giftCardsTopic = 'gift-cards.events';

export const giftCardPatterns = {
  /** The gift cards service's readiness. */
  ping: 'gift-cards.ping',
  issue: 'gift-cards.issue',
  activate: 'gift-cards.activate',
  balances: 'gift-cards.balances',
  create: 'gift-cards.create',
  list: 'gift-cards.list',
  get: 'gift-cards.get',
  delete: 'gift-cards.delete',
  buyerList: 'gift-cards.buyer-list',
  /** The gift cards a `POST /transactions` gives by number and PIN, handed over by the gateway (`GiftCardHandOver`). */
  handOver: 'gift-cards.hand-over',
} as const;

/**
 * What the transactions service asks of the gift cards service for a split payment (rpc-services lets only it call
 * them): what may be shown of a stored card (BIN, sub-BIN, last four; never its number or PIN, which the gift cards
 * service alone uses, for the redemptions asked of it with events), and whether the card is an embed token's buyer's.
 */
export const giftCardPaymentPatterns = {
  describe: 'gift-cards.describe',
  belongsTo: 'gift-cards.belongs-to',
  /** The one-off cards of a request that created no transaction (refused, replayed): erased before its answer. */
  forgetHandOver: 'gift-cards.forget-hand-over',
} as const;

export interface GiftCardForgetHandOverRequest {
  readonly merchant_account_id: string;
  readonly gift_card_ids: readonly string[];
}

/** What the gateway may call on the gift cards service: the API's patterns and the ping of its /readyz, not the payments'. */
export const giftCardGatewayPatterns: readonly string[] = Object.values(giftCardPatterns);

/**
 * What the gift cards service asks of the transactions service (rpc-services lets only it call them): a merchant
 * account's gift card service (the connections are the transactions service's), a connection's name as it is now, and
 * at start the key hand-over (the keys stay derived from the transactions service's vault root). Served by the
 * transactions process under a prefix of their own: the gateway's `transactions.*` must not reach the keys.
 */
export const giftCardDirectoryPatterns = {
  activeService: 'gift-card-directory.active-service',
  serviceRef: 'gift-card-directory.service-ref',
  keys: 'gift-card-directory.keys',
  /** One gift card service of the merchant account by id (active or not), with what its connector is built from. */
  service: 'gift-card-directory.service',
} as const;

/**
 * Split tender over events (issue 19, item 3): what the transactions service's process manager asks of the gift cards
 * service, as events on the transaction stream (`transaction-<id>`, relayed on `transactions.events`). The gift cards
 * service calls the provider itself (a stored card's number and PIN stay in its vault) and answers on its own stream
 * `gift-card-redemption-<redemption id>` (relayed on `gift-cards.events`), once per redemption id.
 */
export const giftCardRedemptionRequestTypes = {
  redeem: 'GiftCardRedemptionRequested',
  reverse: 'GiftCardReversalRequested',
} as const;

/** `GiftCardRedemptionRequested`: redeem `amount` from a stored card, with the redemption id as the provider's reference. */
export interface GiftCardRedemptionRequestedData {
  readonly redemptionId: string;
  readonly transactionId: string;
  readonly merchantAccountId: string;
  /** The gift card service (payment service of method `gift-card`) the payment planned with. */
  readonly giftCardServiceId: string;
  /** The stored card (`POST /gift-cards`), or the one-off card a request's number and PIN were handed over as. */
  readonly giftCardId: string;
  readonly amount: number;
  readonly currency: string;
}

/** `GiftCardReversalRequested`: undo the redemption by its reference (one the provider never made reverses nothing). */
export interface GiftCardReversalRequestedData {
  readonly redemptionId: string;
  readonly transactionId: string;
  readonly merchantAccountId: string;
  readonly giftCardServiceId: string;
}

/** The gift cards service's stream of one redemption: its claim, the provider's answer, its reversal. */
export const giftCardRedemptionStream = (redemptionId: string): string => `gift-card-redemption-${redemptionId}`;

/** What the gift cards service appends to a redemption's stream (no number or PIN, ever). */
export const giftCardRedemptionEventTypes = {
  /** Claimed before the provider call: a second consumer of the same request (a rebalance) does not act on it. */
  started: 'GiftCardRedemptionStarted',
  redeemed: 'GiftCardRedeemed',
  refused: 'GiftCardRedemptionRefused',
  /** No answer (unreachable, timed out): the card may have been charged; only a reversal settles it. */
  unanswered: 'GiftCardRedemptionUnanswered',
  /** Reversed (`reversed: false`: the provider never made it). Not the transaction stream's `GiftCardRedemptionReversed`. */
  reversed: 'GiftCardRedemptionUndone',
  /** The provider could not take the reversal: asked again, it is tried again. */
  reversalFailed: 'GiftCardRedemptionUndoFailed',
} as const;

/**
 * `gift-cards.hand-over`: the gift cards of a `POST /transactions` given by number and PIN, which the gateway hands to
 * the gift cards service before the transactions service sees the request (issue 19, item 4: a gift card's number and
 * PIN live only in the gift cards service). Each is kept, encrypted, as a one-off card for the payment's redemption,
 * erased once the provider answered it (or, never asked for, after `GIFT_CARD_HAND_OVER_TTL_MS`).
 */
export interface GiftCardHandOverRequest {
  readonly merchant_account_id: string;
  readonly cards: readonly { readonly number: string; readonly pin: string }[];
}

/** One handed-over gift card, in the order given (`TransactionCreateRequest.gift_card_hand_over`). */
export interface GiftCardHandOver {
  /** The one-off card's id: what the redemption request names (`GiftCardRedemptionRequestedData.giftCardId`). */
  readonly id: string;
  readonly bin: string;
  readonly sub_bin: string;
  readonly last4: string;
  /** A keyed digest of the number and PIN: what the Idempotency-Key fingerprint takes in their place. */
  readonly digest: string;
}

export interface GiftCardDescribeRequest {
  readonly merchant_account_id: string;
  readonly gift_card_id: string;
}

/** `gift-cards.describe`'s answer (null: unknown, deleted or another merchant account's). */
export interface GiftCardDigitsWire {
  readonly bin: string;
  readonly sub_bin: string;
  readonly last4: string;
}

export interface GiftCardBelongsToRequest extends GiftCardDescribeRequest {
  readonly buyer: NonNullable<EmbedBuyerPin>;
}

/** A gift card service as a stored card names it, on the wire between the two services. */
export interface GiftCardServiceRefWire {
  readonly id: string;
  readonly definition_id: string;
  readonly display_name: string;
}

/** The merchant account's active gift card service and what its connector is built from (the connection's fields). */
export interface ActiveGiftCardServiceWire {
  readonly service: GiftCardServiceRefWire;
  readonly merchant_account_id: string;
  readonly fields: Readonly<Record<string, string>>;
  /** When the connection last changed: a connector built from it is rebuilt after a change. */
  readonly updated_at: string;
}

/** `giftCardDirectoryPatterns.service`'s request. */
export interface GiftCardServiceRequest {
  readonly merchant_account_id: string;
  readonly id: string;
}

/** The key hand-over, base64: see `giftCardDirectoryPatterns.keys`. */
export interface GiftCardKeysWire {
  /** The two keys the gift card vault derived from the vault root before GIFT_CARDS_KEY (never the root). */
  readonly legacy_secret_key: string;
  readonly legacy_response_key: string;
  readonly fingerprint_key: string;
}

/** Reference: a balance check takes up to 10 cards. */
export const MAX_GIFT_CARD_BALANCE_ITEMS = 10;

const timestamp = z.iso.datetime({ offset: true });
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const amount = z.int().min(1).max(99_999_999);

export const giftCardNumberSchema = z
  .string()
  .regex(/^\d{16,19}$/, 'must be 16 to 19 digits')
  .meta({ description: 'The 16 to 19 digit gift card number.' });
export const giftCardPinSchema = z.string().min(1).max(20).meta({ description: "The gift card's PIN." });
const buyerId = z.uuid().meta({ description: "The buyer's id (no buyers resource yet: stored and matched as given)." });
const buyerExternalIdentifier = z
  .string()
  .min(1)
  .max(200)
  .meta({ description: 'Your identifier of the buyer (stored and matched as given).' });

// ---- request bodies ----------------------------------------------------------------------------------------

export const giftCardIssueSchema = z
  .object({
    theme: z
      .string()
      .min(1)
      .max(100)
      .meta({ description: "The provider's theme (design/programme) code to issue the card under." }),
    amount: amount.meta({ description: 'The amount to load onto the card, in minor units.' }),
    currency,
  })
  .strict()
  .meta({ id: 'GiftCardIssueCreate', description: 'A new virtual gift card.' });
export type GiftCardIssueInput = z.infer<typeof giftCardIssueSchema>;

export const giftCardActivateSchema = z
  .object({
    number: giftCardNumberSchema,
    pin: giftCardPinSchema.optional(),
    amount: amount.optional().meta({
      description: 'The amount to load onto the card, in minor units; absent: the value the card was made with.',
    }),
    currency,
  })
  .strict()
  .meta({ id: 'GiftCardActivationCreate', description: 'A physical gift card to put into use.' });
export type GiftCardActivateInput = z.infer<typeof giftCardActivateSchema>;

export const giftCardRequestSchema = z
  .object({ number: giftCardNumberSchema, pin: giftCardPinSchema })
  .strict()
  .meta({ id: 'GiftCardRequest', description: 'A gift card given by number and PIN.' });
export const giftCardStoredRequestSchema = z
  .object({ id: z.uuid() })
  .strict()
  .meta({ id: 'GiftCardStoredRequest', description: 'A stored gift card (`POST /gift-cards`).' });

export const giftCardBalanceRequestSchema = z
  .object({
    items: z
      .array(z.union([giftCardRequestSchema, giftCardStoredRequestSchema], { error: 'must be {number, pin} or {id}' }))
      .min(1)
      .max(MAX_GIFT_CARD_BALANCE_ITEMS)
      .meta({
        description: `1 to ${MAX_GIFT_CARD_BALANCE_ITEMS} cards; the answer has one result per card, in the same order.`,
      }),
  })
  .strict()
  .meta({ id: 'GiftCardBalanceRequest' });
export type GiftCardBalanceInput = z.infer<typeof giftCardBalanceRequestSchema>;
export type GiftCardBalanceItem = GiftCardBalanceInput['items'][number];

export const giftCardCreateSchema = z
  .object({
    number: giftCardNumberSchema,
    pin: giftCardPinSchema,
    buyer_id: buyerId.nullish(),
    buyer_external_identifier: buyerExternalIdentifier.nullish(),
  })
  .strict()
  .refine((body) => !(body.buyer_id != null && body.buyer_external_identifier != null), {
    message: 'give either buyer_id or buyer_external_identifier, not both',
    path: ['buyer_external_identifier'],
  })
  .meta({
    id: 'GiftCardCreate',
    description:
      'A gift card to store, checked with the gift card service first. `buyer_id` and `buyer_external_identifier` exclude each other.',
  });
export type GiftCardCreateInput = z.infer<typeof giftCardCreateSchema>;

// ---- queries -------------------------------------------------------------------------------------------------

export const giftCardListQuerySchema = z.object({
  buyer_id: buyerId.optional(),
  buyer_external_identifier: buyerExternalIdentifier.optional(),
});

export const buyerGiftCardSortFields = ['last_used_at'] as const;
export const buyerGiftCardSortDirections = ['asc', 'desc'] as const;

export const buyerGiftCardListQuerySchema = z
  .object({
    buyer_id: buyerId.optional(),
    buyer_external_identifier: buyerExternalIdentifier.optional(),
    sort_by: z
      .enum(buyerGiftCardSortFields)
      .default('last_used_at')
      .meta({ description: 'The only sort field: `last_used_at` (never used: last).' }),
    order_by: z
      .enum(buyerGiftCardSortDirections)
      .default('desc')
      .meta({ description: 'The direction of `sort_by`; cards never used come last either way.' }),
  })
  .refine((query) => (query.buyer_id !== undefined) !== (query.buyer_external_identifier !== undefined), {
    message: 'give buyer_id or buyer_external_identifier (one of them)',
    path: ['buyer_id'],
  });
export type BuyerGiftCardListQuery = z.infer<typeof buyerGiftCardListQuerySchema>;

// ---- responses -----------------------------------------------------------------------------------------------

const usageShape = {
  usage_count: z.int().meta({ description: 'Payments the card was redeemed in.' }),
  cit_usage_count: z.int().meta({ description: 'Of those, the ones the buyer (not the merchant) initiated.' }),
  last_used_at: timestamp.nullable(),
  cit_last_used_at: timestamp.nullable(),
};

export const giftCardSummarySchema = z
  .object({
    type: z.literal('gift-card'),
    id: z.uuid().nullable().meta({ description: 'The stored card; null for a card given by number.' }),
    merchant_account_id: z.string(),
    bin: z.string().meta({ description: 'The first 6 digits.' }),
    sub_bin: z.string().meta({ description: 'The 4 digits after the BIN.' }),
    last4: z.string(),
    currency: z.string().nullable(),
    expiration_date: timestamp.nullable(),
    balance: z.int().nullable().meta({
      description: 'Minor units, as the gift card service answered; null when not asked (stored lists) or refused.',
    }),
    balance_error_code: z
      .string()
      .nullable()
      .meta({ description: 'Why the gift card service gave no balance (`invalid_gift_card`, `expired_card`, …).' }),
    balance_raw_error_code: z.string().nullable(),
    balance_raw_error_message: z.string().nullable(),
    ...usageShape,
  })
  .meta({ id: 'GiftCardSummary' });
export type GiftCardSummary = z.infer<typeof giftCardSummarySchema>;

export const giftCardSummariesSchema = z
  .object({ items: z.array(giftCardSummarySchema) })
  .meta({ id: 'GiftCardSummaries' });

export const giftCardIssuedSchema = giftCardSummarySchema
  .extend({
    number: z.string().meta({
      description:
        'The new card number: shown in this answer only (and its replays with the same Idempotency-Key), never stored.',
    }),
    pin: z.string().meta({ description: 'The PIN, shown like the number.' }),
  })
  .meta({ id: 'GiftCardIssued' });
export type GiftCardIssued = z.infer<typeof giftCardIssuedSchema>;

const giftCardBuyerSchema = z
  .object({
    type: z.literal('buyer'),
    id: z.string().nullable(),
    merchant_account_id: z.string(),
    display_name: z.string().nullable(),
    external_identifier: z.string().nullable(),
    inquiries: z.array(z.unknown()),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({
    id: 'GiftCardBuyer',
    description: 'The buyer as given when the card was stored (no buyers resource yet: its times are the card’s).',
  });

export const giftCardSchema = z
  .object({
    type: z.literal('gift-card'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    gift_card_service: giftCardServiceSchema,
    bin: z.string(),
    sub_bin: z.string(),
    last4: z.string(),
    currency: z.string().nullable(),
    expiration_date: timestamp.nullable(),
    buyer: giftCardBuyerSchema.nullable(),
    ...usageShape,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'GiftCard' });
export type GiftCard = z.infer<typeof giftCardSchema>;

export const giftCardsSchema = z
  .object({
    items: z.array(giftCardSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'GiftCards' });

// ---- RPC payloads ------------------------------------------------------------------------------------------

/** Every gift card RPC acts in the request's merchant account. */
export interface GiftCardScope {
  readonly merchant_account_id: string;
}

export interface GiftCardRef extends GiftCardScope {
  readonly gift_card_id: string;
}

/** `issue`, `activate`, `balances`, `create`. */
export interface GiftCardWriteRequest<Body> extends GiftCardScope {
  readonly body: Body;
  readonly idempotency_key?: string;
  /** Present when the request came in through an embed token: stored cards must be this buyer's (`balances`). */
  readonly embed_buyer?: EmbedBuyerPin;
}

/** `list`: newest first, paged. */
export interface GiftCardListRequest extends GiftCardScope {
  readonly limit: number;
  readonly cursor?: string | null;
  readonly buyer_id?: string;
  readonly buyer_external_identifier?: string;
}

/** `buyer-list`: one buyer's stored cards, by last use. */
export interface BuyerGiftCardListRequest extends GiftCardScope, BuyerGiftCardListQuery {}
