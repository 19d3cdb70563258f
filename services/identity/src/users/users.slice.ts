/**
 * Dashboard users: create, update, list, set a password, sign in with it, and single sign-on (resolve a roles claim,
 * then create the user or replace its roles). The operator CLI drives the writes; the dashboard (gateway) signs users
 * in and reads them back over RPC (`userPatterns`). No API endpoint.
 */
import { ApiError, type Page, type PageQuery } from '@switchyard/api';
import { userPatterns, type DashboardUser, type UserSignInRequest } from '@switchyard/contracts';
import { asDomainEvent, DomainError, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { toApiError } from '../errors';
import { asApiErrors, type IdentityContext, type IdentitySlice } from '../identity-context';
import { roleIdOf } from '../roles/role-catalog';
import { rolesOf } from '../roles/roles.slice';
import { resolveSingleSignOnRoles, type SingleSignOnRoles } from '../roles/single-sign-on';
import { user, userStream, type UserChanges, type UserCommand } from './user';
import { userEmail, userEmailStream, type UserEmailEvent } from './user-email';
import {
  assertAcceptablePassword,
  decoyPasswordHash,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  passwordMatches,
} from './user-password';
import { UsersReadModel, type UserRow } from './users.read-model';

/** A dashboard user as shown to the operator and the dashboard: the wire's `DashboardUser` (never a password or its hash). */
export type User = DashboardUser;

export interface UserCreateInput {
  readonly email: string;
  readonly display_name: string;
  /** Role ids or slugs (the CLI takes slugs). */
  readonly roles: readonly string[];
  /** The dashboard password; absent: none yet (`setPassword` later, or single sign-on only). */
  readonly password?: string;
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

/** A synchronous check whose domain error becomes the spec's error, as `asApiErrors` does for commands. */
function asApiErrorsNow(check: () => void): void {
  try {
    check();
  } catch (error) {
    throw toApiError(error);
  }
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
    if (input.password !== undefined) asApiErrorsNow(() => assertAcceptablePassword(input.password!));
    const id = await asApiErrors(async () => {
      // A claim left by a create that stopped before its user was appended is finished under the claimed id.
      const claimedBy = await this.emailClaimHolder(email);
      const id = claimedBy !== undefined && !(await this.exists(claimedBy)) ? claimedBy : this.context.newId();
      const create: UserCommand = {
        type: 'CreateUser',
        data: { id, email, displayName: input.display_name, roleIds: toRoleIds(input.roles) },
        metadata: { now },
      };
      // Decide once before claiming, so a refused user (bad roles, bad email) never takes the email.
      user.decide(create, user.initialState());
      await handleCommand(this.context.store, userEmailStream(email), userEmail, {
        type: 'ClaimUserEmail',
        data: { email, userId: id },
        metadata: { now },
      });
      await handleCommand(this.context.store, userStream(id), user, create);
      return id;
    });
    if (input.password !== undefined) return this.setPassword(id, input.password);
    await this.context.catchUp();
    return this.get(id);
  }

  /** Sets (or replaces) the user's dashboard password; the event holds its argon2id hash only. */
  async setPassword(id: string, password: string): Promise<User> {
    asApiErrorsNow(() => assertAcceptablePassword(password));
    const passwordHash = await hashPassword(password);
    await asApiErrors(() =>
      handleCommand(this.context.store, userStream(id), user, {
        type: 'SetUserPassword',
        data: { passwordHash },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(id);
  }

  /**
   * A dashboard sign-in. Every refusal for a wrong email or password is the same 401, and takes as long: an unknown
   * email, or a user without a password, is verified against a decoy hash. Only someone who gave the right password
   * learns that the user is deactivated (403).
   */
  async signIn(input: UserSignInRequest): Promise<User> {
    await this.context.catchUp();
    const row = this.readModel.findByEmail(input.email);
    const stored = row ? this.readModel.passwordHash(row.id) : null;
    // A password longer than any that can be set is wrong without hashing it (a large body costs no argon2 time).
    const plausible = [...input.password].length <= PASSWORD_MAX_LENGTH;
    const matches = plausible && (await passwordMatches(stored ?? (await decoyPasswordHash()), input.password));
    if (!row || stored === null || !matches) throw ApiError.unauthorized('The email or password is wrong');
    if (!row.active) {
      throw toApiError(
        new DomainError('user_inactive', `user ${row.email} is deactivated`, [
          { field: 'email', message: 'the user is deactivated' },
        ]),
      );
    }
    return toUser(row);
  }

  async update(id: string, input: UserUpdateInput): Promise<User> {
    const changes: UserChanges = {
      ...(input.roles !== undefined ? { roleIds: toRoleIds(input.roles) } : {}),
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
    };
    await asApiErrors(() =>
      handleCommand(this.context.store, userStream(id), user, {
        type: 'UpdateUser',
        data: changes,
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get(id);
  }

  /**
   * A sign-in through the identity provider: the claim is resolved (`analyst` added to an unusable set), then the
   * user is created with those roles, or an existing user's roles are replaced by them. A deactivated user is refused.
   */
  async signInWithSingleSignOn(input: {
    email: string;
    claim: readonly string[];
    display_name?: string;
  }): Promise<SingleSignOnResult> {
    const resolution = resolveSingleSignOnRoles(input.claim);
    await this.context.catchUp();
    const holder = await asApiErrors(() => this.emailClaimHolder(input.email));
    if (holder === undefined || !(await this.exists(holder))) {
      return {
        user: await this.create({
          email: input.email,
          display_name: input.display_name ?? input.email.trim(),
          roles: resolution.roleIds,
        }),
        resolution,
      };
    }
    const existing = this.get(holder);
    if (!existing.active) {
      throw toApiError(
        new DomainError('user_inactive', `user ${existing.email} is deactivated`, [
          { field: 'email', message: 'the user is deactivated' },
        ]),
      );
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
    return {
      [userPatterns.signIn]: async (payload) => {
        const { email, password } = payload as Partial<UserSignInRequest>;
        if (typeof email !== 'string' || typeof password !== 'string')
          throw ApiError.unauthorized('The email or password is wrong');
        return this.signIn({ email, password });
      },
      [userPatterns.get]: async (payload) => {
        await this.context.catchUp();
        return this.get((payload as { id: string }).id);
      },
    };
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
    has_password: row.hasPassword,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
