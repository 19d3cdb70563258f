/**
 * A provider's claim on a merchant account's wallet: stream `digital-wallet-provider-<provider>-<merchant account>`
 * (no provider name is a prefix of another, so the name is unambiguous). A merchant account has one wallet per
 * provider; a read-model check alone would let two racing writers (two processes) both pass, whereas the append to
 * this stream expects the revision it read, so exactly one of them holds the provider.
 *
 * The claim is taken before the wallet is registered and released after it is deleted. A crash between the two
 * appends leaves a claim whose wallet stream is empty (the next create finishes it under the claimed id) or deleted
 * (the next create takes the claim over: `replacing`). See `DigitalWallets.create`.
 */
import type { DigitalWalletProvider } from '@switchyard/contracts';
import { DomainError, type Decider } from '@switchyard/decider';

interface ClaimData {
  readonly merchantAccountId: string;
  readonly provider: DigitalWalletProvider;
  readonly digitalWalletId: string;
}

export type DigitalWalletProviderClaimEvent =
  | { readonly type: 'DigitalWalletProviderClaimed'; readonly data: ClaimData & { readonly at: string } }
  | { readonly type: 'DigitalWalletProviderReleased'; readonly data: ClaimData & { readonly at: string } };

export type DigitalWalletProviderClaimCommand =
  | {
      readonly type: 'ClaimDigitalWalletProvider';
      /** `replacing`: the holder the caller found deleted; its claim may be taken over. */
      readonly data: ClaimData & { readonly replacing?: string };
      readonly metadata: { readonly now: string };
    }
  | {
      readonly type: 'ReleaseDigitalWalletProvider';
      readonly data: ClaimData;
      readonly metadata: { readonly now: string };
    };

export type DigitalWalletProviderClaimState =
  | { readonly status: 'free' }
  | { readonly status: 'claimed'; readonly digitalWalletId: string };

export const digitalWalletProviderStream = (merchantAccountId: string, provider: DigitalWalletProvider): string =>
  `digital-wallet-provider-${provider}-${merchantAccountId}`;

/** The provider is held by another wallet of the merchant account (409, with that wallet's id). */
export class DigitalWalletProviderTaken extends DomainError<'digital_wallet_provider_taken'> {
  constructor(
    readonly provider: DigitalWalletProvider,
    readonly holderId: string,
  ) {
    const message = `this merchant account already has a wallet of provider ${provider}`;
    super('digital_wallet_provider_taken', message, [{ field: 'provider', message }]);
  }
}

export const digitalWalletProviderClaim: Decider<
  DigitalWalletProviderClaimCommand,
  DigitalWalletProviderClaimEvent,
  DigitalWalletProviderClaimState
> = {
  initialState: () => ({ status: 'free' }),
  decide(command, state) {
    const { replacing: _replacing, ...data } = command.data as ClaimData & { replacing?: string };
    switch (command.type) {
      case 'ClaimDigitalWalletProvider':
        if (state.status === 'free' || state.digitalWalletId === command.data.replacing) {
          return [{ type: 'DigitalWalletProviderClaimed', data: { ...data, at: command.metadata.now } }];
        }
        if (state.digitalWalletId === data.digitalWalletId) return [];
        throw new DigitalWalletProviderTaken(data.provider, state.digitalWalletId);
      case 'ReleaseDigitalWalletProvider':
        // Only its holder releases a claim: a late release of a claim already taken over changes nothing.
        if (state.status !== 'claimed' || state.digitalWalletId !== data.digitalWalletId) return [];
        return [{ type: 'DigitalWalletProviderReleased', data: { ...data, at: command.metadata.now } }];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'DigitalWalletProviderClaimed':
        return { status: 'claimed', digitalWalletId: event.data.digitalWalletId };
      case 'DigitalWalletProviderReleased':
        return { status: 'free' };
      default:
        return state;
    }
  },
};
