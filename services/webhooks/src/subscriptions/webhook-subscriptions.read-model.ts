import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import { KeptAnswers, type Projection } from '@switchyard/readmodel';
import type { Sealed, SealedBasicAuth, WebhookSubscriptionEvent } from './webhook-subscription';

export interface WebhookSubscriptionRow {
  readonly id: string;
  /** null: instance level. */
  readonly merchantAccountId: string | null;
  readonly url: string;
  readonly eventNames: readonly string[] | null;
  readonly active: boolean;
  /** The password sealed, as in the events. */
  readonly basicAuth: SealedBasicAuth | null;
  readonly description: string | null;
  /** Whether payloads keep buyers' billing details (the last caller to create or change it could read them). */
  readonly billingDetails: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface WebhookSecretRow {
  readonly id: string;
  readonly subscriptionId: string;
  readonly secret: Sealed;
  readonly last4: string;
  readonly active: boolean;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

interface SubscriptionRecord {
  id: string;
  merchant_account_id: string | null;
  url: string;
  event_names: string | null;
  active: number;
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  description: string | null;
  billing_details: number;
  deleted: number;
  created_at: string;
  updated_at: string;
}

interface SecretRecord {
  id: string;
  subscription_id: string;
  secret: string;
  last4: string;
  active: number;
  created_at: string;
  revoked_at: string | null;
}

type ListParameters = { account: string; instance: number; key: string | null; count: number };

/** The events `apply` handles: each one may change what `activeFor` answers. */
const handledEvents: ReadonlySet<string> = new Set<WebhookSubscriptionEvent['type']>([
  'WebhookSubscriptionCreated',
  'WebhookSubscriptionUpdated',
  'WebhookSubscriptionDeleted',
  'WebhookSecretCreated',
  'WebhookSecretRevoked',
  'WebhookSecretsResealed',
]);

/**
 * Webhook subscriptions and their secrets, projected from `webhook-subscription-<uuid>`. Secrets and basic-auth
 * passwords are kept sealed, as the events carry them. Deleted subscriptions stay, marked, and are found by nothing.
 * Lists are oldest first, keyed `created_at|id`.
 */
export class WebhookSubscriptionsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], SubscriptionRecord>;
  private readonly listAfter: Database.Statement<[ListParameters], SubscriptionRecord>;
  private readonly listBefore: Database.Statement<[ListParameters], SubscriptionRecord>;
  private readonly matchingRecords: Database.Statement<[{ account: string | null }], SubscriptionRecord>;
  private readonly secretsOf: Database.Statement<[string], SecretRecord>;
  private readonly activeSecretsOf: Database.Statement<[string], SecretRecord>;
  private readonly allStatement: Database.Statement<[], SubscriptionRecord>;
  private readonly deletedStatement: Database.Statement<[], { count: number }>;
  /** `activeFor`'s answers: every event delivered asks it, few events change it. */
  private readonly active: KeptAnswers<readonly WebhookSubscriptionRow[]>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_subscriptions (
        id TEXT PRIMARY KEY, merchant_account_id TEXT, url TEXT NOT NULL, event_names TEXT, active INTEGER NOT NULL,
        basic_auth_username TEXT, basic_auth_password TEXT, description TEXT,
        deleted INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS webhook_subscriptions_by_account ON webhook_subscriptions (merchant_account_id, created_at, id);
      CREATE TABLE IF NOT EXISTS webhook_secrets (
        id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL, secret TEXT NOT NULL, last4 TEXT NOT NULL, active INTEGER NOT NULL,
        created_at TEXT NOT NULL, revoked_at TEXT);
      CREATE INDEX IF NOT EXISTS webhook_secrets_by_subscription ON webhook_secrets (subscription_id, created_at, id);`);
    // Added by issue 22: subscriptions created before it carry no such setting, and get no billing details.
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(webhook_subscriptions)').all();
    if (!columns.some((column) => column.name === 'billing_details'))
      db.exec('ALTER TABLE webhook_subscriptions ADD COLUMN billing_details INTEGER NOT NULL DEFAULT 0');
    const visible = `deleted = 0 AND (merchant_account_id = @account OR (@instance = 1 AND merchant_account_id IS NULL))`;
    this.byId = db.prepare('SELECT * FROM webhook_subscriptions WHERE id = ? AND deleted = 0');
    this.listAfter = db.prepare(
      `SELECT * FROM webhook_subscriptions WHERE ${visible} AND (@key IS NULL OR created_at || '|' || id > @key) ORDER BY created_at, id LIMIT @count`,
    );
    this.listBefore = db.prepare(
      `SELECT * FROM webhook_subscriptions WHERE ${visible} AND created_at || '|' || id < @key ORDER BY created_at DESC, id DESC LIMIT @count`,
    );
    this.matchingRecords = db.prepare(
      `SELECT * FROM webhook_subscriptions WHERE deleted = 0 AND active = 1 AND (merchant_account_id IS NULL OR merchant_account_id = @account) ORDER BY created_at, id`,
    );
    this.secretsOf = db.prepare('SELECT * FROM webhook_secrets WHERE subscription_id = ? ORDER BY created_at, id');
    this.allStatement = db.prepare('SELECT * FROM webhook_subscriptions WHERE deleted = 0 ORDER BY created_at, id');
    this.deletedStatement = db.prepare('SELECT count(*) AS count FROM webhook_subscriptions WHERE deleted = 1');
    this.activeSecretsOf = db.prepare(
      'SELECT * FROM webhook_secrets WHERE subscription_id = ? AND active = 1 ORDER BY created_at, id',
    );

    const insert = db.prepare(
      `INSERT OR REPLACE INTO webhook_subscriptions (id, merchant_account_id, url, event_names, active, basic_auth_username, basic_auth_password,
         description, billing_details, deleted, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @url, @event_names, @active, @basic_auth_username, @basic_auth_password, @description, @billing_details, 0,
         @created_at, @updated_at)`,
    );
    const update = db.prepare(
      `UPDATE webhook_subscriptions SET url = @url, event_names = @event_names, active = @active, basic_auth_username = @basic_auth_username,
         basic_auth_password = @basic_auth_password, description = @description, billing_details = @billing_details, updated_at = @updated_at
         WHERE id = @id`,
    );
    const markDeleted = db.prepare(
      'UPDATE webhook_subscriptions SET deleted = 1, active = 0, updated_at = @at WHERE id = @id',
    );
    const insertSecret = db.prepare(
      `INSERT OR REPLACE INTO webhook_secrets (id, subscription_id, secret, last4, active, created_at, revoked_at)
       VALUES (@id, @subscription_id, @secret, @last4, 1, @created_at, NULL)`,
    );
    const revokeSecret = db.prepare(
      'UPDATE webhook_secrets SET active = 0, revoked_at = @at WHERE id = @id AND subscription_id = @subscriptionId',
    );
    const anyById = db.prepare<[string], SubscriptionRecord>('SELECT * FROM webhook_subscriptions WHERE id = ?');
    // A re-sealed value changes nothing a client sees: updated_at stays.
    const resealSecret = db.prepare(
      'UPDATE webhook_secrets SET secret = @secret WHERE id = @id AND subscription_id = @subscriptionId',
    );
    const resealPassword = db.prepare(
      'UPDATE webhook_subscriptions SET basic_auth_password = @password WHERE id = @id AND basic_auth_password IS NOT NULL',
    );
    const active = new KeptAnswers<readonly WebhookSubscriptionRow[]>(db);
    this.active = active;

    this.projection = {
      name: 'webhook-subscriptions',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as WebhookSubscriptionEvent;
        if (handledEvents.has(event.type)) active.forget();
        switch (event.type) {
          case 'WebhookSubscriptionCreated': {
            const data = event.data;
            insert.run({
              ...settingsRecord({ ...data, billingDetails: data.billingDetails ?? false }),
              id: data.id,
              merchant_account_id: data.merchantAccountId,
              created_at: data.at,
              updated_at: data.at,
            });
            return;
          }
          case 'WebhookSubscriptionUpdated': {
            const record = anyById.get(event.data.id);
            if (!record) return;
            const row = toRow(record);
            const data = event.data;
            update.run({
              ...settingsRecord({
                url: data.url ?? row.url,
                eventNames: data.eventNames !== undefined ? data.eventNames : row.eventNames,
                active: data.active ?? row.active,
                basicAuth: data.basicAuth !== undefined ? data.basicAuth : row.basicAuth,
                description: data.description !== undefined ? data.description : row.description,
                billingDetails: data.billingDetails ?? row.billingDetails,
              }),
              id: row.id,
              updated_at: data.at,
            });
            return;
          }
          case 'WebhookSubscriptionDeleted':
            markDeleted.run({ id: event.data.id, at: event.data.at });
            return;
          case 'WebhookSecretCreated':
            insertSecret.run({
              id: event.data.secretId,
              subscription_id: event.data.subscriptionId,
              secret: event.data.secret,
              last4: event.data.last4,
              created_at: event.data.at,
            });
            return;
          case 'WebhookSecretRevoked':
            revokeSecret.run({ id: event.data.secretId, subscriptionId: event.data.subscriptionId, at: event.data.at });
            return;
          case 'WebhookSecretsResealed':
            for (const { secretId, secret } of event.data.secrets)
              resealSecret.run({ id: secretId, subscriptionId: event.data.id, secret });
            if (event.data.basicAuthPassword !== undefined)
              resealPassword.run({ id: event.data.id, password: event.data.basicAuthPassword });
            return;
          default:
            return;
        }
      },
    };
  }

  /** Every subscription that exists (not deleted), oldest first: what a webhooks key rotation re-seals. */
  allExisting(): WebhookSubscriptionRow[] {
    return this.allStatement.all().map(toRow);
  }

  /** How many deleted subscriptions there are (their values are never opened again, so never re-sealed). */
  deletedCount(): number {
    return this.deletedStatement.get()?.count ?? 0;
  }

  /** A subscription that exists (not deleted), of any owner. */
  find(id: string): WebhookSubscriptionRow | null {
    const record = this.byId.get(id);
    return record ? toRow(record) : null;
  }

  /** The account's subscriptions (and, with `includeInstanceLevel`, the instance-level ones) after `key`, oldest first. */
  after(
    scope: { merchantAccountId: string; includeInstanceLevel: boolean },
    key: string | null,
    count: number,
  ): WebhookSubscriptionRow[] {
    return this.listAfter
      .all({ account: scope.merchantAccountId, instance: scope.includeInstanceLevel ? 1 : 0, key, count })
      .map(toRow);
  }

  /** The same list before `key`, newest first. */
  before(
    scope: { merchantAccountId: string; includeInstanceLevel: boolean },
    key: string,
    count: number,
  ): WebhookSubscriptionRow[] {
    return this.listBefore
      .all({ account: scope.merchantAccountId, instance: scope.includeInstanceLevel ? 1 : 0, key, count })
      .map(toRow);
  }

  /** Active subscriptions of the account and the instance-level ones (only those when `merchantAccountId` is null). */
  activeFor(merchantAccountId: string | null): readonly WebhookSubscriptionRow[] {
    return this.active.get(merchantAccountId ?? '', () =>
      this.matchingRecords.all({ account: merchantAccountId }).map(toRow),
    );
  }

  /** Every secret of the subscription, revoked ones too, oldest first. */
  secrets(subscriptionId: string): WebhookSecretRow[] {
    return this.secretsOf.all(subscriptionId).map(toSecretRow);
  }

  activeSecrets(subscriptionId: string): WebhookSecretRow[] {
    return this.activeSecretsOf.all(subscriptionId).map(toSecretRow);
  }
}

/** The list key: creation time, then id (ISO timestamps of one length sort as text). */
export const listKey = (row: WebhookSubscriptionRow): string => `${row.createdAt}|${row.id}`;

function settingsRecord(
  settings: Pick<
    WebhookSubscriptionRow,
    'url' | 'eventNames' | 'active' | 'basicAuth' | 'description' | 'billingDetails'
  >,
) {
  return {
    url: settings.url,
    event_names: settings.eventNames ? JSON.stringify(settings.eventNames) : null,
    active: settings.active ? 1 : 0,
    basic_auth_username: settings.basicAuth?.username ?? null,
    basic_auth_password: settings.basicAuth?.password ?? null,
    description: settings.description,
    billing_details: settings.billingDetails ? 1 : 0,
  };
}

function toRow(record: SubscriptionRecord): WebhookSubscriptionRow {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    url: record.url,
    eventNames: record.event_names ? (JSON.parse(record.event_names) as string[]) : null,
    active: record.active === 1,
    basicAuth:
      record.basic_auth_username !== null && record.basic_auth_password !== null
        ? { username: record.basic_auth_username, password: record.basic_auth_password }
        : null,
    description: record.description,
    billingDetails: record.billing_details === 1,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}

function toSecretRow(record: SecretRecord): WebhookSecretRow {
  return {
    id: record.id,
    subscriptionId: record.subscription_id,
    secret: record.secret,
    last4: record.last4,
    active: record.active === 1,
    createdAt: record.created_at,
    revokedAt: record.revoked_at,
  };
}
