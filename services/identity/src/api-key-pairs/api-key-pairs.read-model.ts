import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { KeyRecord, PublicJwk } from '@switchyard/auth';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import { permissionsOf } from '../roles/role-catalog';
import type { ApiKeyPairEvent } from './api-key-pair';

export interface ApiKeyPairRow {
  readonly id: string;
  readonly kid: string;
  readonly displayName: string;
  readonly publicJwk: PublicJwk;
  readonly active: boolean;
  readonly roleIds: readonly string[];
  readonly merchantAccountIds: readonly string[];
  readonly lastUsedAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface ApiKeyPairRecord {
  id: string;
  kid: string;
  display_name: string;
  public_jwk: string;
  active: number;
  role_ids: string;
  merchant_account_ids: string;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
  sort_key: string;
}

/** API key pairs as the API shows them, projected from `api-key-pair-<uuid>` streams; deleted keys leave. */
export class ApiKeyPairsReadModel {
  readonly projection: Projection;
  private readonly byKid: Database.Statement<[string], ApiKeyPairRecord>;
  private readonly byId: Database.Statement<[string], ApiKeyPairRecord>;
  private readonly pageAfter: Database.Statement<
    [{ key: string; within: string | null; count: number }],
    ApiKeyPairRecord
  >;
  private readonly pageBefore: Database.Statement<
    [{ key: string; within: string | null; count: number }],
    ApiKeyPairRecord
  >;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS api_key_pairs (
        id TEXT PRIMARY KEY, kid TEXT NOT NULL UNIQUE, display_name TEXT NOT NULL, public_jwk TEXT NOT NULL,
        active INTEGER NOT NULL, role_ids TEXT NOT NULL, merchant_account_ids TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_used_at TEXT,
        sort_key TEXT NOT NULL UNIQUE);`);
    this.byKid = db.prepare('SELECT * FROM api_key_pairs WHERE kid = ?');
    this.byId = db.prepare('SELECT * FROM api_key_pairs WHERE id = ?');
    // `within` (a JSON array, or null for every key): only keys limited to some of those merchant accounts.
    const within = `(@within IS NULL OR (json_array_length(merchant_account_ids) > 0 AND NOT EXISTS (
      SELECT 1 FROM json_each(merchant_account_ids) AS limited WHERE limited.value NOT IN (SELECT value FROM json_each(@within)))))`;
    this.pageAfter = db.prepare(
      `SELECT * FROM api_key_pairs WHERE sort_key > @key AND ${within} ORDER BY sort_key LIMIT @count`,
    );
    this.pageBefore = db.prepare(
      `SELECT * FROM api_key_pairs WHERE sort_key < @key AND ${within} ORDER BY sort_key DESC LIMIT @count`,
    );

    const insert = db.prepare(
      `INSERT INTO api_key_pairs (id, kid, display_name, public_jwk, active, role_ids, merchant_account_ids, created_at, updated_at, sort_key)
       VALUES (@id, @kid, @displayName, @publicJwk, @active, @roleIds, @merchantAccountIds, @at, @at, @sortKey)`,
    );
    const update = db.prepare(
      `UPDATE api_key_pairs SET display_name = coalesce(@displayName, display_name), active = coalesce(@active, active),
         role_ids = coalesce(@roleIds, role_ids), merchant_account_ids = coalesce(@merchantAccountIds, merchant_account_ids),
         updated_at = @at WHERE id = @id`,
    );
    const remove = db.prepare('DELETE FROM api_key_pairs WHERE id = ?');
    const used = db.prepare('UPDATE api_key_pairs SET last_used_at = ? WHERE id = ?');
    const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

    this.projection = {
      name: 'api-key-pairs',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as ApiKeyPairEvent;
        switch (event.type) {
          case 'ApiKeyPairCreated':
            insert.run({
              id: event.data.id,
              kid: event.data.kid,
              displayName: event.data.displayName,
              publicJwk: JSON.stringify(event.data.publicJwk),
              active: event.data.active ? 1 : 0,
              roleIds: JSON.stringify(event.data.roleIds),
              merchantAccountIds: JSON.stringify(event.data.merchantAccountIds),
              at: event.data.at,
              sortKey: `${event.data.at}|${event.data.id}`,
            });
            return;
          case 'ApiKeyPairUpdated':
            update.run({
              id: event.data.id,
              displayName: event.data.displayName ?? null,
              active: event.data.active === undefined ? null : event.data.active ? 1 : 0,
              roleIds: json(event.data.roleIds),
              merchantAccountIds: json(event.data.merchantAccountIds),
              at: event.data.at,
            });
            return;
          case 'ApiKeyPairDeleted':
            remove.run(event.data.id);
            return;
          case 'ApiKeyPairUsed':
            used.run(event.data.at, event.data.id);
            return;
          default:
            return;
        }
      },
    };
  }

  findByKid(kid: string): ApiKeyPairRow | null {
    const row = this.byKid.get(kid);
    return row ? toRow(row) : null;
  }

  find(id: string): ApiKeyPairRow | null {
    const row = this.byId.get(id);
    return row ? toRow(row) : null;
  }

  /** Oldest first; with `within`, only the keys limited to some of those merchant accounts. */
  list(query: PageQuery, within?: readonly string[]): Page<ApiKeyPairRow> {
    const accounts = within === undefined ? null : JSON.stringify(within);
    const page = keysetPage<ApiKeyPairRecord>(
      query,
      (row) => row.sort_key,
      (key, count) => this.pageAfter.all({ key: key ?? '', within: accounts, count }),
      (key, count) => this.pageBefore.all({ key, within: accounts, count }),
    );
    return { ...page, items: page.items.map(toRow) };
  }

  /** What the gateway needs to authenticate a request signed with this key. */
  findKeyRecord(kid: string): KeyRecord | null {
    const row = this.findByKid(kid);
    if (!row) return null;
    return {
      id: row.id,
      kid: row.kid,
      publicJwk: row.publicJwk,
      active: row.active,
      permissions: permissionsOf(row.roleIds),
      merchantAccountIds: row.merchantAccountIds,
    };
  }
}

function toRow(row: ApiKeyPairRecord): ApiKeyPairRow {
  return {
    id: row.id,
    kid: row.kid,
    displayName: row.display_name,
    publicJwk: JSON.parse(row.public_jwk) as PublicJwk,
    active: row.active === 1,
    roleIds: JSON.parse(row.role_ids) as string[],
    merchantAccountIds: JSON.parse(row.merchant_account_ids) as string[],
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
