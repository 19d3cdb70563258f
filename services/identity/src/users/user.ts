/**
 * The dashboard user aggregate: stream `user-<uuid>`. A user holds roles through `role_ids`, like an API key pair.
 *
 * Users are made and edited by the operator CLI, and by single sign-on (which maps an identity provider's roles
 * claim, see `roles/single-sign-on.ts`). The email never changes once set; its uniqueness is held by `user-email.ts`.
 * The operator sets a user's dashboard password (`UserPasswordSet`): the event carries the argon2id hash, made by the
 * slice before the command (hashing salts at random, and deciders take no randomness), never the password
 * (`user-password.ts`, docs/dashboard.md).
 */
import { DomainError, type Decider } from '@switchyard/decider';
import { assertValidRoleSet } from '../roles/role-rules';

export interface UserCreatedData {
  readonly id: string;
  readonly email: string;
  readonly displayName: string;
  readonly roleIds: readonly string[];
  readonly at: string;
}

export interface UserChanges {
  readonly roleIds?: readonly string[];
  readonly displayName?: string;
  readonly active?: boolean;
}

export type UserEvent =
  | { readonly type: 'UserCreated'; readonly data: UserCreatedData }
  | { readonly type: 'UserUpdated'; readonly data: UserChanges & { readonly id: string; readonly at: string } }
  /** The dashboard password, as its PHC-format hash. The identity relay publishes the event without it. */
  | {
      readonly type: 'UserPasswordSet';
      readonly data: { readonly id: string; readonly passwordHash: string; readonly at: string };
    };

interface CommandMetadata {
  readonly now: string;
}

export type UserCommand =
  | { readonly type: 'CreateUser'; readonly data: Omit<UserCreatedData, 'at'>; readonly metadata: CommandMetadata }
  | { readonly type: 'UpdateUser'; readonly data: UserChanges; readonly metadata: CommandMetadata }
  | {
      readonly type: 'SetUserPassword';
      readonly data: { readonly passwordHash: string };
      readonly metadata: CommandMetadata;
    };

export type UserState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'present';
      readonly id: string;
      readonly displayName: string;
      readonly roleIds: readonly string[];
      readonly active: boolean;
    };

export const userStream = (id: string): string => `user-${id}`;

/** Deliberately loose: one `@`, something on each side, no spaces. The identity provider or operator owns the rest. */
const emailShape = /^[^\s@]+@[^\s@]+$/;

function assertEmail(email: string): void {
  if (!emailShape.test(email))
    throw new DomainError('invalid_user', 'invalid email', [{ field: 'email', message: 'must be an email address' }]);
}

function assertDisplayName(displayName: string | undefined): void {
  if (displayName !== undefined && displayName.trim() === '') {
    throw new DomainError('invalid_user', 'invalid display name', [
      { field: 'display_name', message: 'must not be empty' },
    ]);
  }
}

const sameRoles = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((id) => b.includes(id));

export const user: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateUser': {
        if (state.status !== 'absent') throw new DomainError('user_exists', `user ${command.data.id} already exists`);
        assertEmail(command.data.email);
        assertDisplayName(command.data.displayName);
        // Users get their roles from the operator (a dashboard user's stand-in) or single sign-on, which an
        // administrator configures: both assign as a dashboard user.
        assertValidRoleSet(command.data.roleIds, 'user', 'user');
        return [
          {
            type: 'UserCreated',
            data: { ...command.data, roleIds: [...new Set(command.data.roleIds)], at: command.metadata.now },
          },
        ];
      }
      case 'UpdateUser': {
        if (state.status !== 'present') throw new DomainError('user_not_found', 'The resource could not be found');
        assertDisplayName(command.data.displayName);
        if (command.data.roleIds !== undefined) assertValidRoleSet(command.data.roleIds, 'user', 'user');
        const roleIds = command.data.roleIds === undefined ? undefined : [...new Set(command.data.roleIds)];
        // Only what actually changes is recorded; a sign-in that maps to the same roles appends nothing.
        const changes: UserChanges = {
          ...(roleIds !== undefined && !sameRoles(roleIds, state.roleIds) ? { roleIds } : {}),
          ...(command.data.displayName !== undefined && command.data.displayName !== state.displayName
            ? { displayName: command.data.displayName }
            : {}),
          ...(command.data.active !== undefined && command.data.active !== state.active
            ? { active: command.data.active }
            : {}),
        };
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'UserUpdated', data: { id: state.id, ...changes, at: command.metadata.now } }];
      }
      case 'SetUserPassword':
        // A deactivated user may be given a password too: the operator resets it before restoring the user.
        if (state.status !== 'present') throw new DomainError('user_not_found', 'The resource could not be found');
        return [
          {
            type: 'UserPasswordSet',
            data: { id: state.id, passwordHash: command.data.passwordHash, at: command.metadata.now },
          },
        ];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'UserCreated':
        return {
          status: 'present',
          id: event.data.id,
          displayName: event.data.displayName,
          roleIds: event.data.roleIds,
          active: true,
        };
      case 'UserUpdated':
        if (state.status !== 'present') return state;
        return {
          ...state,
          ...(event.data.roleIds !== undefined ? { roleIds: event.data.roleIds } : {}),
          ...(event.data.displayName !== undefined ? { displayName: event.data.displayName } : {}),
          ...(event.data.active !== undefined ? { active: event.data.active } : {}),
        };
      case 'UserPasswordSet':
        return state;
    }
  },
};
