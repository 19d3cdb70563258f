import type Database from 'better-sqlite3';
import { keysetPage, type Page } from '@switchyard/api';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import {
  defaultMerchantAccountSettings,
  type MerchantAccountEvent,
  type MerchantAccountSettings,
} from './merchant-account';

export interface MerchantAccountRow extends MerchantAccountSettings {
  readonly id: string;
  readonly displayName: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface MerchantAccountQuery {
  readonly cursor?: string | null;
  readonly limit: number;
  /** Part of the id or display name, case-insensitive. */
  readonly search?: string | null;
  /** Only these accounts; absent: all. */
  readonly only?: readonly string[];
}

type Kind = 'boolean' | 'integer' | 'text' | 'list';
/** Each setting's column and how it is stored (booleans as 0/1, lists as JSON). */
const settingColumns: { readonly [K in keyof MerchantAccountSettings]: readonly [column: string, kind: Kind] } = {
  accountUpdaterEnabled: ['account_updater_enabled', 'boolean'],
  accountUpdaterRequestEncryptionKey: ['account_updater_request_encryption_key', 'text'],
  accountUpdaterRequestEncryptionKeyId: ['account_updater_request_encryption_key_id', 'text'],
  accountUpdaterResponseDecryptionKey: ['account_updater_response_decryption_key', 'text'],
  accountUpdaterResponseDecryptionKeyId: ['account_updater_response_decryption_key_id', 'text'],
  overCaptureAmount: ['over_capture_amount', 'integer'],
  overCapturePercentage: ['over_capture_percentage', 'integer'],
  multipleCapturesEnabled: ['multiple_captures_enabled', 'boolean'],
  loonClientKey: ['loon_client_key', 'text'],
  loonSecretKey: ['loon_secret_key', 'text'],
  loonAcceptedSchemes: ['loon_accepted_schemes', 'list'],
  visaNetworkTokensRequestorId: ['visa_network_tokens_requestor_id', 'text'],
  visaNetworkTokensAppId: ['visa_network_tokens_app_id', 'text'],
  amexNetworkTokensRequestorId: ['amex_network_tokens_requestor_id', 'text'],
  amexNetworkTokensAppId: ['amex_network_tokens_app_id', 'text'],
  mastercardNetworkTokensRequestorId: ['mastercard_network_tokens_requestor_id', 'text'],
  mastercardNetworkTokensAppId: ['mastercard_network_tokens_app_id', 'text'],
  discoverNetworkTokensRequestorId: ['discover_network_tokens_requestor_id', 'text'],
  discoverNetworkTokensAppId: ['discover_network_tokens_app_id', 'text'],
  asyncNetworkTokensEnabled: ['async_network_tokens_enabled', 'boolean'],
  networkTokensEnabled: ['network_tokens_enabled', 'boolean'],
};
const settingKeys = Object.keys(settingColumns) as (keyof MerchantAccountSettings)[];
const sqlType: Record<Kind, string> = { boolean: 'INTEGER NOT NULL', integer: 'INTEGER', text: 'TEXT', list: 'TEXT' };

const encode = (kind: Kind, value: unknown): unknown => {
  if (value === null || value === undefined) return null;
  if (kind === 'boolean') return value ? 1 : 0;
  if (kind === 'list') return JSON.stringify(value);
  return value;
};
const decode = (kind: Kind, value: unknown): unknown => {
  if (value === null || value === undefined) return null;
  if (kind === 'boolean') return value === 1;
  if (kind === 'list') return JSON.parse(value as string) as string[];
  return value;
};

type MerchantAccountRecord = { id: string; display_name: string; created_at: string; updated_at: string } & Record<
  string,
  unknown
>;

/**
 * Merchant accounts as the API lists them (by id), projected from `merchant-account-<id>` streams. The table and
 * the projection carry a version: a new version rebuilds from the log beside the old one, never over it.
 * v3: `multiple_captures_enabled` (events from before it fold to false).
 * v4: `network_tokens_enabled` (false before it) and the Discover network token ids (null before them).
 */
export class MerchantAccountsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], MerchantAccountRecord>;
  private readonly pageAfter: Database.Statement<[Record<string, unknown>], MerchantAccountRecord>;
  private readonly pageBefore: Database.Statement<[Record<string, unknown>], MerchantAccountRecord>;

  constructor(db: Database.Database) {
    const table = 'merchant_accounts_v4';
    const settingsDdl = settingKeys
      .map((key) => `${settingColumns[key][0]} ${sqlType[settingColumns[key][1]]}`)
      .join(', ');
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT PRIMARY KEY, display_name TEXT NOT NULL, ${settingsDdl}, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
    this.byId = db.prepare(`SELECT * FROM ${table} WHERE id = ?`);
    const filter = `(@only IS NULL OR id IN (SELECT value FROM json_each(@only)))
      AND (@search IS NULL OR instr(lower(id), lower(@search)) > 0 OR instr(lower(display_name), lower(@search)) > 0)`;
    this.pageAfter = db.prepare(`SELECT * FROM ${table} WHERE id > @key AND ${filter} ORDER BY id LIMIT @count`);
    this.pageBefore = db.prepare(`SELECT * FROM ${table} WHERE id < @key AND ${filter} ORDER BY id DESC LIMIT @count`);

    const columns = settingKeys.map((key) => settingColumns[key][0]);
    const insert = db.prepare(
      `INSERT INTO ${table} (id, display_name, ${columns.join(', ')}, created_at, updated_at)
       VALUES (@id, @display_name, ${columns.map((column) => `@${column}`).join(', ')}, @at, @at)`,
    );
    const updates = new Map<string, Database.Statement>();
    const updateStatement = (changed: readonly string[]) => {
      const signature = changed.join(',');
      let statement = updates.get(signature);
      if (!statement) {
        statement = db.prepare(
          `UPDATE ${table} SET ${[...changed, 'updated_at'].map((column) => `${column} = @${column}`).join(', ')} WHERE id = @id`,
        );
        updates.set(signature, statement);
      }
      return statement;
    };

    this.projection = {
      name: 'merchant-accounts-v4',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as MerchantAccountEvent;
        switch (event.type) {
          case 'MerchantAccountCreated': {
            const settings = { ...defaultMerchantAccountSettings, ...event.data.settings };
            const values: Record<string, unknown> = {
              id: event.data.id,
              display_name: event.data.displayName,
              at: event.data.at,
            };
            for (const key of settingKeys)
              values[settingColumns[key][0]] = encode(settingColumns[key][1], settings[key]);
            insert.run(values);
            return;
          }
          case 'MerchantAccountUpdated': {
            const values: Record<string, unknown> = { id: event.data.id, updated_at: event.data.at };
            if (event.data.displayName !== undefined) values.display_name = event.data.displayName;
            for (const key of settingKeys) {
              if (event.data[key] !== undefined)
                values[settingColumns[key][0]] = encode(settingColumns[key][1], event.data[key]);
            }
            const changed = Object.keys(values).filter((column) => column !== 'id' && column !== 'updated_at');
            updateStatement(changed).run(values);
            return;
          }
          default:
            return;
        }
      },
    };
  }

  find(id: string): MerchantAccountRow | null {
    const row = this.byId.get(id);
    return row ? toRow(row) : null;
  }

  /** By id. */
  list(query: MerchantAccountQuery): Page<MerchantAccountRow> {
    const filter = { only: query.only ? JSON.stringify(query.only) : null, search: query.search ? query.search : null };
    const page = keysetPage<MerchantAccountRecord>(
      query,
      (row) => row.id,
      (key, count) => this.pageAfter.all({ ...filter, key: key ?? '', count }),
      (key, count) => this.pageBefore.all({ ...filter, key, count }),
    );
    return { ...page, items: page.items.map(toRow) };
  }
}

function toRow(record: MerchantAccountRecord): MerchantAccountRow {
  const settings = Object.fromEntries(
    settingKeys.map((key) => [key, decode(settingColumns[key][1], record[settingColumns[key][0]])]),
  ) as unknown as MerchantAccountSettings;
  return {
    id: record.id,
    displayName: record.display_name,
    ...settings,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
