/**
 * A network token of a stored card: stream `network-token-<uuid>`. It belongs to one payment method of one merchant
 * account for life; addressed through another it does not exist. Provisioning happens at the token service first and
 * is recorded here with its answer (a token, or the refusal); so do suspend, resume and delete. Deleted is final.
 *
 * The token number is a network's stand-in for the card, not the card number; the API shows it, so it is kept — but
 * only sealed (`sealedToken`), never in clear in an event.
 */
import { DomainError, type Decider } from '@switchyard/decider';

export interface NetworkTokenOwner {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly paymentMethodId: string;
}

/** How provisioning was asked for: `POST …/network-tokens`, or when the card was stored. */
export type ProvisioningTrigger = 'api' | 'automatic';

/** Why a token was deleted: `DELETE …/network-tokens/{id}`, or its payment method was deleted. */
export type DeletionReason = 'api' | 'payment_method_deleted';

export interface ProvisionedToken {
  readonly providerTokenId: string;
  /** The token number, sealed with the slice's key (`VaultCipher.sealToText`, bound to the account and token id). */
  readonly sealedToken: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly paymentAccountReference: string;
}

interface At {
  readonly at: string;
}

export type NetworkTokenEvent =
  | {
      readonly type: 'NetworkTokenProvisioned';
      readonly data: NetworkTokenOwner &
        ProvisionedToken & { readonly scheme: string; readonly trigger: ProvisioningTrigger } & At;
    }
  | {
      readonly type: 'NetworkTokenProvisionFailed';
      readonly data: NetworkTokenOwner & {
        readonly scheme: string;
        readonly trigger: ProvisioningTrigger;
        readonly errorCode: string;
        readonly message: string;
      } & At;
    }
  | { readonly type: 'NetworkTokenSuspended'; readonly data: NetworkTokenOwner & At }
  | { readonly type: 'NetworkTokenResumed'; readonly data: NetworkTokenOwner & At }
  | {
      readonly type: 'NetworkTokenDeleted';
      readonly data: NetworkTokenOwner & { readonly reason: DeletionReason } & At;
    };

interface CommandMetadata {
  readonly now: string;
}

/** The token service's answer to a provisioning request. */
export type ProvisioningAnswer =
  | ({ readonly outcome: 'succeeded' } & ProvisionedToken)
  | { readonly outcome: 'failed'; readonly errorCode: string; readonly message: string };

export type NetworkTokenCommand =
  | {
      readonly type: 'RecordProvisioning';
      readonly data: NetworkTokenOwner & {
        readonly scheme: string;
        readonly trigger: ProvisioningTrigger;
        readonly answer: ProvisioningAnswer;
      };
      readonly metadata: CommandMetadata;
    }
  | { readonly type: 'SuspendNetworkToken'; readonly data: NetworkTokenOwner; readonly metadata: CommandMetadata }
  | { readonly type: 'ResumeNetworkToken'; readonly data: NetworkTokenOwner; readonly metadata: CommandMetadata }
  | {
      readonly type: 'DeleteNetworkToken';
      readonly data: NetworkTokenOwner & { readonly reason: DeletionReason };
      readonly metadata: CommandMetadata;
    };

export type NetworkTokenState =
  | { readonly status: 'absent' }
  /** The token service refused: there never was a token. */
  | { readonly status: 'failed' }
  | (NetworkTokenOwner & { readonly status: 'active' | 'suspended' | 'deleted'; readonly providerTokenId: string });

export const networkTokenStream = (id: string): string => `network-token-${id}`;

export const networkTokenNotFound = () => new DomainError('network_token_not_found', 'The resource could not be found');

/** The token when it is live (active or suspended) and the command's owner is its owner; else it does not exist. */
function liveTokenOf(state: NetworkTokenState, owner: NetworkTokenOwner) {
  if (state.status !== 'active' && state.status !== 'suspended') throw networkTokenNotFound();
  if (state.merchantAccountId !== owner.merchantAccountId || state.paymentMethodId !== owner.paymentMethodId)
    throw networkTokenNotFound();
  return state;
}

const ownerOf = (token: NetworkTokenOwner): NetworkTokenOwner => ({
  id: token.id,
  merchantAccountId: token.merchantAccountId,
  paymentMethodId: token.paymentMethodId,
});

export const networkTokenDecider: Decider<NetworkTokenCommand, NetworkTokenEvent, NetworkTokenState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state): NetworkTokenEvent[] {
    const at = command.metadata.now;
    switch (command.type) {
      case 'RecordProvisioning': {
        if (state.status !== 'absent')
          throw new DomainError('network_token_exists', `network token ${command.data.id} already exists`);
        const { answer, scheme, trigger } = command.data;
        const owner = ownerOf(command.data);
        if (answer.outcome === 'failed') {
          return [
            {
              type: 'NetworkTokenProvisionFailed',
              data: { ...owner, scheme, trigger, errorCode: answer.errorCode, message: answer.message, at },
            },
          ];
        }
        const { providerTokenId, sealedToken, expirationDate, paymentAccountReference } = answer;
        return [
          {
            type: 'NetworkTokenProvisioned',
            data: {
              ...owner,
              providerTokenId,
              sealedToken,
              expirationDate,
              paymentAccountReference,
              scheme,
              trigger,
              at,
            },
          },
        ];
      }
      case 'SuspendNetworkToken': {
        const token = liveTokenOf(state, command.data);
        return token.status === 'suspended' ? [] : [{ type: 'NetworkTokenSuspended', data: { ...ownerOf(token), at } }];
      }
      case 'ResumeNetworkToken': {
        const token = liveTokenOf(state, command.data);
        return token.status === 'active' ? [] : [{ type: 'NetworkTokenResumed', data: { ...ownerOf(token), at } }];
      }
      case 'DeleteNetworkToken': {
        const token = liveTokenOf(state, command.data);
        return [{ type: 'NetworkTokenDeleted', data: { ...ownerOf(token), reason: command.data.reason, at } }];
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'NetworkTokenProvisioned':
        return { ...ownerOf(event.data), status: 'active', providerTokenId: event.data.providerTokenId };
      case 'NetworkTokenProvisionFailed':
        return { status: 'failed' };
      case 'NetworkTokenSuspended':
        return state.status === 'active' ? { ...state, status: 'suspended' } : state;
      case 'NetworkTokenResumed':
        return state.status === 'suspended' ? { ...state, status: 'active' } : state;
      case 'NetworkTokenDeleted':
        return state.status === 'active' || state.status === 'suspended' ? { ...state, status: 'deleted' } : state;
      default:
        return state;
    }
  },
};
