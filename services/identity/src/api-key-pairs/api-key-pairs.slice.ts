/** API key pairs: create (generating the pair or taking the caller's public key), list, get, update, delete, usage. */
import { ApiError, type Page, type PageQuery } from '@switchyard/api';
import {
  generateP521KeyPair,
  parsePublicKey,
  thumbprint,
  UnsupportedKeyError,
  type KeyRecord,
  type PublicJwk,
} from '@switchyard/auth';
import {
  apiKeyPairPatterns,
  identityPatterns,
  type ApiKeyPair,
  type ApiKeyPairCreateInput,
  type ApiKeyPairUpdateInput,
  type AssigneeKind,
  type CreatedApiKeyPair,
} from '@switchyard/contracts';
import { handleCommand } from '@switchyard/decider';
import type { RpcCall, RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type IdentityContext, type IdentitySlice } from '../identity-context';
import type { MerchantAccounts } from '../merchant-accounts/merchant-accounts.slice';
import { roleIdOf } from '../roles/role-catalog';
import { assertApiKeyMayManageKeys, assertAssignerHolds, assertValidRoleSet } from '../roles/role-rules';
import { rolesOf } from '../roles/roles.slice';
import { apiKeyPair, apiKeyPairStream, type Actor, type ApiKeyPairChanges } from './api-key-pair';
import { ApiKeyPairsReadModel, type ApiKeyPairRow } from './api-key-pairs.read-model';

/**
 * Who makes a change: the operator (stands where a dashboard user would), a dashboard user signed in to the dashboard,
 * or an API key over the API.
 */
export type Assigner =
  | { readonly kind: 'operator' }
  | { readonly kind: 'user'; readonly id: string }
  | { readonly kind: 'api-key-pair'; readonly id: string };

const assignerKind = (assigner: Assigner): AssigneeKind => (assigner.kind === 'api-key-pair' ? 'api-key-pair' : 'user');
const actorOf = (assigner: Assigner): Actor =>
  assigner.kind === 'operator' ? { kind: 'operator' } : { kind: assigner.kind, id: assigner.id };

export class ApiKeyPairs implements IdentitySlice {
  readonly readModel: ApiKeyPairsReadModel;

  constructor(
    private readonly context: IdentityContext,
    private readonly merchantAccounts: MerchantAccounts,
    /** A dashboard user's roles, by id (the users slice); null when unknown. */
    private readonly users: (id: string) => { readonly roleIds: readonly string[] } | null = () => null,
  ) {
    this.readModel = new ApiKeyPairsReadModel(context.db);
  }

  get projection() {
    return this.readModel.projection;
  }

  /** `roles` may hold role ids or slugs (the CLI takes slugs). */
  async create(
    input: Omit<ApiKeyPairCreateInput, 'role_ids' | 'active' | 'merchant_account_ids'> & {
      roles: readonly string[];
      active?: boolean;
      merchant_account_ids?: readonly string[];
    },
    assigner: Assigner,
  ): Promise<CreatedApiKeyPair> {
    await this.context.catchUp();
    const roleIds = input.roles.map(roleIdOf);
    const merchantAccountIds = [...new Set(input.merchant_account_ids ?? [])];
    this.assertMerchantAccountsExist(merchantAccountIds);
    await this.assertAssignerMay(assigner, { accounts: merchantAccountIds, roleIds });

    let publicJwk: PublicJwk;
    let privateKeyPem: string | undefined;
    if (input.public_key !== undefined) {
      try {
        publicJwk = parsePublicKey(input.public_key);
      } catch (error) {
        if (!(error instanceof UnsupportedKeyError)) throw error;
        throw ApiError.badRequest(error.message, [
          { location: 'body', pointer: '/public_key', message: error.message, type: 'invalid_public_key' },
        ]);
      }
    } else {
      ({ publicJwk, privateKeyPem } = generateP521KeyPair());
    }
    const kid = await thumbprint(publicJwk);
    const existing = this.readModel.findByKid(kid);
    if (existing)
      throw new ApiError(409, 'An API key pair with this public key already exists', [], { resourceId: existing.id });

    const id = this.context.newId();
    await asApiErrors(() =>
      handleCommand(this.context.store, apiKeyPairStream(id), apiKeyPair, {
        type: 'CreateApiKeyPair',
        data: {
          id,
          displayName: input.display_name,
          kid,
          publicJwk,
          roleIds,
          merchantAccountIds,
          active: input.active ?? true,
          generated: privateKeyPem !== undefined,
        },
        metadata: { now: this.context.now().toISOString(), assigner: assignerKind(assigner), by: actorOf(assigner) },
      }),
    );
    await this.context.catchUp();
    return { ...this.get(id), ...(privateKeyPem !== undefined ? { private_key: privateKeyPem } : {}) };
  }

  async update(id: string, input: ApiKeyPairUpdateInput, assigner: Assigner): Promise<ApiKeyPair> {
    if (input.merchant_account_ids) this.assertMerchantAccountsExist(input.merchant_account_ids);
    await this.assertAssignerMay(assigner, {
      target: id,
      accounts: input.merchant_account_ids,
      roleIds: input.role_ids,
    });
    const changes: ApiKeyPairChanges = {
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.role_ids !== undefined ? { roleIds: input.role_ids } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
      ...(input.merchant_account_ids !== undefined ? { merchantAccountIds: input.merchant_account_ids } : {}),
    };
    await asApiErrors(() =>
      handleCommand(this.context.store, apiKeyPairStream(id), apiKeyPair, {
        type: 'UpdateApiKeyPair',
        data: changes,
        metadata: { now: this.context.now().toISOString(), assigner: assignerKind(assigner), by: actorOf(assigner) },
      }),
    );
    await this.context.catchUp();
    return this.get(id);
  }

  async delete(id: string, assigner: Assigner): Promise<void> {
    await this.assertAssignerMay(assigner, { target: id });
    await asApiErrors(() =>
      handleCommand(this.context.store, apiKeyPairStream(id), apiKeyPair, {
        type: 'DeleteApiKeyPair',
        metadata: { now: this.context.now().toISOString(), assigner: assignerKind(assigner), by: actorOf(assigner) },
      }),
    );
    await this.context.catchUp();
  }

  /** Uses batched by the gateway: at most one event per key per batch, never for a key already used later. */
  async recordUses(uses: readonly { id: string; at: string }[]): Promise<void> {
    for (const use of uses) {
      await handleCommand(this.context.store, apiKeyPairStream(use.id), apiKeyPair, {
        type: 'RecordApiKeyPairUse',
        data: { at: use.at },
      });
    }
    await this.context.catchUp();
  }

  /** A key pair; with a `reader`, one limited to merchant accounts it does not cover is not found. */
  get(id: string, reader?: Assigner): ApiKeyPair {
    const row = this.readModel.find(id);
    const within = reader ? this.accountsOf(reader) : undefined;
    if (!row || (within !== undefined && !limitedWithin(row.merchantAccountIds, within))) throw ApiError.notFound();
    return toApiKeyPair(row);
  }

  /** Oldest first; an API key limited to merchant accounts sees only the keys limited to some of its own (issue 22). */
  list(query: PageQuery, reader?: Assigner): Page<ApiKeyPair> {
    const page = this.readModel.list(query, reader ? this.accountsOf(reader) : undefined);
    return { ...page, items: page.items.map(toApiKeyPair) };
  }

  findKeyRecord(kid: string): KeyRecord | null {
    return this.readModel.findKeyRecord(kid);
  }

  rpcHandlers(): RpcHandlers {
    // The gateway names who acts — the API key of an API request, or the dashboard user of a dashboard request — as
    // the call's actor, which the transport authenticated with the caller; never from the payload.
    const assignerOf = (call: RpcCall): Assigner => {
      if (!call.actor) throw ApiError.forbidden('The call names no acting API key pair or dashboard user');
      const { type, id } = call.actor;
      return type === 'dashboard-user' ? { kind: 'user', id } : { kind: 'api-key-pair', id };
    };
    const viewerOf = (call: RpcCall): Assigner | undefined => (call.actor ? assignerOf(call) : undefined);
    return {
      [identityPatterns.findKeyByKid]: async (payload) => this.findKeyRecord((payload as { kid: string }).kid),
      // List and get answer what the acting key or user may see; a call acting for nobody (webhooks rendering a
      // target) sees the key pair as it is.
      [apiKeyPairPatterns.list]: async (payload, call) => this.list(payload as PageQuery, viewerOf(call)),
      [apiKeyPairPatterns.get]: async (payload, call) => this.get((payload as { id: string }).id, viewerOf(call)),
      [apiKeyPairPatterns.create]: async (payload, call) => {
        const assigner = assignerOf(call);
        const { body } = payload as { body: ApiKeyPairCreateInput };
        return this.create({ ...body, roles: body.role_ids }, assigner);
      },
      [apiKeyPairPatterns.update]: async (payload, call) => {
        const assigner = assignerOf(call);
        const { id, body } = payload as { id: string; body: ApiKeyPairUpdateInput };
        return this.update(id, body, assigner);
      },
      [apiKeyPairPatterns.delete]: async (payload, call) => {
        await this.delete((payload as { id: string }).id, assignerOf(call));
        return null;
      },
      [apiKeyPairPatterns.recordUse]: async (payload) => {
        await this.recordUses((payload as { uses: { id: string; at: string }[] }).uses);
        return null;
      },
    };
  }

  /**
   * Whether the assigner may make this change (issue 22, items 5 and 6). The operator may make any.
   *
   * - An API key manages keys only with the key-manager role (spec, Authentication rule 6): an administrator key
   *   is refused too.
   * - An API key limited to merchant accounts manages only key pairs limited to some of its own accounts: it can
   *   neither make a key that reaches further (every account, or another one) nor change or delete a key of another
   *   account. Dashboard users, like the operator, are not limited to merchant accounts.
   * - A caller grants only permissions it holds, and manages only keys whose roles it could have granted: the roles
   *   given (`roleIds`) and the changed key's current ones (`target`) must be within its own.
   *
   * `target`: the key pair changed (one that does not exist is left to the command: 404); `accounts`: the merchant
   * accounts the change gives it. The role set's own rules (400) and who may assign administrator or key-manager
   * (403) are asked first, so a broken set is refused for that whoever sends it.
   */
  private async assertAssignerMay(
    assigner: Assigner,
    change: { target?: string; accounts?: readonly string[] | undefined; roleIds?: readonly string[] | undefined },
  ): Promise<void> {
    if (assigner.kind === 'operator') return;
    await this.context.catchUp();
    const own = this.assignerRow(assigner);
    if (assigner.kind === 'api-key-pair') await asApiErrors(async () => assertApiKeyMayManageKeys(own.roleIds));
    const target = change.target === undefined ? null : this.readModel.find(change.target);
    if (assigner.kind === 'api-key-pair' && own.merchantAccountIds.length > 0) {
      const sets = [target?.merchantAccountIds, change.accounts];
      if (sets.some((accounts) => accounts !== undefined && !limitedWithin(accounts, own.merchantAccountIds))) {
        throw ApiError.forbidden(
          `This API key is limited to merchant accounts ${own.merchantAccountIds.join(', ')}: it manages only API key pairs limited to them`,
        );
      }
    }
    await asApiErrors(async () => {
      if (change.roleIds !== undefined) assertValidRoleSet(change.roleIds, 'api-key-pair', assignerKind(assigner));
      assertAssignerHolds([...(change.roleIds ?? []), ...(target?.roleIds ?? [])], own.roleIds);
    });
  }

  /** The roles and merchant accounts of whoever makes a change; 403 when it no longer exists. */
  private assignerRow(assigner: Exclude<Assigner, { kind: 'operator' }>): {
    roleIds: readonly string[];
    merchantAccountIds: readonly string[];
  } {
    if (assigner.kind === 'user') {
      const user = this.users(assigner.id);
      if (!user) throw ApiError.forbidden('The dashboard user making this change no longer exists');
      return { roleIds: user.roleIds, merchantAccountIds: [] };
    }
    const key = this.readModel.find(assigner.id);
    if (!key) throw ApiError.forbidden('The API key pair making this change no longer exists');
    return key;
  }

  /** The merchant accounts a reader is limited to; undefined: every account (the operator, users, unlimited keys). */
  private accountsOf(reader: Assigner): readonly string[] | undefined {
    if (reader.kind !== 'api-key-pair') return undefined;
    const own = this.readModel.find(reader.id);
    if (!own) throw ApiError.forbidden('The API key pair asking no longer exists');
    return own.merchantAccountIds.length > 0 ? own.merchantAccountIds : undefined;
  }

  private assertMerchantAccountsExist(ids: readonly string[]): void {
    const unknown = ids.filter((id) => !this.merchantAccounts.find(id));
    if (unknown.length > 0) {
      throw ApiError.badRequest(
        `unknown merchant account: ${unknown.join(', ')}`,
        unknown.map((id) => ({
          location: 'body',
          pointer: '/merchant_account_ids',
          message: `merchant account ${id} does not exist`,
          type: 'unknown_merchant_account',
        })),
      );
    }
  }
}

/** A key limited to `accounts` stays within `own`: limited (not every account) and to some of them only. */
const limitedWithin = (accounts: readonly string[], own: readonly string[]): boolean =>
  accounts.length > 0 && accounts.every((id) => own.includes(id));

function toApiKeyPair(row: ApiKeyPairRow): ApiKeyPair {
  return {
    type: 'api-key-pair',
    id: row.id,
    display_name: row.displayName,
    kid: row.kid,
    algorithm: 'ES512',
    public_key: row.publicJwk,
    role_ids: [...row.roleIds],
    roles: rolesOf(row.roleIds),
    merchant_account_ids: [...row.merchantAccountIds],
    active: row.active,
    last_used_at: row.lastUsedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
