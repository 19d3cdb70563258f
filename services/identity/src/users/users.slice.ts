/**
 * Dashboard users: create, update, list, and single sign-on (resolve a roles claim, then create the user or
 * replace its roles). The operator CLI drives it; no HTTP endpoint yet, and no password (dashboard login is a
 * later issue).
 */
import { ApiError, type Page, type PageQuery } from '@switchyard/api';
import type { Role } from '@switchyard/contracts';
import { asDomainEvent, DomainError, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { toApiError } from '../errors';
import { asApiErrors, type IdentityContext, type IdentitySlice } from '../identity-context';
import { roleIdOf } from '../roles/role-catalog';
import { rolesOf } from '../roles/roles.slice';
import { resolveSingleSignOnRoles, type SingleSignOnRoles } from '../roles/single-sign-on';
import { user, userStream, type UserChanges, type UserCommand } from './user';
import { userEmail, userEmailStream, type UserEmailEvent } from './user-email';
import { UsersReadModel, type UserRow } from './users.read-model';

/** A dashboard user as shown to the operator (and, later, the API). */
export interface User {
  readonly type: 'user';
  readonly id: string;
  readonly email: string;
  readonly display_name: string;
  readonly role_ids: string[];
  readonly roles: Role[];
  readonly active: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface UserCreateInput {
  readonly email: string;
  readonly display_name: string;
  /** Role ids or slugs (the CLI takes slugs). */
  readonly roles: readonly string[];
}

export interface UserUpdateInput {
  /** Role ids or slugs; replaces the current roles. */
  readonly roles?: readonly string[];
  readonly display_name?: string;
  readonly active?: boolean;
}

export interface SingleSignOnResult {
  readonly user: User;
  readonly resolution: SingleSignOnRoles;
}

/** Unknown entries stay as they are, so the role rules name them ("unknown role id ..."). */
const toRoleIds = (roles: readonly string[]): string[] => roles.map(roleIdOf);

export class Users implements IdentitySlice {
  readonly readModel: UsersReadModel;

  constructor(private readonly context: IdentityContext) {
    this.readModel = new UsersReadModel(context.db);
  }

  get projection() {
    return this.readModel.projection;
  }

  async create(input: UserCreateInput): Promise<User> {
    const email = input.email.trim();
    const now = this.context.now().toISOString();
    const id = await asApiErrors(async () => {
      // A claim left by a create that stopped before its user was appended is finished under the claimed id.
      const claimedBy = await this.emailClaimHolder(email);
      const id = claimedBy !== undefined && !(await this.exists(claimedBy)) ? claimedBy : this.context.newId();
      const create: UserCommand = { type: 'CreateUser', data: { id, email, displayName: input.display_name, roleIds: toRoleIds(input.roles) }, metadata: { now } };
      // Decide once before claiming, so a refused user (bad roles, bad email) never takes the email.
      user.decide(create, user.initialState());
      await handleCommand(this.context.store, userEmailStream(email), userEmail, { type: 'ClaimUserEmail', data: { email, userId: id }, metadata: { now } });
      await handleCommand(this.context.store, userStream(id), user, create);
      return id;
    });
    await this.context.catchUp();
    return this.get(id);
  }

  async update(id: string, input: UserUpdateInput): Promise<User> {
    const changes: UserChanges = {
      ...(input.roles !== undefined ? { roleIds: toRoleIds(input.roles) } : {}),
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
    };
    await asApiErrors(() => handleCommand(this.context.store, userStream(id), user, { type: 'UpdateUser', data: changes, metadata: { now: this.context.now().toISOString() } }));
    await this.context.catchUp();
    return this.get(id);
  }

  /**
   * A sign-in through the identity provider: the claim is resolved (`analyst` added to an unusable set), then the
   * user is created with those roles, or an existing user's roles are replaced by them. A deactivated user is refused.
   */
  async signInWithSingleSignOn(input: { email: string; claim: readonly string[]; display_name?: string }): Promise<SingleSignOnResult> {
    const resolution = resolveSingleSignOnRoles(input.claim);
    await this.context.catchUp();
    const holder = await asApiErrors(() => this.emailClaimHolder(input.email));
    if (holder === undefined || !(await this.exists(holder))) {
      return { user: await this.create({ email: input.email, display_name: input.display_name ?? input.email.trim(), roles: resolution.roleIds }), resolution };
    }
    const existing = this.get(holder);
    if (!existing.active) {
      throw toApiError(new DomainError('user_inactive', `user ${existing.email} is deactivated`, [{ field: 'email', message: 'the user is deactivated' }]));
    }
    return { user: await this.update(holder, { roles: resolution.roleIds }), resolution };
  }

  get(id: string): User {
    const row = this.readModel.find(id);
    if (!row) throw ApiError.notFound();
    return toUser(row);
  }

  findByEmail(email: string): User | null {
    const row = this.readModel.findByEmail(email);
    return row ? toUser(row) : null;
  }

  list(query: PageQuery): Page<User> {
    const page = this.readModel.list(query);
    return { ...page, items: page.items.map(toUser) };
  }

  all(): User[] {
    return this.readModel.all().map(toUser);
  }

  rpcHandlers(): RpcHandlers {
    return {};
  }

  /** The user id holding an email, read from the write side (the read model may lag another process). */
  private async emailClaimHolder(email: string): Promise<string | undefined> {
    const claim = (await this.context.store.readStream(userEmailStream(email))).reduce(
      (state, event) => userEmail.evolve(state, asDomainEvent<UserEmailEvent>(event)),
      userEmail.initialState(),
    );
    return claim.status === 'claimed' ? claim.userId : undefined;
  }

  private async exists(id: string): Promise<boolean> {
    return (await this.context.store.readStream(userStream(id), { maxCount: 1 })).length > 0;
  }
}

function toUser(row: UserRow): User {
  return {
    type: 'user',
    id: row.id,
    email: row.email,
    display_name: row.displayName,
    role_ids: [...row.roleIds],
    roles: rolesOf(row.roleIds),
    active: row.active,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
