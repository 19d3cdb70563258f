/**
 * A stored gift card: stream `gift-card-<uuid>`. It belongs to one merchant account for life; addressed under
 * another account it does not exist. Its events hold only what may be shown of the card (BIN, sub-BIN, last four,
 * expiry, currency), the buyer as given and the gift card service it was checked with — never the number or PIN,
 * which live encrypted in the gift card vault under the same id.
 */
import { DomainError, type Decider } from '@switchyard/decider';

/** The connection (payment service of method `gift-card`) that checked the card, as it was then. */
export interface GiftCardServiceRef {
  readonly id: string;
  readonly definitionId: string;
  readonly displayName: string;
}

export interface StoredGiftCard {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly bin: string;
  readonly subBin: string;
  readonly last4: string;
  /** The card's currency, as the gift card service answered the balance check. */
  readonly currency: string | null;
  /** ISO-8601; null when the card does not expire. */
  readonly expirationDate: string | null;
  readonly buyerId: string | null;
  readonly buyerExternalIdentifier: string | null;
  readonly giftCardService: GiftCardServiceRef;
}

interface Owner {
  readonly id: string;
  readonly merchantAccountId: string;
}

export type GiftCardEvent =
  | { readonly type: 'GiftCardStored'; readonly data: StoredGiftCard & { readonly at: string } }
  | { readonly type: 'GiftCardDeleted'; readonly data: Owner & { readonly at: string } };

interface CommandMetadata {
  readonly now: string;
}

export type GiftCardCommand =
  | { readonly type: 'StoreGiftCard'; readonly data: StoredGiftCard; readonly metadata: CommandMetadata }
  /** `merchantAccountId`: the account of the request; under another one the card does not exist. */
  | { readonly type: 'DeleteGiftCard'; readonly data: Owner; readonly metadata: CommandMetadata };

export type GiftCardState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | { readonly status: 'present'; readonly id: string; readonly merchantAccountId: string };

export const giftCardStream = (id: string): string => `gift-card-${id}`;

export const giftCardNotFound = () => new DomainError('gift_card_not_found', 'The resource could not be found');

export const giftCardDecider: Decider<GiftCardCommand, GiftCardEvent, GiftCardState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'StoreGiftCard':
        if (state.status !== 'absent')
          throw new DomainError('gift_card_exists', `gift card ${command.data.id} already exists`);
        return [{ type: 'GiftCardStored', data: { ...command.data, at: command.metadata.now } }];
      case 'DeleteGiftCard':
        if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId)
          throw giftCardNotFound();
        return [
          {
            type: 'GiftCardDeleted',
            data: { id: state.id, merchantAccountId: state.merchantAccountId, at: command.metadata.now },
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
      case 'GiftCardStored':
        return { status: 'present', id: event.data.id, merchantAccountId: event.data.merchantAccountId };
      case 'GiftCardDeleted':
        return { status: 'deleted' };
      default:
        return state;
    }
  },
};
