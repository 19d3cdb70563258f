/** 3-D Secure configurations of a merchant account: list (optionally by currency), create, update, delete. */
import { ApiError } from '@switchyard/api';
import {
  threeDsConfigurationPatterns,
  type ThreeDsConfiguration,
  type ThreeDsConfigurationCreateInput,
  type ThreeDsConfigurationUpdateInput,
} from '@switchyard/contracts';
import { handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type IdentityContext, type IdentitySlice } from '../identity-context';
import type { MerchantAccounts } from '../merchant-accounts/merchant-accounts.slice';
import {
  threeDsConfiguration,
  threeDsConfigurationStream,
  type ThreeDsConfigurationChanges,
} from './three-ds-configuration';
import { ThreeDsConfigurationsReadModel, type ThreeDsConfigurationRow } from './three-ds-configurations.read-model';

export class ThreeDsConfigurations implements IdentitySlice {
  readonly readModel: ThreeDsConfigurationsReadModel;

  constructor(
    private readonly context: IdentityContext,
    private readonly merchantAccounts: MerchantAccounts,
  ) {
    this.readModel = new ThreeDsConfigurationsReadModel(context.db);
  }

  get projection() {
    return this.readModel.projection;
  }

  list(merchantAccountId: string, currency?: string): { items: ThreeDsConfiguration[] } {
    this.assertMerchantAccountExists(merchantAccountId);
    return { items: this.readModel.listByMerchantAccount(merchantAccountId, currency).map(toThreeDsConfiguration) };
  }

  async create(merchantAccountId: string, input: ThreeDsConfigurationCreateInput): Promise<ThreeDsConfiguration> {
    this.assertMerchantAccountExists(merchantAccountId);
    const id = this.context.newId();
    await asApiErrors(() =>
      handleCommand(this.context.store, threeDsConfigurationStream(id), threeDsConfiguration, {
        type: 'CreateThreeDsConfiguration',
        data: {
          id,
          merchantAccountId,
          merchantAcquirerBin: input.merchant_acquirer_bin,
          merchantAcquirerId: input.merchant_acquirer_id,
          merchantName: input.merchant_name,
          merchantCountryCode: input.merchant_country_code,
          merchantCategoryCode: input.merchant_category_code,
          merchantUrl: input.merchant_url,
          scheme: input.scheme ?? null,
          currency: input.currency ?? null,
          metadata: input.metadata,
        },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(merchantAccountId, id);
  }

  async update(
    merchantAccountId: string,
    id: string,
    input: ThreeDsConfigurationUpdateInput,
  ): Promise<ThreeDsConfiguration> {
    this.assertMerchantAccountExists(merchantAccountId);
    const changes: ThreeDsConfigurationChanges = {
      ...(input.merchant_acquirer_bin !== undefined ? { merchantAcquirerBin: input.merchant_acquirer_bin } : {}),
      ...(input.merchant_acquirer_id !== undefined ? { merchantAcquirerId: input.merchant_acquirer_id } : {}),
      ...(input.merchant_name !== undefined ? { merchantName: input.merchant_name } : {}),
      ...(input.merchant_country_code !== undefined ? { merchantCountryCode: input.merchant_country_code } : {}),
      ...(input.merchant_category_code !== undefined ? { merchantCategoryCode: input.merchant_category_code } : {}),
      ...(input.merchant_url !== undefined ? { merchantUrl: input.merchant_url } : {}),
      ...(input.scheme !== undefined ? { scheme: input.scheme } : {}),
      ...(input.currency !== undefined ? { currency: input.currency } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    };
    await asApiErrors(() =>
      handleCommand(this.context.store, threeDsConfigurationStream(id), threeDsConfiguration, {
        type: 'UpdateThreeDsConfiguration',
        data: { merchantAccountId, changes },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(merchantAccountId, id);
  }

  async delete(merchantAccountId: string, id: string): Promise<void> {
    this.assertMerchantAccountExists(merchantAccountId);
    await asApiErrors(() =>
      handleCommand(this.context.store, threeDsConfigurationStream(id), threeDsConfiguration, {
        type: 'DeleteThreeDsConfiguration',
        data: { merchantAccountId },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
  }

  /** A configuration of another merchant account does not exist under this one. */
  get(merchantAccountId: string, id: string): ThreeDsConfiguration {
    const row = this.readModel.find(id);
    if (!row || row.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return toThreeDsConfiguration(row);
  }

  rpcHandlers(): RpcHandlers {
    return {
      [threeDsConfigurationPatterns.list]: async (payload) => {
        const { merchant_account_id: merchantAccountId, currency } = payload as {
          merchant_account_id: string;
          currency?: string;
        };
        return this.list(merchantAccountId, currency);
      },
      [threeDsConfigurationPatterns.create]: async (payload) => {
        const { merchant_account_id: merchantAccountId, body } = payload as {
          merchant_account_id: string;
          body: ThreeDsConfigurationCreateInput;
        };
        return this.create(merchantAccountId, body);
      },
      [threeDsConfigurationPatterns.update]: async (payload) => {
        const {
          merchant_account_id: merchantAccountId,
          id,
          body,
        } = payload as { merchant_account_id: string; id: string; body: ThreeDsConfigurationUpdateInput };
        return this.update(merchantAccountId, id, body);
      },
      [threeDsConfigurationPatterns.delete]: async (payload) => {
        const { merchant_account_id: merchantAccountId, id } = payload as { merchant_account_id: string; id: string };
        await this.delete(merchantAccountId, id);
        return null;
      },
    };
  }

  private assertMerchantAccountExists(id: string): void {
    if (!this.merchantAccounts.find(id)) throw ApiError.notFound();
  }
}

function toThreeDsConfiguration(row: ThreeDsConfigurationRow): ThreeDsConfiguration {
  return {
    type: 'merchant-account.three-ds-configuration',
    id: row.id,
    merchant_account_id: row.merchantAccountId,
    merchant_acquirer_bin: row.merchantAcquirerBin,
    merchant_acquirer_id: row.merchantAcquirerId,
    merchant_name: row.merchantName,
    merchant_country_code: row.merchantCountryCode,
    merchant_category_code: row.merchantCategoryCode,
    merchant_url: row.merchantUrl,
    scheme: row.scheme,
    currency: row.currency,
    metadata: { ...row.metadata },
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
