/**
 * Stored gift cards per merchant account, projected from `gift-card-<uuid>` (stored, deleted: the row goes), with
 * their usage counted from the transaction streams: every `GiftCardRedemptionSucceeded` naming a stored card adds one
 * use (and one buyer-initiated use when the merchant did not initiate the payment) and moves `last_used_at` forward.
 *
 * Two projections, as the events come from two stores: `projection` follows the gift cards service's own store,
 * `usageProjection` the transactions service's. Usage is kept in its own table (`gift_card_usage`) and joined when
 * read, so the two may run in any order (a use projected before its card's row still counts).
 */
import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { GiftCardEvent, StoredGiftCard } from './gift-card';

/**
 * What the split-payment flow appends to a transaction stream when a gift card charge succeeds (its contract with
 * this read model): `giftCardId` is set when a stored card was used.
 */
export interface GiftCardRedemptionSucceeded {
  readonly type: 'GiftCardRedemptionSucceeded';
  readonly data: {
    readonly redemptionId: string;
    readonly giftCardId?: string;
    readonly merchantInitiated: boolean;
    readonly at: string;
  };
}

export interface GiftCardUsage {
  readonly usageCount: number;
  readonly citUsageCount: number;
  readonly lastUsedAt: string | null;
  readonly citLastUsedAt: string | null;
}

export interface GiftCardView extends StoredGiftCard, GiftCardUsage {
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Exactly one of the two, as the card was stored with. */
export type BuyerFilter =
  | { readonly buyerId: string; readonly buyerExternalIdentifier?: undefined }
  | { readonly buyerId?: undefined; readonly buyerExternalIdentifier: string };

interface GiftCardRecord {
  id: string;
  merchant_account_id: string;
  bin: string;
  sub_bin: string;
  last4: string;
  currency: string | null;
  expiration_date: string | null;
  buyer_id: string | null;
  buyer_external_identifier: string | null;
  gift_card_service_id: string;
  gift_card_service_definition_id: string;
  gift_card_service_display_name: string;
  usage_count: number;
  cit_usage_count: number;
  last_used_at: string | null;
  cit_last_used_at: string | null;
  created_at: string;
  updated_at: string;
  sort_key: string;
}

interface ListParams {
  merchantAccountId: string;
  buyerId: string | null;
  buyerExternal: string | null;
  key: string | null;
  n: number;
}

const byBuyer =
  'merchant_account_id = @merchantAccountId AND (@buyerId IS NULL OR buyer_id = @buyerId) AND (@buyerExternal IS NULL OR buyer_external_identifier = @buyerExternal)';

export class GiftCardsReadModel {
  readonly projection: Projection;
  readonly usageProjection: Projection;
  private readonly byId: Database.Statement<[string], GiftCardRecord>;
  private readonly older: Database.Statement<[ListParams], GiftCardRecord>;
  private readonly newer: Database.Statement<[ListParams], GiftCardRecord>;
  private readonly buyerCards: Record<
    'asc' | 'desc',
    Database.Statement<[Omit<ListParams, 'key' | 'n'>], GiftCardRecord>
  >;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS gift_cards (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, bin TEXT NOT NULL, sub_bin TEXT NOT NULL, last4 TEXT NOT NULL,
        currency TEXT, expiration_date TEXT, buyer_id TEXT, buyer_external_identifier TEXT,
        gift_card_service_id TEXT NOT NULL, gift_card_service_definition_id TEXT NOT NULL, gift_card_service_display_name TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, sort_key TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS gift_card_usage (
        id TEXT PRIMARY KEY, usage_count INTEGER NOT NULL, cit_usage_count INTEGER NOT NULL, last_used_at TEXT, cit_last_used_at TEXT);
      CREATE VIEW IF NOT EXISTS gift_cards_with_usage AS
        SELECT c.*, COALESCE(u.usage_count, 0) AS usage_count, COALESCE(u.cit_usage_count, 0) AS cit_usage_count,
          u.last_used_at AS last_used_at, u.cit_last_used_at AS cit_last_used_at
        FROM gift_cards c LEFT JOIN gift_card_usage u ON u.id = c.id;
      CREATE INDEX IF NOT EXISTS gift_cards_by_account ON gift_cards (merchant_account_id, sort_key);
      CREATE INDEX IF NOT EXISTS gift_cards_by_buyer ON gift_cards (merchant_account_id, buyer_id);
      CREATE INDEX IF NOT EXISTS gift_cards_by_buyer_external ON gift_cards (merchant_account_id, buyer_external_identifier);`);
    this.byId = db.prepare('SELECT * FROM gift_cards_with_usage WHERE id = ?');
    // Newest first: "after" a key means an older card.
    this.older = db.prepare(
      `SELECT * FROM gift_cards_with_usage WHERE ${byBuyer} AND (@key IS NULL OR sort_key < @key) ORDER BY sort_key DESC LIMIT @n`,
    );
    this.newer = db.prepare(
      `SELECT * FROM gift_cards_with_usage WHERE ${byBuyer} AND sort_key > @key ORDER BY sort_key ASC LIMIT @n`,
    );
    // Never used: last in both directions; then newest first.
    const lastUsed = (direction: 'ASC' | 'DESC') =>
      db.prepare<[Omit<ListParams, 'key' | 'n'>], GiftCardRecord>(
        `SELECT * FROM gift_cards_with_usage WHERE ${byBuyer} ORDER BY last_used_at IS NULL, last_used_at ${direction}, sort_key DESC`,
      );
    this.buyerCards = { asc: lastUsed('ASC'), desc: lastUsed('DESC') };

    const insert = db.prepare<[StoredRecord]>(
      `INSERT OR REPLACE INTO gift_cards (id, merchant_account_id, bin, sub_bin, last4, currency, expiration_date, buyer_id, buyer_external_identifier,
         gift_card_service_id, gift_card_service_definition_id, gift_card_service_display_name, created_at, updated_at, sort_key)
       VALUES (@id, @merchant_account_id, @bin, @sub_bin, @last4, @currency, @expiration_date, @buyer_id, @buyer_external_identifier,
         @gift_card_service_id, @gift_card_service_definition_id, @gift_card_service_display_name, @created_at, @updated_at, @sort_key)`,
    );
    const remove = db.prepare<[string]>('DELETE FROM gift_cards WHERE id = ?');
    // `at` never moves a last use back (ISO-8601 UTC strings compare as times).
    const later = (column: string) => `CASE WHEN ${column} IS NULL OR ${column} < @at THEN @at ELSE ${column} END`;
    const used = db.prepare<[{ id: string; at: string; cit: number }]>(
      `INSERT INTO gift_card_usage (id, usage_count, cit_usage_count, last_used_at, cit_last_used_at)
         VALUES (@id, 1, @cit, @at, CASE WHEN @cit = 1 THEN @at END)
       ON CONFLICT (id) DO UPDATE SET usage_count = usage_count + 1, last_used_at = ${later('last_used_at')},
         cit_usage_count = cit_usage_count + @cit, cit_last_used_at = CASE WHEN @cit = 1 THEN ${later('cit_last_used_at')} ELSE cit_last_used_at END`,
    );

    this.projection = {
      name: 'gift-cards',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as GiftCardEvent;
        switch (event.type) {
          case 'GiftCardStored': {
            const { at, ...card } = event.data;
            insert.run(toRecord(card, at));
            return;
          }
          case 'GiftCardDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
    this.usageProjection = {
      name: 'gift-card-usage',
      apply(recorded: RecordedEvent) {
        if (recorded.type !== 'GiftCardRedemptionSucceeded') return;
        const event = { type: recorded.type, data: recorded.data } as GiftCardRedemptionSucceeded;
        // A card given by number has none; a deleted card's row is gone, so its uses show nowhere.
        if (event.data.giftCardId)
          used.run({ id: event.data.giftCardId, at: event.data.at, cit: event.data.merchantInitiated ? 0 : 1 });
      },
    };
  }

  /** A stored card of any merchant account; null once deleted. */
  find(id: string): GiftCardView | null {
    const record = this.byId.get(id);
    return record ? toView(record) : null;
  }

  /** A merchant account's stored cards, newest first, of one buyer when given; keyset-paged. */
  page(
    merchantAccountId: string,
    filter: { readonly buyerId?: string; readonly buyerExternalIdentifier?: string },
    query: PageQuery,
  ): Page<GiftCardView> {
    const params = {
      merchantAccountId,
      buyerId: filter.buyerId ?? null,
      buyerExternal: filter.buyerExternalIdentifier ?? null,
    };
    const page = keysetPage<GiftCardRecord>(
      query,
      (record) => record.sort_key,
      (key, n) => this.older.all({ ...params, key, n }),
      (key, n) => this.newer.all({ ...params, key, n }),
    );
    return { ...page, items: page.items.map(toView) };
  }

  /** One buyer's stored cards by last use (never used: last), then newest first. */
  ofBuyer(merchantAccountId: string, filter: BuyerFilter, direction: 'asc' | 'desc'): GiftCardView[] {
    return this.buyerCards[direction]
      .all({
        merchantAccountId,
        buyerId: filter.buyerId ?? null,
        buyerExternal: filter.buyerExternalIdentifier ?? null,
      })
      .map(toView);
  }
}

type StoredRecord = Omit<GiftCardRecord, 'usage_count' | 'cit_usage_count' | 'last_used_at' | 'cit_last_used_at'>;

function toRecord(card: StoredGiftCard, at: string): StoredRecord {
  return {
    id: card.id,
    merchant_account_id: card.merchantAccountId,
    bin: card.bin,
    sub_bin: card.subBin,
    last4: card.last4,
    currency: card.currency,
    expiration_date: card.expirationDate,
    buyer_id: card.buyerId,
    buyer_external_identifier: card.buyerExternalIdentifier,
    gift_card_service_id: card.giftCardService.id,
    gift_card_service_definition_id: card.giftCardService.definitionId,
    gift_card_service_display_name: card.giftCardService.displayName,
    created_at: at,
    updated_at: at,
    sort_key: `${at}|${card.id}`,
  };
}

function toView(record: GiftCardRecord): GiftCardView {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    bin: record.bin,
    subBin: record.sub_bin,
    last4: record.last4,
    currency: record.currency,
    expirationDate: record.expiration_date,
    buyerId: record.buyer_id,
    buyerExternalIdentifier: record.buyer_external_identifier,
    giftCardService: {
      id: record.gift_card_service_id,
      definitionId: record.gift_card_service_definition_id,
      displayName: record.gift_card_service_display_name,
    },
    usageCount: record.usage_count,
    citUsageCount: record.cit_usage_count,
    lastUsedAt: record.last_used_at,
    citLastUsedAt: record.cit_last_used_at,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
