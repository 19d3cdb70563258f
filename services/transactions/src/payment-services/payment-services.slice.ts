/**
 * Payment services — a merchant account's connections to providers: list (routing order, paged), get, create,
 * update, delete; and the payment service definitions they are made from. Other slices (transactions) read a
 * connection with its effective capabilities through `connection()`.
 */
import { ApiError, pageOf, type Page, type PageQuery } from '@switchyard/api';
import {
  paymentServiceDefinitionPatterns,
  paymentServicePatterns,
  type PaymentService,
  type PaymentServiceCreateInput,
  type PaymentServiceDefinition,
  type PaymentServiceListRequest,
  type PaymentServiceUpdateInput,
} from '@switchyard/contracts';
import { effectiveCapabilities, type ConnectorCapabilities } from '@switchyard/connectors';
import { handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type TransactionsContext, type TransactionsSlice } from '../transactions-context';
import {
  paymentServiceDecider,
  paymentServiceStream,
  type MerchantProfileScheme,
  type PaymentServiceChanges,
} from './payment-service';
import {
  capabilityWireNames,
  fromWireCapabilities,
  PaymentServiceDefinitionCatalogue,
  toWireCapabilities,
} from './payment-service-definitions';
import { PaymentServicesReadModel, type PaymentServiceRow } from './payment-services.read-model';

/** A connection as the transaction flow needs it: its settings and what it may do. */
export interface PaymentServiceConnection extends PaymentServiceRow {
  /** The definition's capabilities less those the connection turned off. */
  readonly effectiveCapabilities: ConnectorCapabilities;
}

export class PaymentServices implements TransactionsSlice {
  readonly readModel: PaymentServicesReadModel;
  readonly definitions: PaymentServiceDefinitionCatalogue;
  private readonly decider: ReturnType<typeof paymentServiceDecider>;

  constructor(
    private readonly context: TransactionsContext,
    definitions: PaymentServiceDefinitionCatalogue = new PaymentServiceDefinitionCatalogue(),
    /** Where the connection's provider sends its notifications (shown as `webhook_url`, to configure at the provider). */
    private readonly notificationUrl: (paymentServiceId: string) => string | null = () => null,
  ) {
    this.readModel = new PaymentServicesReadModel(context.db);
    this.definitions = definitions;
    this.decider = paymentServiceDecider((id) => this.definitions.find(id));
  }

  get projection() {
    return this.readModel.projection;
  }

  /** A merchant account's payment services in routing order (`position`, then oldest first). */
  list(request: PaymentServiceListRequest): Page<PaymentService> {
    const rows = this.readModel.listByMerchantAccount(request.merchant_account_id, {
      ...(request.deleted ? { includeDeleted: true } : {}),
      ...(request.method !== undefined ? { method: request.method } : {}),
    });
    const query: PageQuery = { limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) };
    const page = pageOf(rows, sortKey, query);
    return { ...page, items: page.items.map((row) => this.toPaymentService(row)) };
  }

  /** A payment service of another merchant account, or deleted, does not exist. */
  get(merchantAccountId: string, id: string): PaymentService {
    const row = this.readModel.find(id);
    if (!row || row.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return this.toPaymentService(row);
  }

  /** The connection for the transaction flow; null when it does not exist under this account (or was deleted). */
  connection(merchantAccountId: string, id: string): PaymentServiceConnection | null {
    const row = this.readModel.find(id);
    if (!row || row.merchantAccountId !== merchantAccountId) return null;
    return { ...row, effectiveCapabilities: this.effectiveCapabilitiesOf(row) };
  }

  /** The account's active connections in routing order (for routing a transaction). */
  activeConnections(merchantAccountId: string): PaymentServiceConnection[] {
    return this.readModel
      .listByMerchantAccount(merchantAccountId)
      .filter((row) => row.active)
      .map((row) => ({ ...row, effectiveCapabilities: this.effectiveCapabilitiesOf(row) }));
  }

  async create(merchantAccountId: string, input: PaymentServiceCreateInput): Promise<PaymentService> {
    const id = this.context.newId();
    await asApiErrors(() =>
      handleCommand(this.context.store, paymentServiceStream(id), this.decider, {
        type: 'CreatePaymentService',
        data: {
          id,
          merchantAccountId,
          paymentServiceDefinitionId: input.payment_service_definition_id,
          displayName: input.display_name,
          position: input.position ?? this.readModel.nextPosition(merchantAccountId),
          acceptedCurrencies: input.accepted_currencies,
          acceptedCountries: input.accepted_countries,
          active: input.active ?? true,
          threeDSecureEnabled: input.three_d_secure_enabled ?? false,
          networkTokensEnabled: input.network_tokens_enabled ?? false,
          paymentMethodTokenizationEnabled: input.payment_method_tokenization_enabled ?? false,
          openLoop: input.open_loop ?? false,
          settlementReportingEnabled: input.settlement_reporting_enabled ?? false,
          merchantProfile: input.merchant_profile ? toMerchantProfile(input.merchant_profile) : null,
          capabilities: fromWireCapabilities(input.capabilities ?? {}),
          fields: input.fields,
          reportingFields: input.reporting_fields ?? [],
        },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(merchantAccountId, id);
  }

  async update(merchantAccountId: string, id: string, input: PaymentServiceUpdateInput): Promise<PaymentService> {
    const changes: PaymentServiceChanges = {
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.position !== undefined ? { position: input.position } : {}),
      ...(input.accepted_currencies !== undefined ? { acceptedCurrencies: input.accepted_currencies } : {}),
      ...(input.accepted_countries !== undefined ? { acceptedCountries: input.accepted_countries } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
      ...(input.three_d_secure_enabled !== undefined ? { threeDSecureEnabled: input.three_d_secure_enabled } : {}),
      ...(input.network_tokens_enabled !== undefined ? { networkTokensEnabled: input.network_tokens_enabled } : {}),
      ...(input.payment_method_tokenization_enabled !== undefined
        ? { paymentMethodTokenizationEnabled: input.payment_method_tokenization_enabled }
        : {}),
      ...(input.open_loop !== undefined ? { openLoop: input.open_loop } : {}),
      ...(input.settlement_reporting_enabled !== undefined
        ? { settlementReportingEnabled: input.settlement_reporting_enabled }
        : {}),
      ...(input.merchant_profile !== undefined ? { merchantProfile: toMerchantProfile(input.merchant_profile) } : {}),
      ...(input.capabilities !== undefined ? { capabilities: fromWireCapabilities(input.capabilities) } : {}),
      ...(input.fields !== undefined ? { fields: input.fields } : {}),
      ...(input.reporting_fields !== undefined ? { reportingFields: input.reporting_fields } : {}),
    };
    await asApiErrors(() =>
      handleCommand(this.context.store, paymentServiceStream(id), this.decider, {
        type: 'UpdatePaymentService',
        data: { merchantAccountId, changes },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(merchantAccountId, id);
  }

  async delete(merchantAccountId: string, id: string): Promise<void> {
    await asApiErrors(() =>
      handleCommand(this.context.store, paymentServiceStream(id), this.decider, {
        type: 'DeletePaymentService',
        data: { merchantAccountId },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
  }

  listDefinitions(query: PageQuery): Page<PaymentServiceDefinition> {
    return pageOf(this.definitions.list(), (definition) => definition.id, query);
  }

  getDefinition(id: string): PaymentServiceDefinition {
    const definition = this.definitions.toWire(id);
    if (!definition) throw ApiError.notFound();
    return definition;
  }

  rpcHandlers(): RpcHandlers {
    return {
      [paymentServicePatterns.list]: async (payload) => this.list(payload as PaymentServiceListRequest),
      [paymentServicePatterns.get]: async (payload) => {
        const { merchant_account_id: merchantAccountId, id } = payload as { merchant_account_id: string; id: string };
        return this.get(merchantAccountId, id);
      },
      [paymentServicePatterns.create]: async (payload) => {
        const { merchant_account_id: merchantAccountId, body } = payload as {
          merchant_account_id: string;
          body: PaymentServiceCreateInput;
        };
        return this.create(merchantAccountId, body);
      },
      [paymentServicePatterns.update]: async (payload) => {
        const {
          merchant_account_id: merchantAccountId,
          id,
          body,
        } = payload as { merchant_account_id: string; id: string; body: PaymentServiceUpdateInput };
        return this.update(merchantAccountId, id, body);
      },
      [paymentServicePatterns.delete]: async (payload) => {
        const { merchant_account_id: merchantAccountId, id } = payload as { merchant_account_id: string; id: string };
        await this.delete(merchantAccountId, id);
        return null;
      },
      [paymentServiceDefinitionPatterns.list]: async (payload) => this.listDefinitions(payload as PageQuery),
      [paymentServiceDefinitionPatterns.get]: async (payload) => this.getDefinition((payload as { id: string }).id),
    };
  }

  private effectiveCapabilitiesOf(row: PaymentServiceRow): ConnectorCapabilities {
    const definition = this.definitions.find(row.paymentServiceDefinitionId);
    const none = Object.fromEntries(
      Object.keys(capabilityWireNames).map((key) => [key, false]),
    ) as unknown as ConnectorCapabilities;
    return definition ? effectiveCapabilities(definition.capabilities, row.capabilities) : none;
  }

  private toPaymentService(row: PaymentServiceRow): PaymentService {
    const definition = this.definitions.find(row.paymentServiceDefinitionId);
    const secret = new Set(
      [...(definition?.fields ?? []), ...(definition?.reportingFields ?? [])]
        .filter((field) => field.secret)
        .map((field) => field.key),
    );
    return {
      type: 'payment-service',
      id: row.id,
      merchant_account_id: row.merchantAccountId,
      payment_service_definition_id: row.paymentServiceDefinitionId,
      active: row.active,
      method: row.method,
      display_name: row.displayName,
      position: row.position,
      status: 'created',
      accepted_currencies: [...row.acceptedCurrencies],
      accepted_countries: [...row.acceptedCountries],
      payment_method_tokenization_enabled: row.paymentMethodTokenizationEnabled,
      network_tokens_enabled: row.networkTokensEnabled,
      open_loop: row.openLoop,
      settlement_reporting_enabled: row.settlementReportingEnabled,
      three_d_secure_enabled: row.threeDSecureEnabled,
      merchant_profile: row.merchantProfile
        ? Object.fromEntries(
            Object.entries(row.merchantProfile).map(([scheme, profile]) => [
              scheme,
              {
                merchant_acquirer_bin: profile.merchantAcquirerBin,
                merchant_acquirer_id: profile.merchantAcquirerId,
                merchant_name: profile.merchantName,
                merchant_country_code: profile.merchantCountryCode,
                merchant_category_code: profile.merchantCategoryCode,
                merchant_url: profile.merchantUrl,
                created_at: profile.createdAt,
              },
            ]),
          )
        : null,
      webhook_url: this.notificationUrl(row.id),
      fields: row.fields.filter((field) => !secret.has(field.key)).map((field) => ({ ...field })),
      reporting_fields: row.reportingFields.filter((field) => !secret.has(field.key)).map((field) => ({ ...field })),
      capabilities: toWireCapabilities(this.effectiveCapabilitiesOf(row)),
      is_deleted: row.deleted,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
    };
  }
}

/** Routing order as a sortable unique key: position, then creation, then id. */
const sortKey = (row: PaymentServiceRow): string =>
  `${String(row.position).padStart(10, '0')}|${row.createdAt}|${row.id}`;

function toMerchantProfile(
  input: NonNullable<PaymentServiceCreateInput['merchant_profile']>,
): Record<string, MerchantProfileScheme> {
  return Object.fromEntries(
    Object.entries(input).map(([scheme, profile]) => [
      scheme,
      {
        merchantAcquirerBin: profile.merchant_acquirer_bin,
        merchantAcquirerId: profile.merchant_acquirer_id,
        merchantName: profile.merchant_name,
        merchantCountryCode: profile.merchant_country_code,
        merchantCategoryCode: profile.merchant_category_code,
        merchantUrl: profile.merchant_url,
      },
    ]),
  );
}
