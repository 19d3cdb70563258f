import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, pageSchema, type Page, type PageQuery } from '@switchyard/api';
import {
  apiKeyPairCreateSchema,
  apiKeyPairPatterns,
  apiKeyPairSchema,
  apiKeyPairUpdateSchema,
  createdApiKeyPairSchema,
  type ApiKeyPair,
  type ApiKeyPairCreateInput,
  type ApiKeyPairUpdateInput,
  type CreatedApiKeyPair,
} from '@switchyard/contracts';
import type { RpcCallOptions, RpcClient } from '@switchyard/rpc';
import { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import type { CachedKeyDirectory } from '../auth/cached-key-directory';
import { Input, type EndpointInput } from '../http/input';
import { KEY_DIRECTORY, RPC_CLIENT } from '../tokens';

const byId = z.object({ api_key_pair_id: z.uuid() });
type ById = z.infer<typeof byId>;
const tags = ['API key pairs'];
const read = { anyOf: ['api-key-pairs.read'] };
const write = { anyOf: ['api-key-pairs.write'] };
/** The request's API key acts: identity applies the role and merchant account rules with it as the assigner. */
const actingKey = (caller: Caller): RpcCallOptions => ({ actor: { type: 'api-key-pair', id: caller.apiKeyPairId } });

/**
 * API key pairs. Reaching them needs the `api-key-pairs.*` scopes, which only the key-manager (and administrator)
 * roles grant; changing them needs the key-manager role itself (spec, Authentication rule 6: identity refuses an
 * administrator key with 403). A key limited to merchant accounts lists and reads only the keys within them, and
 * a caller grants only the permissions and accounts it holds (identity, `assertAssignerMay`). Changes made here drop the key from this gateway's cache at once (the next request sees them);
 * other gateway instances drop it when the change reaches them on `identity.events`.
 */
@Controller()
export class ApiKeyPairsController {
  constructor(
    @Inject(RPC_CLIENT) private readonly rpc: RpcClient,
    @Inject(KEY_DIRECTORY) private readonly keys: CachedKeyDirectory,
  ) {}

  @Endpoint({
    operationId: 'list_api_key_pairs',
    method: 'GET',
    path: '/api-key-pairs',
    summary: 'List API key pairs, oldest first',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    query: pageQuery({ maxLimit: 100 }),
    status: 200,
    response: {
      description: 'A page of API key pairs',
      schema: pageSchema(apiKeyPairSchema).meta({ id: 'ApiKeyPairs' }),
    },
  })
  list(@Input() input: EndpointInput<PageQuery>, @CallerOf() caller: Caller): Promise<Page<ApiKeyPair>> {
    return this.rpc.call(apiKeyPairPatterns.list, { ...input.query }, actingKey(caller));
  }

  @Endpoint({
    operationId: 'create_api_key_pair',
    method: 'POST',
    path: '/api-key-pairs',
    summary: 'Create an API key pair; without `public_key` the service generates it and returns `private_key` once',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    body: apiKeyPairCreateSchema,
    status: 201,
    response: { description: 'The API key pair', schema: createdApiKeyPairSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, ApiKeyPairCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<CreatedApiKeyPair> {
    return this.rpc.call(apiKeyPairPatterns.create, { body: input.body }, actingKey(caller));
  }

  @Endpoint({
    operationId: 'get_api_key_pair',
    method: 'GET',
    path: '/api-key-pairs/{api_key_pair_id}',
    summary: 'Get an API key pair',
    tags,
    auth: read,
    merchantAccount: 'ignored',
    params: byId,
    status: 200,
    response: { description: 'The API key pair', schema: apiKeyPairSchema },
  })
  get(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<ApiKeyPair> {
    return this.rpc.call(apiKeyPairPatterns.get, { id: input.params.api_key_pair_id }, actingKey(caller));
  }

  @Endpoint({
    operationId: 'update_api_key_pair',
    method: 'PUT',
    path: '/api-key-pairs/{api_key_pair_id}',
    summary:
      'Update an API key pair: `role_ids` replaces its roles, `active: false` revokes it at once, `merchant_account_ids` re-scopes it',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byId,
    body: apiKeyPairUpdateSchema,
    status: 200,
    response: { description: 'The API key pair', schema: apiKeyPairSchema },
  })
  async update(
    @Input() input: EndpointInput<unknown, ApiKeyPairUpdateInput, ById>,
    @CallerOf() caller: Caller,
  ): Promise<ApiKeyPair> {
    const updated = await this.rpc.call<ApiKeyPair>(
      apiKeyPairPatterns.update,
      { id: input.params.api_key_pair_id, body: input.body },
      actingKey(caller),
    );
    this.keys.invalidate({ id: updated.id, kid: updated.kid });
    return updated;
  }

  @Endpoint({
    operationId: 'delete_api_key_pair',
    method: 'DELETE',
    path: '/api-key-pairs/{api_key_pair_id}',
    summary: 'Delete an API key pair; tokens signed with it stop working at once',
    tags,
    auth: write,
    merchantAccount: 'ignored',
    params: byId,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(@Input() input: EndpointInput<unknown, unknown, ById>, @CallerOf() caller: Caller): Promise<void> {
    await this.rpc.call(apiKeyPairPatterns.delete, { id: input.params.api_key_pair_id }, actingKey(caller));
    this.keys.invalidate({ id: input.params.api_key_pair_id });
  }
}
