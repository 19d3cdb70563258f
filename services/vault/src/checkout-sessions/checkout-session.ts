/**
 * A checkout session: stream `checkout-session-<uuid>`. It belongs to one merchant account for life; addressed under
 * another account it does not exist. It is open until `expiresAt`; card data may be attached (and replaced) while it
 * is open and unused; one transaction uses it, once. Its events hold the session's details as the merchant gave them
 * and, for the card, only what may be shown (vault card id, scheme, BIN, last four, expiry, BIN data) — never the
 * number or the security code, which live in the vault and, sealed, in the slice's secrets table. The card may be
 * the buyer's own, typed into the secure fields (the session's: removed from the vault when replaced or abandoned),
 * or a payment method the merchant stored, chosen with its security code typed again (never the session's to remove).
 */
import { DomainError, type Decider } from '@switchyard/decider';
import type { Airline, CartItem, CheckoutSessionBuyer } from '@switchyard/contracts';

/** What the merchant says about the checkout, as given (wire objects kept whole). */
export interface CheckoutSessionDetails {
  readonly cartItems: readonly CartItem[] | null;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly buyer: CheckoutSessionBuyer | null;
  readonly airline: Airline | null;
  readonly amount: number | null;
  readonly currency: string | null;
  readonly paymentServiceId: string | null;
}

/** The attached card as it may be shown: the vault holds the number under `cardId`. */
export interface CheckoutSessionCard {
  readonly cardId: string;
  readonly scheme: string | null;
  readonly bin: string;
  readonly last4: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly fingerprint: string;
  readonly cardType: string | null;
  readonly issuerCountry: string | null;
  readonly issuerName: string | null;
  /** True: `cardId` is a stored payment method's id, the session holds its code only. Absent: the session's card. */
  readonly storedPaymentMethod?: true;
}

interface Owner {
  readonly id: string;
  readonly merchantAccountId: string;
}

export type CheckoutSessionEvent =
  | {
      readonly type: 'CheckoutSessionCreated';
      readonly data: Owner & CheckoutSessionDetails & { readonly expiresAt: string; readonly at: string };
    }
  /** `changes`: the details the update gave; `expiresAt` when it set a new expiry. */
  | {
      readonly type: 'CheckoutSessionUpdated';
      readonly data: Owner & {
        readonly changes: Partial<CheckoutSessionDetails>;
        readonly expiresAt?: string;
        readonly at: string;
      };
    }
  | { readonly type: 'CheckoutSessionDeleted'; readonly data: Owner & { readonly at: string } }
  /**
   * `replacedCardId`: the session's own card attached before, now removed from the vault. `replacedPaymentMethodId`:
   * the stored payment method attached before, whose security code is forgotten (the method stays).
   */
  | {
      readonly type: 'CheckoutSessionCardAttached';
      readonly data: Owner & {
        readonly card: CheckoutSessionCard;
        readonly replacedCardId: string | null;
        readonly replacedPaymentMethodId?: string;
        readonly at: string;
      };
    }
  | {
      readonly type: 'CheckoutSessionUsed';
      readonly data: Owner & { readonly transactionId: string; readonly cardId: string; readonly at: string };
    };

interface CommandMetadata {
  readonly now: string;
}

export type CheckoutSessionCommand =
  | {
      readonly type: 'CreateCheckoutSession';
      readonly data: Owner & { readonly details: CheckoutSessionDetails; readonly expiresAt: string };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'UpdateCheckoutSession';
      readonly data: Owner & { readonly changes: Partial<CheckoutSessionDetails>; readonly expiresAt?: string };
      readonly metadata: CommandMetadata;
    }
  | { readonly type: 'DeleteCheckoutSession'; readonly data: Owner; readonly metadata: CommandMetadata }
  /** From the buyer's browser: no merchant account, the session's own applies. */
  | {
      readonly type: 'AttachCard';
      readonly data: { readonly id: string; readonly card: CheckoutSessionCard };
      readonly metadata: CommandMetadata;
    }
  /** `forStoring`: the card is to become a stored payment method, which a stored payment method already is. */
  | {
      readonly type: 'UseCheckoutSession';
      readonly data: Owner & { readonly transactionId: string; readonly forStoring?: true };
      readonly metadata: CommandMetadata;
    };

export type CheckoutSessionState =
  | { readonly status: 'absent' }
  /** `usedCardId`: the card a transaction took before the session was deleted (the transaction's, not the session's). */
  | {
      readonly status: 'deleted';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly usedCardId: string | null;
    }
  | {
      readonly status: 'open';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly expiresAt: string;
      readonly cardId: string | null;
      readonly cardIsStoredPaymentMethod: boolean;
      /** Set once a transaction used the session. */
      readonly usedBy: string | null;
    };

export type CheckoutSessionErrorCode =
  | 'checkout_session_not_found'
  | 'checkout_session_exists'
  | 'checkout_session_expired'
  | 'checkout_session_used'
  | 'checkout_session_without_card'
  | 'checkout_session_holds_payment_method';

export const checkoutSessionStream = (id: string): string => `checkout-session-${id}`;

const refusal = (code: CheckoutSessionErrorCode, message: string) =>
  new DomainError<CheckoutSessionErrorCode>(code, message);
const notFound = (id: string) => refusal('checkout_session_not_found', `no checkout session ${id}`);

/** Expired from the instant of `expiresAt` on. */
export const hasExpired = (expiresAt: string, now: string): boolean => Date.parse(now) >= Date.parse(expiresAt);

type OpenSession = Extract<CheckoutSessionState, { status: 'open' }>;

/** The session a command may act on: open, of the account when one is named. */
function openSession(state: CheckoutSessionState, id: string, merchantAccountId?: string): OpenSession {
  if (state.status !== 'open' || (merchantAccountId !== undefined && state.merchantAccountId !== merchantAccountId))
    throw notFound(id);
  return state;
}

/**
 * A session that may still change — open (of the account when one is named), neither used nor expired — or the
 * refusal. Exported so a caller can refuse before doing work the command would then throw away.
 */
export function usableSession(
  state: CheckoutSessionState,
  id: string,
  now: string,
  merchantAccountId?: string,
): OpenSession {
  const session = openSession(state, id, merchantAccountId);
  if (session.usedBy !== null)
    throw refusal('checkout_session_used', `checkout session ${session.id} was already used by a transaction`);
  if (hasExpired(session.expiresAt, now))
    throw refusal('checkout_session_expired', `checkout session ${session.id} expired at ${session.expiresAt}`);
  return session;
}

/** The vault card a transaction took from the session, if one did. */
export function usedCardOf(state: CheckoutSessionState): string | null {
  if (state.status === 'deleted') return state.usedCardId;
  return state.status === 'open' && state.usedBy !== null ? state.cardId : null;
}

export const checkoutSessionDecider: Decider<CheckoutSessionCommand, CheckoutSessionEvent, CheckoutSessionState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    const now = command.metadata.now;
    switch (command.type) {
      case 'CreateCheckoutSession': {
        if (state.status !== 'absent')
          throw refusal('checkout_session_exists', `checkout session ${command.data.id} already exists`);
        const { id, merchantAccountId, details, expiresAt } = command.data;
        return [{ type: 'CheckoutSessionCreated', data: { id, merchantAccountId, ...details, expiresAt, at: now } }];
      }
      case 'UpdateCheckoutSession': {
        const session = usableSession(state, command.data.id, now, command.data.merchantAccountId);
        const { changes, expiresAt } = command.data;
        return [
          {
            type: 'CheckoutSessionUpdated',
            data: {
              id: session.id,
              merchantAccountId: session.merchantAccountId,
              changes,
              ...(expiresAt !== undefined ? { expiresAt } : {}),
              at: now,
            },
          },
        ];
      }
      case 'DeleteCheckoutSession': {
        // Expired and used sessions may be deleted too: deleting only forgets.
        const session = openSession(state, command.data.id, command.data.merchantAccountId);
        return [
          {
            type: 'CheckoutSessionDeleted',
            data: { id: session.id, merchantAccountId: session.merchantAccountId, at: now },
          },
        ];
      }
      case 'AttachCard': {
        const session = usableSession(state, command.data.id, now);
        const replaced =
          session.cardIsStoredPaymentMethod && session.cardId !== null
            ? { replacedCardId: null, replacedPaymentMethodId: session.cardId }
            : { replacedCardId: session.cardId };
        const { id, merchantAccountId } = session;
        const card = command.data.card;
        return [{ type: 'CheckoutSessionCardAttached', data: { id, merchantAccountId, card, ...replaced, at: now } }];
      }
      case 'UseCheckoutSession': {
        const session = usableSession(state, command.data.id, now, command.data.merchantAccountId);
        if (session.cardId === null)
          throw refusal('checkout_session_without_card', `checkout session ${session.id} has no card attached`);
        if (command.data.forStoring && session.cardIsStoredPaymentMethod) {
          const message = `checkout session ${session.id} holds stored payment method ${session.cardId}`;
          throw refusal('checkout_session_holds_payment_method', message);
        }
        return [
          {
            type: 'CheckoutSessionUsed',
            data: {
              id: session.id,
              merchantAccountId: session.merchantAccountId,
              transactionId: command.data.transactionId,
              cardId: session.cardId,
              at: now,
            },
          },
        ];
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'CheckoutSessionCreated':
        return {
          status: 'open',
          id: event.data.id,
          merchantAccountId: event.data.merchantAccountId,
          expiresAt: event.data.expiresAt,
          cardId: null,
          cardIsStoredPaymentMethod: false,
          usedBy: null,
        };
      case 'CheckoutSessionUpdated':
        return state.status === 'open' && event.data.expiresAt !== undefined
          ? { ...state, expiresAt: event.data.expiresAt }
          : state;
      case 'CheckoutSessionDeleted':
        return {
          status: 'deleted',
          id: event.data.id,
          merchantAccountId: event.data.merchantAccountId,
          usedCardId: usedCardOf(state),
        };
      case 'CheckoutSessionCardAttached': {
        if (state.status !== 'open') return state;
        const { cardId, storedPaymentMethod } = event.data.card;
        return { ...state, cardId, cardIsStoredPaymentMethod: storedPaymentMethod === true };
      }
      case 'CheckoutSessionUsed':
        return state.status === 'open' ? { ...state, usedBy: event.data.transactionId } : state;
      default:
        return state;
    }
  },
};
