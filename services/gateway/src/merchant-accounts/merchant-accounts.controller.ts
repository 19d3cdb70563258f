import { Controller, Inject } from '@nestjs/common';
import { ApiError, Endpoint, pageQuery, pageSchema, type Page, type PageQuery } from '@switchyard/api';
import {
  merchantAccountCreateSchema,
  merchantAccountPatterns,
  merchantAccountSchema,
  merchantAccountUpdateSchema,
  type MerchantAccount,
  type MerchantAccountCreateInput,
  type MerchantAccountListRequest,
  type MerchantAccountUpdateInput,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import { assertMayReach } from './merchant-account-access';

const byId = z.object({ merchant_account_id: z.string().min(1).max(64) });
type ById = z.infer<typeof byId>;
const listQuery = pageQuery({ maxLimit: 100 }).extend({
  search: z.string().max(200).nullish().meta({ description: 'Part of the id or display name, case-insensitive.' }),
});
type ListQuery = PageQuery & { search?: string | null };
const tags = ['Merchant accounts'];
const read = { anyOf: ['merchant-accounts.read'] };
const write = { anyOf: ['merchant-accounts.write'] };

/** Merchant accounts. The merchant account header has no effect here; a key limited to accounts sees only those. */
@Controller()
export class MerchantAccountsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_merchant_accounts',
    method: 'GET',
    path: '/merchant-accounts',
    summary: 'List merchant accounts, by id',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    query: listQuery,
    status: 200,
    response: {
      description: 'A page of merchant accounts',
      schema: pageSchema(merchantAccountSchema).meta({ id: 'MerchantAccounts' }),
    },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<MerchantAccount>> {
    const request: MerchantAccountListRequest = { ...input.query, merchant_account_ids: caller.merchantAccountIds };
    return this.rpc.call(merchantAccountPatterns.list, request);
  }

  @Endpoint({
    operationId: 'create_merchant_account',
    method: 'POST',
    path: '/merchant-accounts',
    summary: 'Create a merchant account with an id of your choosing',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    body: merchantAccountCreateSchema,
    status: 201,
    response: { description: 'The merchant account', schema: merchantAccountSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, MerchantAccountCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<MerchantAccount> {
    if (caller.merchantAccountIds.length > 0)
      throw ApiError.forbidden('An API key limited to merchant accounts cannot create merchant accounts');
    return this.rpc.call(merchantAccountPatterns.create, { body: input.body });
  }

  @Endpoint({
    operationId: 'get_merchant_account',
    method: 'GET',
    path: '/merchant-accounts/{merchant_account_id}',
    summary: 'Get a merchant account',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    params: byId,
    status: 200,
    response: { description: 'The merchant account', schema: merchantAccountSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<MerchantAccount> {
    assertMayReach(caller, input.params.merchant_account_id);
    return this.rpc.call(merchantAccountPatterns.get, { id: input.params.merchant_account_id });
  }

  @Endpoint({
    operationId: 'update_merchant_account',
    method: 'PUT',
    path: '/merchant-accounts/{merchant_account_id}',
    summary: 'Update a merchant account: only the fields sent change, null clears a setting',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byId,
    body: merchantAccountUpdateSchema,
    status: 200,
    response: { description: 'The merchant account', schema: merchantAccountSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, MerchantAccountUpdateInput, ById>,
    @CallerOf() caller: Caller,
  ): Promise<MerchantAccount> {
    assertMayReach(caller, input.params.merchant_account_id);
    return this.rpc.call(merchantAccountPatterns.update, { id: input.params.merchant_account_id, body: input.body });
  }
}
