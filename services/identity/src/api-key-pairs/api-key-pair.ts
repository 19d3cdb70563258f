/** The API key pair aggregate: stream `api-key-pair-<uuid>`. Only the public key is ever stored. */
import type { AssigneeKind } from '@switchyard/contracts';
import type { PublicJwk } from '@switchyard/auth';
import { DomainError, type Decider } from '@switchyard/decider';
import { assertValidRoleSet } from '../roles/role-rules';

export interface ApiKeyPairCreatedData {
  readonly id: string;
  readonly displayName: string;
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly roleIds: readonly string[];
  readonly merchantAccountIds: readonly string[];
  readonly active: boolean;
  /** Whether the service generated the key pair (its private key was shown once) or the caller supplied it. */
  readonly generated: boolean;
  readonly createdBy: Actor;
  readonly at: string;
}

/** Who did it: the operator CLI (a dashboard user's stand-in) or an API key pair. */
export interface Actor {
  readonly kind: AssigneeKind | 'operator';
  readonly id?: string;
}

export interface ApiKeyPairChanges {
  readonly displayName?: string;
  readonly roleIds?: readonly string[];
  readonly active?: boolean;
  readonly merchantAccountIds?: readonly string[];
}

export type ApiKeyPairEvent =
  | { readonly type: 'ApiKeyPairCreated'; readonly data: ApiKeyPairCreatedData }
  | {
      readonly type: 'ApiKeyPairUpdated';
      readonly data: ApiKeyPairChanges & {
        readonly id: string;
        readonly kid: string;
        readonly by: Actor;
        readonly at: string;
      };
    }
  | {
      readonly type: 'ApiKeyPairDeleted';
      readonly data: { readonly id: string; readonly kid: string; readonly by: Actor; readonly at: string };
    }
  /** Batched by the gateway (at most one per key per flush), so `last_used_at` costs no write per request. */
  | { readonly type: 'ApiKeyPairUsed'; readonly data: { readonly id: string; readonly at: string } };

interface CommandMetadata {
  readonly now: string;
  /** The operator CLI stands where a dashboard user would. */
  readonly assigner: AssigneeKind;
  readonly by: Actor;
}

export type ApiKeyPairCommand =
  | {
      readonly type: 'CreateApiKeyPair';
      readonly data: Omit<ApiKeyPairCreatedData, 'at' | 'createdBy'>;
      readonly metadata: CommandMetadata;
    }
  | { readonly type: 'UpdateApiKeyPair'; readonly data: ApiKeyPairChanges; readonly metadata: CommandMetadata }
  | { readonly type: 'DeleteApiKeyPair'; readonly metadata: CommandMetadata }
  | { readonly type: 'RecordApiKeyPairUse'; readonly data: { readonly at: string } };

export type ApiKeyPairState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | { readonly status: 'present'; readonly id: string; readonly kid: string; readonly lastUsedAt: string | null };

export const apiKeyPairStream = (id: string): string => `api-key-pair-${id}`;

const notFound = () => new DomainError('api_key_pair_not_found', 'The resource could not be found');

function assertDisplayName(displayName: string | undefined): void {
  if (displayName !== undefined && displayName.trim() === '') {
    throw new DomainError('invalid_api_key_pair', 'invalid display name', [
      { field: 'display_name', message: 'must not be empty' },
    ]);
  }
}

export const apiKeyPair: Decider<ApiKeyPairCommand, ApiKeyPairEvent, ApiKeyPairState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateApiKeyPair': {
        if (state.status !== 'absent')
          throw new DomainError('api_key_pair_exists', `API key pair ${command.data.id} already exists`);
        assertDisplayName(command.data.displayName);
        assertValidRoleSet(command.data.roleIds, 'api-key-pair', command.metadata.assigner);
        return [
          {
            type: 'ApiKeyPairCreated',
            data: {
              ...command.data,
              roleIds: [...new Set(command.data.roleIds)],
              merchantAccountIds: [...new Set(command.data.merchantAccountIds)],
              createdBy: command.metadata.by,
              at: command.metadata.now,
            },
          },
        ];
      }
      case 'UpdateApiKeyPair': {
        if (state.status !== 'present') throw notFound();
        assertDisplayName(command.data.displayName);
        // A key holding key-manager alone keeps working, but any edit of its roles must make a valid set.
        if (command.data.roleIds !== undefined)
          assertValidRoleSet(command.data.roleIds, 'api-key-pair', command.metadata.assigner);
        const changes: ApiKeyPairChanges = {
          ...(command.data.displayName !== undefined ? { displayName: command.data.displayName } : {}),
          ...(command.data.roleIds !== undefined ? { roleIds: [...new Set(command.data.roleIds)] } : {}),
          ...(command.data.active !== undefined ? { active: command.data.active } : {}),
          ...(command.data.merchantAccountIds !== undefined
            ? { merchantAccountIds: [...new Set(command.data.merchantAccountIds)] }
            : {}),
        };
        return [
          {
            type: 'ApiKeyPairUpdated',
            data: { id: state.id, kid: state.kid, ...changes, by: command.metadata.by, at: command.metadata.now },
          },
        ];
      }
      case 'DeleteApiKeyPair':
        if (state.status !== 'present') throw notFound();
        return [
          {
            type: 'ApiKeyPairDeleted',
            data: { id: state.id, kid: state.kid, by: command.metadata.by, at: command.metadata.now },
          },
        ];
      case 'RecordApiKeyPairUse':
        // Uses reported late or for a deleted key change nothing.
        if (state.status !== 'present' || (state.lastUsedAt !== null && state.lastUsedAt >= command.data.at)) return [];
        return [{ type: 'ApiKeyPairUsed', data: { id: state.id, at: command.data.at } }];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyPairCreated':
        return { status: 'present', id: event.data.id, kid: event.data.kid, lastUsedAt: null };
      case 'ApiKeyPairUpdated':
        return state;
      case 'ApiKeyPairDeleted':
        return { status: 'deleted' };
      case 'ApiKeyPairUsed':
        return state.status === 'present' ? { ...state, lastUsedAt: event.data.at } : state;
    }
  },
};
