/** Merchant accounts: create (operator-chosen ids), list by id, get, update their settings. */
import { ApiError, type Page } from '@switchyard/api';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  merchantAccountPatterns,
  type MerchantAccount,
  type MerchantAccountCreateInput,
  type MerchantAccountListRequest,
  type MerchantAccountUpdateInput,
} from '@switchyard/contracts';
import { handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type IdentityContext, type IdentitySlice } from '../identity-context';
import {
  merchantAccount,
  merchantAccountStream,
  type MerchantAccountChanges,
  type MerchantAccountSettings,
} from './merchant-account';
import { MerchantAccountsReadModel, type MerchantAccountRow } from './merchant-accounts.read-model';

export class MerchantAccounts implements IdentitySlice {
  readonly readModel: MerchantAccountsReadModel;

  constructor(private readonly context: IdentityContext) {
    this.readModel = new MerchantAccountsReadModel(context.db);
  }

  get projection() {
    return this.readModel.projection;
  }

  find(id: string): MerchantAccountRow | null {
    return this.readModel.find(id);
  }

  async create(input: {
    id: string;
    displayName: string;
    settings?: Partial<MerchantAccountSettings>;
  }): Promise<MerchantAccountRow> {
    await asApiErrors(() =>
      handleCommand(this.context.store, merchantAccountStream(input.id), merchantAccount, {
        type: 'CreateMerchantAccount',
        data: input,
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    const created = this.readModel.find(input.id);
    if (!created)
      throw ApiError.serverError(
        new Error(`merchant account ${input.id} missing from the read model after its append`),
      );
    return created;
  }

  async update(id: string, changes: MerchantAccountChanges): Promise<MerchantAccountRow> {
    await asApiErrors(() =>
      handleCommand(this.context.store, merchantAccountStream(id), merchantAccount, {
        type: 'UpdateMerchantAccount',
        data: changes,
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    const updated = this.readModel.find(id);
    if (!updated)
      throw ApiError.serverError(new Error(`merchant account ${id} missing from the read model after its append`));
    return updated;
  }

  get(id: string): MerchantAccount {
    const row = this.readModel.find(id);
    if (!row) throw ApiError.notFound();
    return toMerchantAccount(row);
  }

  list(request: MerchantAccountListRequest): Page<MerchantAccount> {
    const only =
      request.merchant_account_ids && request.merchant_account_ids.length > 0
        ? request.merchant_account_ids
        : undefined;
    const page = this.readModel.list({
      cursor: request.cursor ?? null,
      limit: request.limit,
      search: request.search ?? null,
      ...(only ? { only } : {}),
    });
    return { ...page, items: page.items.map(toMerchantAccount) };
  }

  /** Creates `default` on first start (or first CLI use); a concurrent creator winning is fine. */
  async ensureDefault(): Promise<void> {
    if (this.readModel.find(DEFAULT_MERCHANT_ACCOUNT_ID)) return;
    try {
      await this.create({ id: DEFAULT_MERCHANT_ACCOUNT_ID, displayName: 'Default' });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
      await this.context.catchUp();
    }
  }

  rpcHandlers(): RpcHandlers {
    return {
      [merchantAccountPatterns.list]: async (payload) => this.list(payload as MerchantAccountListRequest),
      [merchantAccountPatterns.get]: async (payload) => this.get((payload as { id: string }).id),
      [merchantAccountPatterns.create]: async (payload) => {
        const { body } = payload as { body: MerchantAccountCreateInput };
        const { id, display_name: displayName, ...settings } = body;
        return toMerchantAccount(await this.create({ id, displayName, settings: settingsFrom(settings) }));
      },
      [merchantAccountPatterns.update]: async (payload) => {
        const { id, body } = payload as { id: string; body: MerchantAccountUpdateInput };
        const { display_name: displayName, ...settings } = body;
        return toMerchantAccount(
          await this.update(id, { ...(displayName !== undefined ? { displayName } : {}), ...settingsFrom(settings) }),
        );
      },
    };
  }
}

type WireSettings = Omit<MerchantAccountUpdateInput, 'display_name'>;

/** The wire's snake_case settings as the domain's; absent stays absent (unchanged), null clears. */
function settingsFrom(wire: WireSettings): Partial<MerchantAccountSettings> {
  const settings: { -readonly [K in keyof MerchantAccountSettings]?: MerchantAccountSettings[K] } = {};
  const set = <K extends keyof MerchantAccountSettings>(key: K, value: MerchantAccountSettings[K] | undefined) => {
    if (value !== undefined) settings[key] = value;
  };
  set('accountUpdaterEnabled', wire.account_updater_enabled);
  set('accountUpdaterRequestEncryptionKey', wire.account_updater_request_encryption_key);
  set('accountUpdaterRequestEncryptionKeyId', wire.account_updater_request_encryption_key_id);
  set('accountUpdaterResponseDecryptionKey', wire.account_updater_response_decryption_key);
  set('accountUpdaterResponseDecryptionKeyId', wire.account_updater_response_decryption_key_id);
  set('overCaptureAmount', wire.over_capture_amount);
  set('overCapturePercentage', wire.over_capture_percentage);
  set('multipleCapturesEnabled', wire.multiple_captures_enabled);
  set('loonClientKey', wire.loon_client_key);
  set('loonSecretKey', wire.loon_secret_key);
  set('loonAcceptedSchemes', wire.loon_accepted_schemes);
  set('visaNetworkTokensRequestorId', wire.visa_network_tokens_requestor_id);
  set('visaNetworkTokensAppId', wire.visa_network_tokens_app_id);
  set('amexNetworkTokensRequestorId', wire.amex_network_tokens_requestor_id);
  set('amexNetworkTokensAppId', wire.amex_network_tokens_app_id);
  set('mastercardNetworkTokensRequestorId', wire.mastercard_network_tokens_requestor_id);
  set('mastercardNetworkTokensAppId', wire.mastercard_network_tokens_app_id);
  set('discoverNetworkTokensRequestorId', wire.discover_network_tokens_requestor_id);
  set('discoverNetworkTokensAppId', wire.discover_network_tokens_app_id);
  set('asyncNetworkTokensEnabled', wire.async_network_tokens_enabled);
  set('networkTokensEnabled', wire.network_tokens_enabled);
  return settings;
}

export function toMerchantAccount(row: MerchantAccountRow): MerchantAccount {
  return {
    type: 'merchant-account',
    id: row.id,
    display_name: row.displayName,
    account_updater_enabled: row.accountUpdaterEnabled,
    account_updater_request_encryption_key: row.accountUpdaterRequestEncryptionKey,
    account_updater_request_encryption_key_id: row.accountUpdaterRequestEncryptionKeyId,
    account_updater_response_decryption_key: row.accountUpdaterResponseDecryptionKey,
    account_updater_response_decryption_key_id: row.accountUpdaterResponseDecryptionKeyId,
    over_capture_amount: row.overCaptureAmount,
    over_capture_percentage: row.overCapturePercentage,
    multiple_captures_enabled: row.multipleCapturesEnabled,
    loon_client_key: row.loonClientKey,
    loon_secret_key: row.loonSecretKey,
    loon_accepted_schemes: row.loonAcceptedSchemes ? [...row.loonAcceptedSchemes] : null,
    visa_network_tokens_requestor_id: row.visaNetworkTokensRequestorId,
    visa_network_tokens_app_id: row.visaNetworkTokensAppId,
    amex_network_tokens_requestor_id: row.amexNetworkTokensRequestorId,
    amex_network_tokens_app_id: row.amexNetworkTokensAppId,
    mastercard_network_tokens_requestor_id: row.mastercardNetworkTokensRequestorId,
    mastercard_network_tokens_app_id: row.mastercardNetworkTokensAppId,
    discover_network_tokens_requestor_id: row.discoverNetworkTokensRequestorId,
    discover_network_tokens_app_id: row.discoverNetworkTokensAppId,
    async_network_tokens_enabled: row.asyncNetworkTokensEnabled,
    network_tokens_enabled: row.networkTokensEnabled,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
