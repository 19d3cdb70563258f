/**
 * The live network tokens (active or suspended) per payment method, projected from `network-token-<uuid>`: a row per
 * provisioned token, its status kept, gone once deleted. A refused provisioning never makes a row. The token number
 * stays sealed here as in the events; it is opened only to be answered or used.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { NetworkTokenEvent } from './network-token';

export interface NetworkTokenView {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly paymentMethodId: string;
  readonly status: 'active' | 'suspended';
  readonly providerTokenId: string;
  readonly sealedToken: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly scheme: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface NetworkTokenRecord {
  id: string;
  merchant_account_id: string;
  payment_method_id: string;
  status: 'active' | 'suspended';
  provider_token_id: string;
  sealed_token: string;
  expiration_date: string;
  scheme: string;
  created_at: string;
  updated_at: string;
}

export class NetworkTokensReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], NetworkTokenRecord>;
  private readonly ofPaymentMethod: Database.Statement<[string, string], NetworkTokenRecord>;
  private readonly deletions: Database.Statement<[number], { merchant_account_id: string; payment_method_id: string }>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS network_tokens (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, payment_method_id TEXT NOT NULL, status TEXT NOT NULL,
        provider_token_id TEXT NOT NULL, sealed_token TEXT NOT NULL, expiration_date TEXT NOT NULL, scheme TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS network_tokens_by_payment_method ON network_tokens (payment_method_id, created_at);
      CREATE TABLE IF NOT EXISTS network_token_deletions (
        payment_method_id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, since TEXT NOT NULL);`);
    this.byId = db.prepare('SELECT * FROM network_tokens WHERE id = ?');
    this.ofPaymentMethod = db.prepare(
      'SELECT * FROM network_tokens WHERE merchant_account_id = ? AND payment_method_id = ? ORDER BY created_at, id',
    );
    this.deletions = db.prepare(
      'SELECT merchant_account_id, payment_method_id FROM network_token_deletions ORDER BY since, payment_method_id LIMIT ?',
    );

    const insert = db.prepare<[NetworkTokenRecord]>(
      `INSERT OR REPLACE INTO network_tokens (id, merchant_account_id, payment_method_id, status, provider_token_id, sealed_token, expiration_date, scheme, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @payment_method_id, @status, @provider_token_id, @sealed_token, @expiration_date, @scheme, @created_at, @updated_at)`,
    );
    const setStatus = db.prepare<[{ id: string; status: string; at: string }]>(
      'UPDATE network_tokens SET status = @status, updated_at = @at WHERE id = @id',
    );
    const remove = db.prepare<[string]>('DELETE FROM network_tokens WHERE id = ?');
    // A deleted payment method whose tokens are still live: its tokens are to be deleted (`NetworkTokens.deleteTokensOfDeletedMethods`).
    const owe = db.prepare<[{ payment_method_id: string; merchant_account_id: string; since: string }]>(
      `INSERT OR IGNORE INTO network_token_deletions (payment_method_id, merchant_account_id, since)
       SELECT @payment_method_id, @merchant_account_id, @since WHERE EXISTS (SELECT 1 FROM network_tokens WHERE payment_method_id = @payment_method_id)`,
    );
    const settle = db.prepare<[string]>(
      'DELETE FROM network_token_deletions WHERE payment_method_id = ? AND NOT EXISTS (SELECT 1 FROM network_tokens WHERE network_tokens.payment_method_id = network_token_deletions.payment_method_id)',
    );
    const paymentMethodOf = db.prepare<[string], { payment_method_id: string }>(
      'SELECT payment_method_id FROM network_tokens WHERE id = ?',
    );

    this.projection = {
      name: 'network-tokens',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as NetworkTokenEvent;
        switch (event.type) {
          case 'NetworkTokenProvisioned': {
            const d = event.data;
            insert.run({
              id: d.id,
              merchant_account_id: d.merchantAccountId,
              payment_method_id: d.paymentMethodId,
              status: 'active',
              provider_token_id: d.providerTokenId,
              sealed_token: d.sealedToken,
              expiration_date: d.expirationDate,
              scheme: d.scheme,
              created_at: d.at,
              updated_at: d.at,
            });
            return;
          }
          case 'NetworkTokenSuspended':
            setStatus.run({ id: event.data.id, status: 'suspended', at: event.data.at });
            return;
          case 'NetworkTokenResumed':
            setStatus.run({ id: event.data.id, status: 'active', at: event.data.at });
            return;
          case 'NetworkTokenDeleted': {
            const owner = paymentMethodOf.get(event.data.id);
            remove.run(event.data.id);
            if (owner) settle.run(owner.payment_method_id);
            return;
          }
          default: {
            // The payment methods slice's event, on the same log: a deleted method's live tokens are owed a deletion.
            if (recorded.type === 'PaymentMethodDeleted') {
              const d = recorded.data as { id: string; merchantAccountId: string; at: string };
              owe.run({ payment_method_id: d.id, merchant_account_id: d.merchantAccountId, since: d.at });
            }
            return;
          }
        }
      },
    };
  }

  /** A live token of any merchant account; null once deleted or never provisioned. */
  find(id: string): NetworkTokenView | null {
    const record = this.byId.get(id);
    return record ? toView(record) : null;
  }

  /** Deleted payment methods that still have live tokens, oldest deletion first. */
  pendingDeletions(limit: number): { readonly merchantAccountId: string; readonly paymentMethodId: string }[] {
    return this.deletions
      .all(limit)
      .map((row) => ({ merchantAccountId: row.merchant_account_id, paymentMethodId: row.payment_method_id }));
  }

  /** The payment method's live tokens, oldest first. */
  live(merchantAccountId: string, paymentMethodId: string): NetworkTokenView[] {
    return this.ofPaymentMethod.all(merchantAccountId, paymentMethodId).map(toView);
  }
}

function toView(record: NetworkTokenRecord): NetworkTokenView {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    paymentMethodId: record.payment_method_id,
    status: record.status,
    providerTokenId: record.provider_token_id,
    sealedToken: record.sealed_token,
    expirationDate: record.expiration_date,
    scheme: record.scheme,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
