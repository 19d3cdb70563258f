/**
 * A buyer of a merchant account: stream `buyer-<uuid>`, holding the buyer's details and their shipping details
 * (each with its own id). It belongs to one merchant account for life; addressed under another account, or once
 * deleted, it does not exist.
 *
 * The external identifier is unique per merchant account through claim streams (`buyer-external-identifier.ts`).
 * `ExternalIdentifierClaimFenced` is that protocol's mark on this stream: whoever releases a claim the buyer no
 * longer uses appends it first, so a decision this buyer took before it (to take that identifier back) cannot be
 * appended any more. On a stream that never became a buyer (a create that stopped after claiming) it closes the
 * stream for good.
 */
import type { BillingDetails, Contact } from '@switchyard/contracts';
import { DomainError, type Decider } from '@switchyard/decider';

export interface BuyerDetails {
  readonly displayName: string | null;
  readonly externalIdentifier: string | null;
  readonly billingDetails: BillingDetails | null;
  readonly accountNumber: string | null;
}

export type BuyerChanges = Partial<BuyerDetails>;

/** Shipping details as stored: every field present, null when not given. */
export type ShippingDetailsData = Contact;
export type ShippingDetailsChanges = Partial<ShippingDetailsData>;

interface Owner {
  readonly id: string;
  readonly merchantAccountId: string;
}

interface ShippingOwner {
  readonly buyerId: string;
  readonly merchantAccountId: string;
  readonly shippingDetailsId: string;
}

interface At {
  readonly at: string;
}

export type BuyerEvent =
  | { readonly type: 'BuyerCreated'; readonly data: Owner & BuyerDetails & At }
  /** Only the fields whose value changed. */
  | { readonly type: 'BuyerUpdated'; readonly data: Owner & BuyerChanges & At }
  /** `externalIdentifier`: the one the buyer held, whose claim is released next. */
  | { readonly type: 'BuyerDeleted'; readonly data: Owner & { readonly externalIdentifier: string | null } & At }
  | { readonly type: 'ShippingDetailsAdded'; readonly data: ShippingOwner & ShippingDetailsData & At }
  | { readonly type: 'ShippingDetailsUpdated'; readonly data: ShippingOwner & ShippingDetailsChanges & At }
  | { readonly type: 'ShippingDetailsRemoved'; readonly data: ShippingOwner & At }
  | {
      readonly type: 'ExternalIdentifierClaimFenced';
      readonly data: Owner & { readonly externalIdentifier: string } & At;
    };

interface CommandMetadata {
  readonly now: string;
}

/** `merchantAccountId` on every command: the account of the request. */
export type BuyerCommand =
  | { readonly type: 'CreateBuyer'; readonly data: Owner & BuyerDetails; readonly metadata: CommandMetadata }
  | {
      readonly type: 'UpdateBuyer';
      readonly data: { readonly merchantAccountId: string; readonly changes: BuyerChanges };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'DeleteBuyer';
      readonly data: { readonly merchantAccountId: string };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'AddShippingDetails';
      readonly data: Omit<ShippingOwner, 'buyerId'> & { readonly details: ShippingDetailsData };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'UpdateShippingDetails';
      readonly data: Omit<ShippingOwner, 'buyerId'> & { readonly changes: ShippingDetailsChanges };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'RemoveShippingDetails';
      readonly data: Omit<ShippingOwner, 'buyerId'>;
      readonly metadata: CommandMetadata;
    }
  /** Before the claim on `externalIdentifier` held by this buyer is released (by anyone): refused while the buyer uses it. */
  | {
      readonly type: 'FenceExternalIdentifierClaim';
      readonly data: Owner & { readonly externalIdentifier: string };
      readonly metadata: CommandMetadata;
    };

export interface PresentBuyer {
  readonly status: 'present';
  readonly id: string;
  readonly merchantAccountId: string;
  readonly details: BuyerDetails;
  readonly shippingDetails: Readonly<Record<string, ShippingDetailsData>>;
}

export type BuyerState =
  | { readonly status: 'absent' }
  /** A stream closed before it became a buyer (see the file comment). */
  | { readonly status: 'abandoned' }
  | { readonly status: 'deleted' }
  | PresentBuyer;

export const buyerStream = (id: string): string => `buyer-${id}`;

export const buyerNotFound = () => new DomainError('buyer_not_found', 'The resource could not be found');
const shippingDetailsNotFound = () => new DomainError('shipping_details_not_found', 'The resource could not be found');

/** The buyer holds `externalIdentifier`: its claim is in use and cannot be released. */
export class ExternalIdentifierInUse extends DomainError<'buyer_external_identifier_in_use'> {
  constructor(readonly buyerId: string) {
    super('buyer_external_identifier_in_use', `buyer ${buyerId} uses this external identifier`);
  }
}

const addressedBy = (state: BuyerState, merchantAccountId: string): state is PresentBuyer =>
  state.status === 'present' && state.merchantAccountId === merchantAccountId;

/** Stored values are JSON (fixed key order, from the same normalisation), so equal text is an equal value. */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The entries of `changes` that are given and differ from `current`. */
function changed<T extends object>(current: T, changes: Partial<T>): Partial<T> {
  return Object.fromEntries(
    Object.entries(changes).filter(([key, value]) => value !== undefined && !same(current[key as keyof T], value)),
  ) as Partial<T>;
}

export const buyerDecider: Decider<BuyerCommand, BuyerEvent, BuyerState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    const at = command.metadata.now;
    switch (command.type) {
      case 'CreateBuyer':
        if (state.status !== 'absent') throw new DomainError('buyer_exists', `buyer ${command.data.id} already exists`);
        return [{ type: 'BuyerCreated', data: { ...command.data, at } }];
      case 'UpdateBuyer': {
        if (!addressedBy(state, command.data.merchantAccountId)) throw buyerNotFound();
        const changes = changed(state.details, command.data.changes);
        if (Object.keys(changes).length === 0) return [];
        return [
          { type: 'BuyerUpdated', data: { ...changes, id: state.id, merchantAccountId: state.merchantAccountId, at } },
        ];
      }
      case 'DeleteBuyer':
        if (!addressedBy(state, command.data.merchantAccountId)) throw buyerNotFound();
        return [
          {
            type: 'BuyerDeleted',
            data: {
              id: state.id,
              merchantAccountId: state.merchantAccountId,
              externalIdentifier: state.details.externalIdentifier,
              at,
            },
          },
        ];
      case 'AddShippingDetails': {
        if (!addressedBy(state, command.data.merchantAccountId)) throw buyerNotFound();
        const { shippingDetailsId, details } = command.data;
        if (state.shippingDetails[shippingDetailsId])
          throw new DomainError('shipping_details_exists', `shipping details ${shippingDetailsId} already exist`);
        return [
          {
            type: 'ShippingDetailsAdded',
            data: { ...details, buyerId: state.id, merchantAccountId: state.merchantAccountId, shippingDetailsId, at },
          },
        ];
      }
      case 'UpdateShippingDetails': {
        if (!addressedBy(state, command.data.merchantAccountId)) throw buyerNotFound();
        const { shippingDetailsId } = command.data;
        const current = state.shippingDetails[shippingDetailsId];
        if (!current) throw shippingDetailsNotFound();
        const changes = changed(current, command.data.changes);
        if (Object.keys(changes).length === 0) return [];
        return [
          {
            type: 'ShippingDetailsUpdated',
            data: { ...changes, buyerId: state.id, merchantAccountId: state.merchantAccountId, shippingDetailsId, at },
          },
        ];
      }
      case 'RemoveShippingDetails': {
        if (!addressedBy(state, command.data.merchantAccountId)) throw buyerNotFound();
        const { shippingDetailsId } = command.data;
        if (!state.shippingDetails[shippingDetailsId]) throw shippingDetailsNotFound();
        return [
          {
            type: 'ShippingDetailsRemoved',
            data: { buyerId: state.id, merchantAccountId: state.merchantAccountId, shippingDetailsId, at },
          },
        ];
      }
      case 'FenceExternalIdentifierClaim': {
        const { id, merchantAccountId, externalIdentifier } = command.data;
        // Deleted and abandoned streams take no decision any more: nothing to fence.
        if (state.status === 'deleted' || state.status === 'abandoned') return [];
        if (state.status === 'present' && state.details.externalIdentifier === externalIdentifier)
          throw new ExternalIdentifierInUse(state.id);
        return [{ type: 'ExternalIdentifierClaimFenced', data: { id, merchantAccountId, externalIdentifier, at } }];
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'BuyerCreated': {
        const { id, merchantAccountId, displayName, externalIdentifier, billingDetails, accountNumber } = event.data;
        return {
          status: 'present',
          id,
          merchantAccountId,
          details: { displayName, externalIdentifier, billingDetails, accountNumber },
          shippingDetails: {},
        };
      }
      case 'BuyerUpdated': {
        if (state.status !== 'present') return state;
        const { id: _id, merchantAccountId: _account, at: _at, ...changes } = event.data;
        return { ...state, details: { ...state.details, ...changes } };
      }
      case 'BuyerDeleted':
        return { status: 'deleted' };
      case 'ShippingDetailsAdded':
      case 'ShippingDetailsUpdated': {
        if (state.status !== 'present') return state;
        const { buyerId: _buyer, merchantAccountId: _account, shippingDetailsId, at: _at, ...fields } = event.data;
        const current = state.shippingDetails[shippingDetailsId];
        const next = (
          event.type === 'ShippingDetailsAdded' ? fields : { ...current, ...fields }
        ) as ShippingDetailsData;
        return { ...state, shippingDetails: { ...state.shippingDetails, [shippingDetailsId]: next } };
      }
      case 'ShippingDetailsRemoved': {
        if (state.status !== 'present') return state;
        const { [event.data.shippingDetailsId]: _removed, ...rest } = state.shippingDetails;
        return { ...state, shippingDetails: rest };
      }
      case 'ExternalIdentifierClaimFenced':
        return state.status === 'absent' ? { status: 'abandoned' } : state;
    }
  },
};
