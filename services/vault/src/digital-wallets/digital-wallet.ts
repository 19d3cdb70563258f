/**
 * A merchant account's registration with a wallet provider: stream `digital-wallet-<uuid>`. It belongs to one
 * merchant account and provider for life; addressed under another account it does not exist. A Paze wallet holds the
 * merchant's decryption key — sealed (the events carry the sealed text and the key's thumbprint, never the key).
 * That a merchant account has one wallet per provider is held by `digital-wallet-provider-claim.ts`.
 */
import type { DigitalWalletProvider } from '@switchyard/contracts';
import { DomainError, type Decider } from '@switchyard/decider';

export interface DigitalWalletSettings {
  readonly merchantName: string;
  readonly merchantDisplayName: string | null;
  readonly merchantUrl: string | null;
  readonly merchantCountryCode: string | null;
  /** Lower-cased host names. */
  readonly domainNames: readonly string[];
}

/** A Paze decryption key as it is kept: its public key's thumbprint and the key sealed for this wallet. */
export interface SealedDecryptionKey {
  readonly keyId: string;
  readonly sealed: string;
}

export type DigitalWalletChanges = Partial<DigitalWalletSettings> & { readonly decryptionKey?: SealedDecryptionKey };

interface Owner {
  readonly id: string;
  readonly merchantAccountId: string;
}

export type DigitalWalletEvent =
  | {
      readonly type: 'DigitalWalletRegistered';
      readonly data: Owner &
        DigitalWalletSettings & {
          readonly provider: DigitalWalletProvider;
          readonly decryptionKey: SealedDecryptionKey | null;
          readonly at: string;
        };
    }
  | { readonly type: 'DigitalWalletUpdated'; readonly data: Owner & DigitalWalletChanges & { readonly at: string } }
  | {
      readonly type: 'DigitalWalletDeleted';
      readonly data: Owner & { readonly provider: DigitalWalletProvider; readonly at: string };
    };

interface CommandMetadata {
  readonly now: string;
}

export type DigitalWalletCommand =
  | {
      readonly type: 'RegisterDigitalWallet';
      readonly data: Owner &
        DigitalWalletSettings & {
          readonly provider: DigitalWalletProvider;
          readonly acceptTermsAndConditions: boolean;
          readonly decryptionKey: SealedDecryptionKey | null;
        };
      readonly metadata: CommandMetadata;
    }
  /** `merchantAccountId`: the request's account; under another one the wallet does not exist. */
  | {
      readonly type: 'UpdateDigitalWallet';
      readonly data: { readonly merchantAccountId: string; readonly changes: DigitalWalletChanges };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'DeleteDigitalWallet';
      readonly data: { readonly merchantAccountId: string };
      readonly metadata: CommandMetadata;
    };

export type DigitalWalletState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'deleted';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly provider: DigitalWalletProvider;
    }
  | {
      readonly status: 'present';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly provider: DigitalWalletProvider;
      readonly settings: DigitalWalletSettings;
      readonly decryptionKeyId: string | null;
    };

export const digitalWalletStream = (id: string): string => `digital-wallet-${id}`;

/** The provider whose wallets hold a decryption key. */
export const KEYED_PROVIDER: DigitalWalletProvider = 'paze';

export const digitalWalletNotFound = () =>
  new DomainError('digital_wallet_not_found', 'The resource could not be found');

const refused = (code: string, field: string, message: string) => new DomainError(code, message, [{ field, message }]);

function assertKeyFits(
  provider: DigitalWalletProvider,
  decryptionKey: SealedDecryptionKey | null | undefined,
  creating: boolean,
): void {
  if (provider === KEYED_PROVIDER && creating && !decryptionKey) {
    throw refused(
      'decryption_key_required',
      'decryption_key',
      'a paze wallet needs the decryption key Paze encrypts payloads to',
    );
  }
  if (provider !== KEYED_PROVIDER && decryptionKey) {
    throw refused(
      'decryption_key_not_supported',
      'decryption_key',
      `a ${provider} wallet takes no decryption key (paze only)`,
    );
  }
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

/** The changes that differ from the wallet as it is (a new key only when its thumbprint differs). */
function effectiveChanges(
  state: Extract<DigitalWalletState, { status: 'present' }>,
  changes: DigitalWalletChanges,
): DigitalWalletChanges {
  const current = state.settings;
  const differs = <K extends keyof DigitalWalletSettings>(field: K): boolean => {
    const value = changes[field];
    if (value === undefined) return false;
    const before = current[field];
    return Array.isArray(value) ? !sameList(value, before as readonly string[]) : value !== before;
  };
  const fields = (
    ['merchantName', 'merchantDisplayName', 'merchantUrl', 'merchantCountryCode', 'domainNames'] as const
  ).filter(differs);
  return {
    ...Object.fromEntries(fields.map((field) => [field, changes[field]])),
    ...(changes.decryptionKey && changes.decryptionKey.keyId !== state.decryptionKeyId
      ? { decryptionKey: changes.decryptionKey }
      : {}),
  };
}

export const digitalWalletDecider: Decider<DigitalWalletCommand, DigitalWalletEvent, DigitalWalletState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'RegisterDigitalWallet': {
        if (state.status !== 'absent')
          throw new DomainError('digital_wallet_exists', `digital wallet ${command.data.id} already exists`);
        const { acceptTermsAndConditions, ...wallet } = command.data;
        if (acceptTermsAndConditions !== true) {
          throw refused(
            'terms_and_conditions_not_accepted',
            'accept_terms_and_conditions',
            `the ${wallet.provider} terms and conditions must be accepted (true)`,
          );
        }
        assertKeyFits(wallet.provider, wallet.decryptionKey, true);
        return [{ type: 'DigitalWalletRegistered', data: { ...wallet, at: command.metadata.now } }];
      }
      case 'UpdateDigitalWallet': {
        if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId)
          throw digitalWalletNotFound();
        assertKeyFits(state.provider, command.data.changes.decryptionKey, false);
        const changes = effectiveChanges(state, command.data.changes);
        if (Object.keys(changes).length === 0) return [];
        return [
          {
            type: 'DigitalWalletUpdated',
            data: { id: state.id, merchantAccountId: state.merchantAccountId, ...changes, at: command.metadata.now },
          },
        ];
      }
      case 'DeleteDigitalWallet':
        if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId)
          throw digitalWalletNotFound();
        return [
          {
            type: 'DigitalWalletDeleted',
            data: {
              id: state.id,
              merchantAccountId: state.merchantAccountId,
              provider: state.provider,
              at: command.metadata.now,
            },
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
      case 'DigitalWalletRegistered': {
        const {
          id,
          merchantAccountId,
          provider,
          decryptionKey,
          merchantName,
          merchantDisplayName,
          merchantUrl,
          merchantCountryCode,
          domainNames,
        } = event.data;
        return {
          status: 'present',
          id,
          merchantAccountId,
          provider,
          settings: { merchantName, merchantDisplayName, merchantUrl, merchantCountryCode, domainNames },
          decryptionKeyId: decryptionKey?.keyId ?? null,
        };
      }
      case 'DigitalWalletUpdated': {
        if (state.status !== 'present') return state;
        const { id: _id, merchantAccountId: _account, at: _at, decryptionKey, ...settings } = event.data;
        return {
          ...state,
          settings: { ...state.settings, ...settings },
          decryptionKeyId: decryptionKey?.keyId ?? state.decryptionKeyId,
        };
      }
      case 'DigitalWalletDeleted':
        return {
          status: 'deleted',
          id: event.data.id,
          merchantAccountId: event.data.merchantAccountId,
          provider: event.data.provider,
        };
      default:
        return state;
    }
  },
};
