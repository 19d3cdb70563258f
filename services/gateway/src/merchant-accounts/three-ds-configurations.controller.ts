import { Controller, Inject } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  threeDsConfigurationCreateSchema,
  threeDsConfigurationListQuerySchema,
  threeDsConfigurationPatterns,
  threeDsConfigurationSchema,
  threeDsConfigurationsSchema,
  threeDsConfigurationUpdateSchema,
  type ThreeDsConfiguration,
  type ThreeDsConfigurationCreateInput,
  type ThreeDsConfigurationUpdateInput,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT, THREE_DS_CONFIGURATIONS } from '../tokens';
import type { ThreeDsConfigurationCache } from './three-ds-configuration-cache';
import { assertMayReach } from './merchant-account-access';

const byAccount = z.object({ merchant_account_id: z.string().min(1).max(64) });
type ByAccount = z.infer<typeof byAccount>;
const byId = byAccount.extend({ three_ds_configuration_id: z.uuid() });
type ById = z.infer<typeof byId>;
type ListQuery = z.infer<typeof threeDsConfigurationListQuerySchema>;
const path = '/merchant-accounts/{merchant_account_id}/three-ds-configurations';
const tags = ['Merchant accounts'];
const read = { anyOf: ['merchant-accounts.read'] };
const write = { anyOf: ['merchant-accounts.write'] };

/** A merchant account's 3-D Secure configurations; a key limited to other accounts finds none of them. */
@Controller()
export class ThreeDsConfigurationsController {
  constructor(
    @Inject(RPC_CLIENT) private readonly rpc: RpcClient,
    @Inject(THREE_DS_CONFIGURATIONS) private readonly cache: ThreeDsConfigurationCache,
  ) {}

  /**
   * A change's answer, once this gateway forgot the account's cached configurations: its next payment reads them from
   * identity (read-your-writes; other gateways forget them on identity's event). Forgotten on a failure too: a change
   * that timed out may still have been made.
   */
  private changed<T>(merchantAccountId: string, change: Promise<T>): Promise<T> {
    return change.finally(() => this.cache.forget(merchantAccountId));
  }

  @Endpoint({
    operationId: 'list_merchant_account_three_ds_configurations',
    method: 'GET',
    path,
    summary: "List a merchant account's 3-D Secure configurations, oldest first",
    tags,
    auth: read,
    merchantAccount: 'ignored',
    params: byAccount,
    query: threeDsConfigurationListQuerySchema,
    status: 200,
    response: { description: 'The 3-D Secure configurations', schema: threeDsConfigurationsSchema },
  })
  list(
    @Input() input: EndpointInput<ListQuery, unknown, ByAccount>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: ThreeDsConfiguration[] }> {
    assertMayReach(caller, input.params.merchant_account_id);
    return this.rpc.call(threeDsConfigurationPatterns.list, {
      merchant_account_id: input.params.merchant_account_id,
      ...(input.query.currency !== undefined ? { currency: input.query.currency } : {}),
    });
  }

  @Endpoint({
    operationId: 'create_merchant_account_three_ds_configuration',
    method: 'POST',
    path,
    summary: 'Create a 3-D Secure configuration for a merchant account',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byAccount,
    body: threeDsConfigurationCreateSchema,
    status: 201,
    response: { description: 'The 3-D Secure configuration', schema: threeDsConfigurationSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, ThreeDsConfigurationCreateInput, ByAccount>,
    @CallerOf() caller: Caller,
  ): Promise<ThreeDsConfiguration> {
    assertMayReach(caller, input.params.merchant_account_id);
    return this.changed(
      input.params.merchant_account_id,
      this.rpc.call(threeDsConfigurationPatterns.create, {
        merchant_account_id: input.params.merchant_account_id,
        body: input.body,
      }),
    );
  }

  @Endpoint({
    operationId: 'update_merchant_account_three_ds_configuration',
    method: 'PUT',
    path: `${path}/{three_ds_configuration_id}`,
    summary: 'Update a 3-D Secure configuration: only the fields sent change',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byId,
    body: threeDsConfigurationUpdateSchema,
    status: 200,
    response: { description: 'The 3-D Secure configuration', schema: threeDsConfigurationSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, ThreeDsConfigurationUpdateInput, ById>,
    @CallerOf() caller: Caller,
  ): Promise<ThreeDsConfiguration> {
    assertMayReach(caller, input.params.merchant_account_id);
    return this.changed(
      input.params.merchant_account_id,
      this.rpc.call(threeDsConfigurationPatterns.update, {
        merchant_account_id: input.params.merchant_account_id,
        id: input.params.three_ds_configuration_id,
        body: input.body,
      }),
    );
  }

  @Endpoint({
    operationId: 'delete_merchant_account_three_ds_configuration',
    method: 'DELETE',
    path: `${path}/{three_ds_configuration_id}`,
    summary: 'Delete a 3-D Secure configuration',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byId,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<void> {
    assertMayReach(caller, input.params.merchant_account_id);
    await this.changed(
      input.params.merchant_account_id,
      this.rpc.call(threeDsConfigurationPatterns.delete, {
        merchant_account_id: input.params.merchant_account_id,
        id: input.params.three_ds_configuration_id,
      }),
    );
  }
}
