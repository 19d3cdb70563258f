import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { ThreeDsConfigurationEvent, ThreeDsProfile } from './three-ds-configuration';

export interface ThreeDsConfigurationRow extends ThreeDsProfile {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface ThreeDsConfigurationRecord {
  id: string;
  merchant_account_id: string;
  merchant_acquirer_bin: string;
  merchant_acquirer_id: string;
  merchant_name: string;
  merchant_country_code: string;
  merchant_category_code: string;
  merchant_url: string;
  scheme: string | null;
  currency: string | null;
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** 3-D Secure configurations per merchant account, oldest first, projected from `three-ds-configuration-<uuid>`; deleted ones leave. */
export class ThreeDsConfigurationsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], ThreeDsConfigurationRecord>;
  private readonly byAccount: Database.Statement<
    [{ merchantAccountId: string; currency: string | null }],
    ThreeDsConfigurationRecord
  >;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS three_ds_configurations (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL,
        merchant_acquirer_bin TEXT NOT NULL, merchant_acquirer_id TEXT NOT NULL, merchant_name TEXT NOT NULL,
        merchant_country_code TEXT NOT NULL, merchant_category_code TEXT NOT NULL, merchant_url TEXT NOT NULL,
        scheme TEXT, currency TEXT, metadata TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS three_ds_configurations_by_account ON three_ds_configurations (merchant_account_id, created_at, id);`);
    this.byId = db.prepare('SELECT * FROM three_ds_configurations WHERE id = ?');
    this.byAccount = db.prepare(
      `SELECT * FROM three_ds_configurations WHERE merchant_account_id = @merchantAccountId AND (@currency IS NULL OR currency = @currency)
       ORDER BY created_at, id`,
    );
    const insert = db.prepare(
      `INSERT INTO three_ds_configurations (id, merchant_account_id, merchant_acquirer_bin, merchant_acquirer_id, merchant_name,
         merchant_country_code, merchant_category_code, merchant_url, scheme, currency, metadata, created_at, updated_at)
       VALUES (@id, @merchantAccountId, @merchantAcquirerBin, @merchantAcquirerId, @merchantName, @merchantCountryCode,
         @merchantCategoryCode, @merchantUrl, @scheme, @currency, @metadata, @at, @at)`,
    );
    const columns: Readonly<Record<keyof ThreeDsProfile, string>> = {
      merchantAcquirerBin: 'merchant_acquirer_bin',
      merchantAcquirerId: 'merchant_acquirer_id',
      merchantName: 'merchant_name',
      merchantCountryCode: 'merchant_country_code',
      merchantCategoryCode: 'merchant_category_code',
      merchantUrl: 'merchant_url',
      scheme: 'scheme',
      currency: 'currency',
      metadata: 'metadata',
    };
    // Absent fields keep their value; null clears `scheme` and `currency`, so coalesce cannot tell them apart.
    const update = db.prepare(
      `UPDATE three_ds_configurations SET ${Object.values(columns)
        .map((column) => `${column} = CASE WHEN @has_${column} THEN @${column} ELSE ${column} END`)
        .join(', ')}, updated_at = @at WHERE id = @id`,
    );
    const remove = db.prepare('DELETE FROM three_ds_configurations WHERE id = ?');

    this.projection = {
      name: 'three-ds-configurations',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as ThreeDsConfigurationEvent;
        switch (event.type) {
          case 'ThreeDsConfigurationCreated':
            insert.run({
              id: event.data.id,
              merchantAccountId: event.data.merchantAccountId,
              merchantAcquirerBin: event.data.merchantAcquirerBin,
              merchantAcquirerId: event.data.merchantAcquirerId,
              merchantName: event.data.merchantName,
              merchantCountryCode: event.data.merchantCountryCode,
              merchantCategoryCode: event.data.merchantCategoryCode,
              merchantUrl: event.data.merchantUrl,
              scheme: event.data.scheme ?? null,
              currency: event.data.currency ?? null,
              metadata: JSON.stringify(event.data.metadata ?? {}),
              at: event.data.at,
            });
            return;
          case 'ThreeDsConfigurationUpdated': {
            const values: Record<string, unknown> = { id: event.data.id, at: event.data.at };
            for (const [key, column] of Object.entries(columns) as [keyof ThreeDsProfile, string][]) {
              const value = event.data[key];
              values[`has_${column}`] = value === undefined ? 0 : 1;
              values[column] = value === undefined ? null : key === 'metadata' ? JSON.stringify(value) : value;
            }
            update.run(values);
            return;
          }
          case 'ThreeDsConfigurationDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
  }

  find(id: string): ThreeDsConfigurationRow | null {
    const row = this.byId.get(id);
    return row ? toRow(row) : null;
  }

  /** A merchant account's configurations, oldest first; only those in `currency` when given. */
  listByMerchantAccount(merchantAccountId: string, currency?: string): ThreeDsConfigurationRow[] {
    return this.byAccount.all({ merchantAccountId, currency: currency ?? null }).map(toRow);
  }
}

function toRow(row: ThreeDsConfigurationRecord): ThreeDsConfigurationRow {
  return {
    id: row.id,
    merchantAccountId: row.merchant_account_id,
    merchantAcquirerBin: row.merchant_acquirer_bin,
    merchantAcquirerId: row.merchant_acquirer_id,
    merchantName: row.merchant_name,
    merchantCountryCode: row.merchant_country_code,
    merchantCategoryCode: row.merchant_category_code,
    merchantUrl: row.merchant_url,
    scheme: row.scheme,
    currency: row.currency,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
