/**
 * Live buyers per merchant account and their shipping details, projected from `buyer-<uuid>` only (a deleted buyer's
 * rows go, shipping details with it). Claim streams and fences change nothing here.
 */
import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { BuyerDetails, BuyerEvent, ShippingDetailsData } from './buyer';

export interface BuyerView extends BuyerDetails {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ShippingDetailsView extends ShippingDetailsData {
  readonly id: string;
  readonly buyerId: string;
  readonly merchantAccountId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface BuyerFilter {
  /** Exactly this identifier. */
  readonly externalIdentifier?: string;
  /** Contained in the display name or the external identifier, case-insensitively. */
  readonly search?: string;
}

interface BuyerRecord {
  id: string;
  merchant_account_id: string;
  display_name: string | null;
  external_identifier: string | null;
  billing_details: string | null;
  account_number: string | null;
  display_name_folded: string | null;
  external_identifier_folded: string | null;
  created_at: string;
  updated_at: string;
  sort_key: string;
}

interface ShippingDetailsRecord {
  id: string;
  buyer_id: string;
  merchant_account_id: string;
  details: string;
  created_at: string;
  updated_at: string;
  sort_key: string;
}

interface ListParams {
  merchantAccountId: string;
  externalIdentifier: string | null;
  search: string | null;
  key: string | null;
  n: number;
}

/** Case folding for search, in JavaScript (SQLite's `lower` folds ASCII only). */
const fold = (value: string | null): string | null => (value === null ? null : value.toLowerCase());

const matching =
  'merchant_account_id = @merchantAccountId AND (@externalIdentifier IS NULL OR external_identifier = @externalIdentifier)' +
  ' AND (@search IS NULL OR instr(display_name_folded, @search) > 0 OR instr(external_identifier_folded, @search) > 0)';

export class BuyersReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], BuyerRecord>;
  private readonly byExternalIdentifier: Database.Statement<[string, string], BuyerRecord>;
  private readonly older: Database.Statement<[ListParams], BuyerRecord>;
  private readonly newer: Database.Statement<[ListParams], BuyerRecord>;
  private readonly shippingById: Database.Statement<[string], ShippingDetailsRecord>;
  private readonly shippingOfBuyer: Database.Statement<[string], ShippingDetailsRecord>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS buyers (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, display_name TEXT, external_identifier TEXT,
        billing_details TEXT, account_number TEXT, display_name_folded TEXT, external_identifier_folded TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, sort_key TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS buyers_by_account ON buyers (merchant_account_id, sort_key);
      CREATE INDEX IF NOT EXISTS buyers_by_external_identifier ON buyers (merchant_account_id, external_identifier);
      CREATE TABLE IF NOT EXISTS buyer_shipping_details (
        id TEXT PRIMARY KEY, buyer_id TEXT NOT NULL, merchant_account_id TEXT NOT NULL, details TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, sort_key TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS buyer_shipping_details_by_buyer ON buyer_shipping_details (buyer_id, sort_key);`);
    this.byId = db.prepare('SELECT * FROM buyers WHERE id = ?');
    this.byExternalIdentifier = db.prepare(
      'SELECT * FROM buyers WHERE merchant_account_id = ? AND external_identifier = ? ORDER BY sort_key LIMIT 1',
    );
    // Newest first: "after" a key means an older buyer.
    this.older = db.prepare(
      `SELECT * FROM buyers WHERE ${matching} AND (@key IS NULL OR sort_key < @key) ORDER BY sort_key DESC LIMIT @n`,
    );
    this.newer = db.prepare(
      `SELECT * FROM buyers WHERE ${matching} AND sort_key > @key ORDER BY sort_key ASC LIMIT @n`,
    );
    this.shippingById = db.prepare('SELECT * FROM buyer_shipping_details WHERE id = ?');
    this.shippingOfBuyer = db.prepare('SELECT * FROM buyer_shipping_details WHERE buyer_id = ? ORDER BY sort_key ASC');

    const putBuyer = db.prepare<[BuyerRecord]>(
      `INSERT OR REPLACE INTO buyers (id, merchant_account_id, display_name, external_identifier, billing_details, account_number,
         display_name_folded, external_identifier_folded, created_at, updated_at, sort_key)
       VALUES (@id, @merchant_account_id, @display_name, @external_identifier, @billing_details, @account_number,
         @display_name_folded, @external_identifier_folded, @created_at, @updated_at, @sort_key)`,
    );
    const removeBuyer = db.prepare<[string]>('DELETE FROM buyers WHERE id = ?');
    const putShipping = db.prepare<[ShippingDetailsRecord]>(
      `INSERT OR REPLACE INTO buyer_shipping_details (id, buyer_id, merchant_account_id, details, created_at, updated_at, sort_key)
       VALUES (@id, @buyer_id, @merchant_account_id, @details, @created_at, @updated_at, @sort_key)`,
    );
    const removeShipping = db.prepare<[string]>('DELETE FROM buyer_shipping_details WHERE id = ?');
    const removeShippingOfBuyer = db.prepare<[string]>('DELETE FROM buyer_shipping_details WHERE buyer_id = ?');

    const byId = this.byId;
    const shippingById = this.shippingById;
    this.projection = {
      name: 'buyers',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as BuyerEvent;
        switch (event.type) {
          case 'BuyerCreated': {
            const { id, merchantAccountId, at, ...details } = event.data;
            putBuyer.run(
              toBuyerRecord({ id, merchantAccountId, ...details, createdAt: at, updatedAt: at }, `${at}|${id}`),
            );
            return;
          }
          case 'BuyerUpdated': {
            const record = byId.get(event.data.id);
            if (!record) return;
            const { id: _id, merchantAccountId: _account, at, ...changes } = event.data;
            putBuyer.run(toBuyerRecord({ ...toBuyerView(record), ...changes, updatedAt: at }, record.sort_key));
            return;
          }
          case 'BuyerDeleted':
            removeBuyer.run(event.data.id);
            removeShippingOfBuyer.run(event.data.id);
            return;
          case 'ShippingDetailsAdded': {
            const { buyerId, merchantAccountId, shippingDetailsId, at, ...details } = event.data;
            const view: ShippingDetailsView = {
              ...details,
              id: shippingDetailsId,
              buyerId,
              merchantAccountId,
              createdAt: at,
              updatedAt: at,
            };
            putShipping.run(toShippingRecord(view, `${at}|${shippingDetailsId}`));
            return;
          }
          case 'ShippingDetailsUpdated': {
            const record = shippingById.get(event.data.shippingDetailsId);
            if (!record) return;
            const { buyerId: _buyer, merchantAccountId: _account, shippingDetailsId: _id, at, ...changes } = event.data;
            putShipping.run(
              toShippingRecord({ ...toShippingView(record), ...changes, updatedAt: at }, record.sort_key),
            );
            return;
          }
          case 'ShippingDetailsRemoved':
            removeShipping.run(event.data.shippingDetailsId);
            return;
          default:
            return;
        }
      },
    };
  }

  /** A live buyer of any merchant account. */
  find(id: string): BuyerView | null {
    const record = this.byId.get(id);
    return record ? toBuyerView(record) : null;
  }

  findByExternalIdentifier(merchantAccountId: string, externalIdentifier: string): BuyerView | null {
    const record = this.byExternalIdentifier.get(merchantAccountId, externalIdentifier);
    return record ? toBuyerView(record) : null;
  }

  /** A merchant account's live buyers, newest first; keyset-paged. */
  page(merchantAccountId: string, filter: BuyerFilter, query: PageQuery): Page<BuyerView> {
    const params = {
      merchantAccountId,
      externalIdentifier: filter.externalIdentifier ?? null,
      search: filter.search !== undefined ? fold(filter.search) : null,
    };
    const page = keysetPage<BuyerRecord>(
      query,
      (record) => record.sort_key,
      (key, n) => this.older.all({ ...params, key, n }),
      (key, n) => this.newer.all({ ...params, key, n }),
    );
    return { ...page, items: page.items.map(toBuyerView) };
  }

  findShippingDetails(id: string): ShippingDetailsView | null {
    const record = this.shippingById.get(id);
    return record ? toShippingView(record) : null;
  }

  /** A buyer's shipping details, oldest first. */
  shippingDetailsOf(buyerId: string): ShippingDetailsView[] {
    return this.shippingOfBuyer.all(buyerId).map(toShippingView);
  }
}

function toBuyerRecord(view: BuyerView, sortKey: string): BuyerRecord {
  return {
    id: view.id,
    merchant_account_id: view.merchantAccountId,
    display_name: view.displayName,
    external_identifier: view.externalIdentifier,
    billing_details: view.billingDetails === null ? null : JSON.stringify(view.billingDetails),
    account_number: view.accountNumber,
    display_name_folded: fold(view.displayName),
    external_identifier_folded: fold(view.externalIdentifier),
    created_at: view.createdAt,
    updated_at: view.updatedAt,
    sort_key: sortKey,
  };
}

function toBuyerView(record: BuyerRecord): BuyerView {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    displayName: record.display_name,
    externalIdentifier: record.external_identifier,
    billingDetails:
      record.billing_details === null ? null : (JSON.parse(record.billing_details) as BuyerView['billingDetails']),
    accountNumber: record.account_number,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}

function toShippingRecord(view: ShippingDetailsView, sortKey: string): ShippingDetailsRecord {
  const {
    id,
    buyerId,
    merchantAccountId,
    createdAt,
    updatedAt,
    first_name,
    last_name,
    email_address,
    phone_number,
    address,
  } = view;
  return {
    id,
    buyer_id: buyerId,
    merchant_account_id: merchantAccountId,
    details: JSON.stringify({ first_name, last_name, email_address, phone_number, address }),
    created_at: createdAt,
    updated_at: updatedAt,
    sort_key: sortKey,
  };
}

function toShippingView(record: ShippingDetailsRecord): ShippingDetailsView {
  return {
    ...(JSON.parse(record.details) as ShippingDetailsData),
    id: record.id,
    buyerId: record.buyer_id,
    merchantAccountId: record.merchant_account_id,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
