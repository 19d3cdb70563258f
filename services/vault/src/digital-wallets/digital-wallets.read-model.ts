/**
 * Digital wallets per merchant account, projected from `digital-wallet-<uuid>` (registered, updated with the changed
 * fields, deleted: the row goes). A Paze wallet's row keeps its decryption key sealed, as the events carry it, so the
 * read model rebuilds from the log alone; the clear key is never here.
 */
import type Database from 'better-sqlite3';
import type { DigitalWalletProvider } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import type { DigitalWalletEvent, DigitalWalletSettings } from './digital-wallet';

export interface DigitalWalletView extends DigitalWalletSettings {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly provider: DigitalWalletProvider;
  /** Paze: the decryption key's public key thumbprint; null for the other providers. */
  readonly decryptionKeyId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface DigitalWalletRecord {
  id: string;
  merchant_account_id: string;
  provider: string;
  merchant_name: string;
  merchant_display_name: string | null;
  merchant_url: string | null;
  merchant_country_code: string | null;
  domain_names: string;
  decryption_key_id: string | null;
  sealed_decryption_key: string | null;
  created_at: string;
  updated_at: string;
}

export class DigitalWalletsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], DigitalWalletRecord>;
  private readonly byAccount: Database.Statement<[string], DigitalWalletRecord>;
  private readonly byProvider: Database.Statement<[string, string], DigitalWalletRecord>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS digital_wallets (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, provider TEXT NOT NULL, merchant_name TEXT NOT NULL,
        merchant_display_name TEXT, merchant_url TEXT, merchant_country_code TEXT, domain_names TEXT NOT NULL,
        decryption_key_id TEXT, sealed_decryption_key TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS digital_wallets_by_account ON digital_wallets (merchant_account_id, provider, created_at);`);
    this.byId = db.prepare('SELECT * FROM digital_wallets WHERE id = ?');
    this.byAccount = db.prepare('SELECT * FROM digital_wallets WHERE merchant_account_id = ? ORDER BY created_at, id');
    // One per provider is held on the write side; newest first should a stale row ever linger.
    this.byProvider = db.prepare(
      'SELECT * FROM digital_wallets WHERE merchant_account_id = ? AND provider = ? ORDER BY created_at DESC, id DESC LIMIT 1',
    );
    const upsert = db.prepare<[DigitalWalletRecord]>(
      `INSERT OR REPLACE INTO digital_wallets (id, merchant_account_id, provider, merchant_name, merchant_display_name, merchant_url,
         merchant_country_code, domain_names, decryption_key_id, sealed_decryption_key, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @provider, @merchant_name, @merchant_display_name, @merchant_url, @merchant_country_code,
         @domain_names, @decryption_key_id, @sealed_decryption_key, @created_at, @updated_at)`,
    );
    const remove = db.prepare<[string]>('DELETE FROM digital_wallets WHERE id = ?');
    const byId = this.byId;

    this.projection = {
      name: 'digital-wallets',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as DigitalWalletEvent;
        switch (event.type) {
          case 'DigitalWalletRegistered': {
            const { at, decryptionKey, domainNames, ...wallet } = event.data;
            upsert.run({
              id: wallet.id,
              merchant_account_id: wallet.merchantAccountId,
              provider: wallet.provider,
              merchant_name: wallet.merchantName,
              merchant_display_name: wallet.merchantDisplayName,
              merchant_url: wallet.merchantUrl,
              merchant_country_code: wallet.merchantCountryCode,
              domain_names: JSON.stringify(domainNames),
              decryption_key_id: decryptionKey?.keyId ?? null,
              sealed_decryption_key: decryptionKey?.sealed ?? null,
              created_at: at,
              updated_at: at,
            });
            return;
          }
          case 'DigitalWalletUpdated': {
            const row = byId.get(event.data.id);
            if (!row) return;
            const changes = event.data;
            upsert.run({
              ...row,
              ...(changes.merchantName !== undefined ? { merchant_name: changes.merchantName } : {}),
              ...(changes.merchantDisplayName !== undefined
                ? { merchant_display_name: changes.merchantDisplayName }
                : {}),
              ...(changes.merchantUrl !== undefined ? { merchant_url: changes.merchantUrl } : {}),
              ...(changes.merchantCountryCode !== undefined
                ? { merchant_country_code: changes.merchantCountryCode }
                : {}),
              ...(changes.domainNames !== undefined ? { domain_names: JSON.stringify(changes.domainNames) } : {}),
              ...(changes.decryptionKey
                ? {
                    decryption_key_id: changes.decryptionKey.keyId,
                    sealed_decryption_key: changes.decryptionKey.sealed,
                  }
                : {}),
              updated_at: changes.at,
            });
            return;
          }
          case 'DigitalWalletDeleted':
            remove.run(event.data.id);
            return;
          default:
            return;
        }
      },
    };
  }

  /** A wallet of any merchant account; null once deleted. */
  find(id: string): DigitalWalletView | null {
    const record = this.byId.get(id);
    return record ? toView(record) : null;
  }

  /** A merchant account's wallets, oldest first. */
  list(merchantAccountId: string): DigitalWalletView[] {
    return this.byAccount.all(merchantAccountId).map(toView);
  }

  /** The merchant account's wallet of a provider, with its sealed decryption key (Paze). */
  ofProvider(
    merchantAccountId: string,
    provider: DigitalWalletProvider,
  ): { wallet: DigitalWalletView; sealedDecryptionKey: string | null } | null {
    const record = this.byProvider.get(merchantAccountId, provider);
    return record ? { wallet: toView(record), sealedDecryptionKey: record.sealed_decryption_key } : null;
  }
}

function toView(record: DigitalWalletRecord): DigitalWalletView {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    provider: record.provider as DigitalWalletProvider,
    merchantName: record.merchant_name,
    merchantDisplayName: record.merchant_display_name,
    merchantUrl: record.merchant_url,
    merchantCountryCode: record.merchant_country_code,
    domainNames: JSON.parse(record.domain_names) as string[],
    decryptionKeyId: record.decryption_key_id,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
