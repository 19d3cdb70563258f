import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@switchyard/eventstore';
import { KeptAnswers, type Projection } from '@switchyard/readmodel';
import type {
  CapabilityOverrides,
  Field,
  MerchantProfileScheme,
  PaymentServiceEvent,
  PaymentServiceSettings,
} from './payment-service';

/** A connection as stored: its settings (as the decider knows them) plus identity, fields and lifecycle. */
export interface PaymentServiceRow extends Omit<PaymentServiceSettings, 'merchantProfile'> {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly paymentServiceDefinitionId: string;
  readonly method: string;
  /** Per card scheme, with when it was set; null: none. */
  readonly merchantProfile: Readonly<Record<string, MerchantProfileScheme & { readonly createdAt: string }>> | null;
  readonly fields: readonly Field[];
  readonly reportingFields: readonly Field[];
  readonly deleted: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface PaymentServiceRecord {
  id: string;
  merchant_account_id: string;
  payment_service_definition_id: string;
  method: string;
  display_name: string;
  position: number;
  accepted_currencies: string;
  accepted_countries: string;
  active: number;
  three_d_secure_enabled: number;
  network_tokens_enabled: number;
  payment_method_tokenization_enabled: number;
  open_loop: number;
  settlement_reporting_enabled: number;
  merchant_profile: string | null;
  capabilities: string;
  fields: string;
  reporting_fields: string;
  deleted: number;
  created_at: string;
  updated_at: string;
}

/** The events `apply` handles: each one may change a list. */
const handledEvents: ReadonlySet<string> = new Set<PaymentServiceEvent['type']>([
  'PaymentServiceCreated',
  'PaymentServiceUpdated',
  'PaymentServiceDeleted',
]);

/**
 * Payment services per merchant account in routing order (`position`, then oldest first), projected from
 * `payment-service-<uuid>`. Deleted ones stay, marked, for `deleted=true` lists; lookups by id skip them.
 */
export class PaymentServicesReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], PaymentServiceRecord>;
  private readonly byAccount: Database.Statement<
    [{ merchantAccountId: string; includeDeleted: number; method: string | null }],
    PaymentServiceRecord
  >;
  private readonly lastPosition: Database.Statement<[string], { position: number | null }>;
  /** `listByMerchantAccount`'s answers: every payment asks it, few events change it. */
  private readonly lists: KeptAnswers<readonly PaymentServiceRow[]>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS payment_services (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, payment_service_definition_id TEXT NOT NULL, method TEXT NOT NULL,
        display_name TEXT NOT NULL, position INTEGER NOT NULL, accepted_currencies TEXT NOT NULL, accepted_countries TEXT NOT NULL,
        active INTEGER NOT NULL, three_d_secure_enabled INTEGER NOT NULL, network_tokens_enabled INTEGER NOT NULL,
        payment_method_tokenization_enabled INTEGER NOT NULL, open_loop INTEGER NOT NULL, settlement_reporting_enabled INTEGER NOT NULL,
        merchant_profile TEXT, capabilities TEXT NOT NULL, fields TEXT NOT NULL, reporting_fields TEXT NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS payment_services_by_account ON payment_services (merchant_account_id, position, created_at, id);`);
    this.byId = db.prepare('SELECT * FROM payment_services WHERE id = ?');
    this.byAccount = db.prepare(
      `SELECT * FROM payment_services WHERE merchant_account_id = @merchantAccountId AND (@includeDeleted = 1 OR deleted = 0)
         AND (@method IS NULL OR method = @method)
       ORDER BY position, created_at, id`,
    );
    this.lastPosition = db.prepare(
      'SELECT MAX(position) AS position FROM payment_services WHERE merchant_account_id = ? AND deleted = 0',
    );
    const upsert = db.prepare(
      `INSERT OR REPLACE INTO payment_services (id, merchant_account_id, payment_service_definition_id, method, display_name, position,
         accepted_currencies, accepted_countries, active, three_d_secure_enabled, network_tokens_enabled, payment_method_tokenization_enabled,
         open_loop, settlement_reporting_enabled, merchant_profile, capabilities, fields, reporting_fields, deleted, created_at, updated_at)
       VALUES (@id, @merchant_account_id, @payment_service_definition_id, @method, @display_name, @position, @accepted_currencies,
         @accepted_countries, @active, @three_d_secure_enabled, @network_tokens_enabled, @payment_method_tokenization_enabled, @open_loop,
         @settlement_reporting_enabled, @merchant_profile, @capabilities, @fields, @reporting_fields, @deleted, @created_at, @updated_at)`,
    );
    const markDeleted = db.prepare(
      'UPDATE payment_services SET deleted = 1, active = 0, updated_at = @at WHERE id = @id',
    );
    const byId = this.byId;
    const lists = new KeptAnswers<readonly PaymentServiceRow[]>(db);
    this.lists = lists;

    this.projection = {
      name: 'payment-services',
      apply(recorded: RecordedEvent) {
        const event = { type: recorded.type, data: recorded.data } as PaymentServiceEvent;
        if (handledEvents.has(event.type)) lists.forget();
        switch (event.type) {
          case 'PaymentServiceCreated': {
            const data = event.data;
            upsert.run(
              toRecord({
                id: data.id,
                merchantAccountId: data.merchantAccountId,
                paymentServiceDefinitionId: data.paymentServiceDefinitionId,
                method: data.method,
                displayName: data.displayName,
                position: data.position,
                acceptedCurrencies: data.acceptedCurrencies,
                acceptedCountries: data.acceptedCountries,
                active: data.active,
                threeDSecureEnabled: data.threeDSecureEnabled,
                networkTokensEnabled: data.networkTokensEnabled,
                paymentMethodTokenizationEnabled: data.paymentMethodTokenizationEnabled,
                openLoop: data.openLoop,
                settlementReportingEnabled: data.settlementReportingEnabled,
                merchantProfile: withCreatedAt(data.merchantProfile, data.at),
                capabilities: data.capabilities,
                fields: data.fields,
                reportingFields: data.reportingFields,
                deleted: false,
                createdAt: data.at,
                updatedAt: data.at,
              }),
            );
            return;
          }
          case 'PaymentServiceUpdated': {
            const record = byId.get(event.data.id);
            if (!record) return;
            const row = toRow(record);
            const data = event.data;
            upsert.run(
              toRecord({
                ...row,
                ...(data.displayName !== undefined ? { displayName: data.displayName } : {}),
                ...(data.position !== undefined ? { position: data.position } : {}),
                ...(data.acceptedCurrencies !== undefined ? { acceptedCurrencies: data.acceptedCurrencies } : {}),
                ...(data.acceptedCountries !== undefined ? { acceptedCountries: data.acceptedCountries } : {}),
                ...(data.active !== undefined ? { active: data.active } : {}),
                ...(data.threeDSecureEnabled !== undefined ? { threeDSecureEnabled: data.threeDSecureEnabled } : {}),
                ...(data.networkTokensEnabled !== undefined ? { networkTokensEnabled: data.networkTokensEnabled } : {}),
                ...(data.paymentMethodTokenizationEnabled !== undefined
                  ? { paymentMethodTokenizationEnabled: data.paymentMethodTokenizationEnabled }
                  : {}),
                ...(data.openLoop !== undefined ? { openLoop: data.openLoop } : {}),
                ...(data.settlementReportingEnabled !== undefined
                  ? { settlementReportingEnabled: data.settlementReportingEnabled }
                  : {}),
                ...(data.merchantProfile !== undefined
                  ? { merchantProfile: withCreatedAt(data.merchantProfile, data.at) }
                  : {}),
                ...(data.capabilities !== undefined
                  ? { capabilities: { ...row.capabilities, ...data.capabilities } }
                  : {}),
                ...(data.fields !== undefined ? { fields: mergeFields(row.fields, data.fields) } : {}),
                ...(data.reportingFields !== undefined
                  ? { reportingFields: mergeFields(row.reportingFields, data.reportingFields) }
                  : {}),
                updatedAt: data.at,
              }),
            );
            return;
          }
          case 'PaymentServiceDeleted':
            markDeleted.run({ id: event.data.id, at: event.data.at });
            return;
          default:
            return;
        }
      },
    };
  }

  /** A payment service that exists (not deleted), of any merchant account. */
  find(id: string): PaymentServiceRow | null {
    const record = this.byId.get(id);
    return record && record.deleted === 0 ? toRow(record) : null;
  }

  /** A merchant account's payment services in routing order; deleted ones only when asked for. */
  listByMerchantAccount(
    merchantAccountId: string,
    options: { includeDeleted?: boolean; method?: string } = {},
  ): readonly PaymentServiceRow[] {
    const includeDeleted = options.includeDeleted ? 1 : 0;
    const method = options.method ?? null;
    return this.lists.get(JSON.stringify([merchantAccountId, includeDeleted, method]), () =>
      this.byAccount.all({ merchantAccountId, includeDeleted, method }).map(toRow),
    );
  }

  /** The position after the account's last payment service (1 for the first). */
  nextPosition(merchantAccountId: string): number {
    return (this.lastPosition.get(merchantAccountId)?.position ?? 0) + 1;
  }
}

function withCreatedAt(
  profile: Readonly<Record<string, MerchantProfileScheme>> | null | undefined,
  at: string,
): PaymentServiceRow['merchantProfile'] {
  if (!profile) return null;
  return Object.fromEntries(Object.entries(profile).map(([scheme, value]) => [scheme, { ...value, createdAt: at }]));
}

/** Sets the fields given by key; an empty value removes the key. */
function mergeFields(current: readonly Field[], changes: readonly Field[]): Field[] {
  const merged = new Map(current.map((field) => [field.key, field.value]));
  for (const field of changes) {
    if (field.value === '') merged.delete(field.key);
    else merged.set(field.key, field.value);
  }
  return [...merged].map(([key, value]) => ({ key, value }));
}

const bit = (value: boolean): number => (value ? 1 : 0);

function toRecord(row: PaymentServiceRow): PaymentServiceRecord {
  return {
    id: row.id,
    merchant_account_id: row.merchantAccountId,
    payment_service_definition_id: row.paymentServiceDefinitionId,
    method: row.method,
    display_name: row.displayName,
    position: row.position,
    accepted_currencies: JSON.stringify(row.acceptedCurrencies),
    accepted_countries: JSON.stringify(row.acceptedCountries),
    active: bit(row.active),
    three_d_secure_enabled: bit(row.threeDSecureEnabled),
    network_tokens_enabled: bit(row.networkTokensEnabled),
    payment_method_tokenization_enabled: bit(row.paymentMethodTokenizationEnabled),
    open_loop: bit(row.openLoop),
    settlement_reporting_enabled: bit(row.settlementReportingEnabled),
    merchant_profile: row.merchantProfile ? JSON.stringify(row.merchantProfile) : null,
    capabilities: JSON.stringify(row.capabilities),
    fields: JSON.stringify(row.fields),
    reporting_fields: JSON.stringify(row.reportingFields),
    deleted: bit(row.deleted),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function toRow(record: PaymentServiceRecord): PaymentServiceRow {
  return {
    id: record.id,
    merchantAccountId: record.merchant_account_id,
    paymentServiceDefinitionId: record.payment_service_definition_id,
    method: record.method,
    displayName: record.display_name,
    position: record.position,
    acceptedCurrencies: JSON.parse(record.accepted_currencies) as string[],
    acceptedCountries: JSON.parse(record.accepted_countries) as string[],
    active: record.active === 1,
    threeDSecureEnabled: record.three_d_secure_enabled === 1,
    networkTokensEnabled: record.network_tokens_enabled === 1,
    paymentMethodTokenizationEnabled: record.payment_method_tokenization_enabled === 1,
    openLoop: record.open_loop === 1,
    settlementReportingEnabled: record.settlement_reporting_enabled === 1,
    merchantProfile: record.merchant_profile
      ? (JSON.parse(record.merchant_profile) as PaymentServiceRow['merchantProfile'])
      : null,
    capabilities: JSON.parse(record.capabilities) as CapabilityOverrides,
    fields: JSON.parse(record.fields) as Field[],
    reportingFields: JSON.parse(record.reporting_fields) as Field[],
    deleted: record.deleted === 1,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}
