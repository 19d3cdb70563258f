/**
 * A claim on an external identifier of a merchant account's buyers: stream `buyer-external-identifier-<hash of
 * (merchant account, identifier)>`. A read-model check alone would let two racing writers (two processes) both
 * pass; appends to this stream expect the revision read, so exactly one buyer holds the identifier.
 *
 * The claim is taken before the buyer's event that sets the identifier and released after the one that drops it
 * (change or delete). How a claim left behind by a crash is taken over safely: `external-identifier-claims.ts`.
 */
import { createHash } from 'node:crypto';
import { DomainError, type Decider } from '@switchyard/decider';

interface ClaimKey {
  readonly merchantAccountId: string;
  readonly externalIdentifier: string;
}

type ClaimData = ClaimKey & { readonly buyerId: string };

export type ExternalIdentifierClaimEvent =
  | { readonly type: 'BuyerExternalIdentifierClaimed'; readonly data: ClaimData & { readonly at: string } }
  | { readonly type: 'BuyerExternalIdentifierReleased'; readonly data: ClaimData & { readonly at: string } };

interface CommandMetadata {
  readonly now: string;
}

export type ExternalIdentifierClaimCommand =
  /** Held already by the same buyer: claimed again, which moves the stream on (a release decided before fails). */
  | { readonly type: 'ClaimBuyerExternalIdentifier'; readonly data: ClaimData; readonly metadata: CommandMetadata }
  /** From `previousBuyerId`, whose claim the caller has fenced (it no longer uses the identifier). */
  | {
      readonly type: 'TakeOverBuyerExternalIdentifier';
      readonly data: ClaimData & { readonly previousBuyerId: string };
      readonly metadata: CommandMetadata;
    }
  /** By the holder, or for it once fenced; anyone else's release changes nothing. */
  | { readonly type: 'ReleaseBuyerExternalIdentifier'; readonly data: ClaimData; readonly metadata: CommandMetadata };

export type ExternalIdentifierClaimState =
  | { readonly status: 'free' }
  | { readonly status: 'claimed'; readonly buyerId: string };

/** Another buyer holds the identifier (it may be a claim left behind, which the caller checks). */
export class ExternalIdentifierTaken extends DomainError<'buyer_external_identifier_taken'> {
  constructor(readonly holderId: string) {
    super('buyer_external_identifier_taken', `the external identifier is claimed by buyer ${holderId}`);
  }
}

/** Hashed: identifiers are free text up to 200 characters, and the account id must not run into them. */
export const externalIdentifierClaimStream = (merchantAccountId: string, externalIdentifier: string): string =>
  `buyer-external-identifier-${createHash('sha256')
    .update(JSON.stringify([merchantAccountId, externalIdentifier]))
    .digest('hex')}`;

export const externalIdentifierClaim: Decider<
  ExternalIdentifierClaimCommand,
  ExternalIdentifierClaimEvent,
  ExternalIdentifierClaimState
> = {
  initialState: () => ({ status: 'free' }),
  decide(command, state) {
    const { merchantAccountId, externalIdentifier, buyerId } = command.data;
    const at = command.metadata.now;
    const claimed: ExternalIdentifierClaimEvent = {
      type: 'BuyerExternalIdentifierClaimed',
      data: { merchantAccountId, externalIdentifier, buyerId, at },
    };
    switch (command.type) {
      case 'ClaimBuyerExternalIdentifier':
        if (state.status === 'claimed' && state.buyerId !== buyerId) throw new ExternalIdentifierTaken(state.buyerId);
        return [claimed];
      case 'TakeOverBuyerExternalIdentifier': {
        if (state.status === 'free' || state.buyerId === buyerId) return [claimed];
        if (state.buyerId !== command.data.previousBuyerId) throw new ExternalIdentifierTaken(state.buyerId);
        const released: ExternalIdentifierClaimEvent = {
          type: 'BuyerExternalIdentifierReleased',
          data: { merchantAccountId, externalIdentifier, buyerId: state.buyerId, at },
        };
        return [released, claimed];
      }
      case 'ReleaseBuyerExternalIdentifier':
        if (state.status !== 'claimed' || state.buyerId !== buyerId) return [];
        return [
          { type: 'BuyerExternalIdentifierReleased', data: { merchantAccountId, externalIdentifier, buyerId, at } },
        ];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(_state, event) {
    switch (event.type) {
      case 'BuyerExternalIdentifierClaimed':
        return { status: 'claimed', buyerId: event.data.buyerId };
      case 'BuyerExternalIdentifierReleased':
        return { status: 'free' };
    }
  },
};
