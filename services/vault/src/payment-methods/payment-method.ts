/**
 * A stored payment method: stream `payment-method-<uuid>` (the id is its card's id in the vault). It belongs to one
 * merchant account for life. Its events hold only what may be shown of the card (scheme, BIN, last four, expiry,
 * fingerprint) — never the number, which lives encrypted in the card vault under the same id.
 *
 * Statuses (spec, Events rule 3): stored through the API → `succeeded`; stored during a purchase (`store: true`) →
 * `processing` until the provider's vault-token notification arrives (→ `succeeded`), or `failed` once the wait is
 * over. Only a `succeeded` method can pay.
 */
import { DomainError, type Decider } from '@switchyard/decider';

export interface CardShown {
  readonly scheme: string | null;
  readonly bin: string;
  readonly last4: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly fingerprint: string;
}

export interface StoredPaymentMethod extends CardShown {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly method: 'card';
  readonly buyerId: string | null;
  readonly externalIdentifier: string | null;
  /** How it was stored: through `POST /payment-methods` (or a checkout session), or by a purchase with `store: true`. */
  readonly source: 'api' | 'transaction';
  /** The purchase that stored it, and the connection asked to vault it (source `transaction`). */
  readonly transactionId: string | null;
  readonly paymentServiceId: string | null;
  /** From BIN data when known. */
  readonly cardType: string | null;
  readonly cardIssuerName: string | null;
  readonly country: string | null;
}

interface At {
  readonly at: string;
}

export type AccountUpdateOutcome = 'updated_expiry' | 'updated_number' | 'no_change' | 'closed' | 'contact_cardholder';

export type PaymentMethodEvent =
  | {
      readonly type: 'PaymentMethodStored';
      readonly data: StoredPaymentMethod & { readonly status: 'succeeded' | 'processing' } & At;
    }
  | {
      readonly type: 'PaymentMethodVaultTokenReceived';
      readonly data: { readonly id: string; readonly paymentServiceId: string } & At;
    }
  | {
      readonly type: 'PaymentMethodVaultTokenTimedOut';
      readonly data: { readonly id: string; readonly waitedMs: number } & At;
    }
  /** An account updater answer: the card as it is now (a replaced number changes what is shown, never the id). */
  | {
      readonly type: 'PaymentMethodAccountUpdated';
      readonly data: {
        readonly id: string;
        readonly jobId: string;
        readonly outcome: AccountUpdateOutcome;
        readonly card?: CardShown;
      } & At;
    }
  | {
      readonly type: 'PaymentMethodDeleted';
      readonly data: {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly reason: 'request' | 'buyer_deleted';
      } & At;
    };

interface Metadata {
  readonly now: string;
}

export type PaymentMethodCommand =
  | {
      readonly type: 'StorePaymentMethod';
      readonly data: StoredPaymentMethod & { readonly status: 'succeeded' | 'processing' };
      readonly metadata: Metadata;
    }
  | {
      readonly type: 'ReceiveVaultToken';
      readonly data: { readonly paymentServiceId: string };
      readonly metadata: Metadata;
    }
  | { readonly type: 'TimeOutVaultToken'; readonly data: { readonly waitedMs: number }; readonly metadata: Metadata }
  | {
      readonly type: 'ApplyAccountUpdate';
      readonly data: { readonly jobId: string; readonly outcome: AccountUpdateOutcome; readonly card?: CardShown };
      readonly metadata: Metadata;
    }
  | {
      readonly type: 'DeletePaymentMethod';
      readonly data: { readonly merchantAccountId: string; readonly reason: 'request' | 'buyer_deleted' };
      readonly metadata: Metadata;
    };

export type PaymentMethodState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | {
      readonly status: 'processing' | 'succeeded' | 'failed';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly accountUpdateJobs: readonly string[];
    };

export const paymentMethodStream = (id: string): string => `payment-method-${id}`;

export const paymentMethodNotFound = () =>
  new DomainError('payment_method_not_found', 'The resource could not be found');

export const paymentMethodDecider: Decider<PaymentMethodCommand, PaymentMethodEvent, PaymentMethodState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    const at = command.metadata.now;
    switch (command.type) {
      case 'StorePaymentMethod':
        if (state.status !== 'absent')
          throw new DomainError('payment_method_exists', `payment method ${command.data.id} already exists`);
        return [{ type: 'PaymentMethodStored', data: { ...command.data, at } }];
      case 'ReceiveVaultToken':
        // A token for a method that failed meanwhile, or one already confirmed, changes nothing.
        if (state.status !== 'processing') return [];
        return [
          {
            type: 'PaymentMethodVaultTokenReceived',
            data: { id: state.id, paymentServiceId: command.data.paymentServiceId, at },
          },
        ];
      case 'TimeOutVaultToken':
        if (state.status !== 'processing') return [];
        return [
          { type: 'PaymentMethodVaultTokenTimedOut', data: { id: state.id, waitedMs: command.data.waitedMs, at } },
        ];
      case 'ApplyAccountUpdate':
        // Idempotent per job: a replayed answer (a crash between the update and the job's record) is not applied twice.
        if (
          state.status === 'absent' ||
          state.status === 'deleted' ||
          state.accountUpdateJobs.includes(command.data.jobId)
        )
          return [];
        return [{ type: 'PaymentMethodAccountUpdated', data: { id: state.id, ...command.data, at } }];
      case 'DeletePaymentMethod':
        if (
          state.status === 'absent' ||
          state.status === 'deleted' ||
          state.merchantAccountId !== command.data.merchantAccountId
        )
          throw paymentMethodNotFound();
        return [
          {
            type: 'PaymentMethodDeleted',
            data: { id: state.id, merchantAccountId: state.merchantAccountId, reason: command.data.reason, at },
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
      case 'PaymentMethodStored':
        return {
          status: event.data.status,
          id: event.data.id,
          merchantAccountId: event.data.merchantAccountId,
          accountUpdateJobs: [],
        };
      case 'PaymentMethodVaultTokenReceived':
        return state.status === 'processing' ? { ...state, status: 'succeeded' } : state;
      case 'PaymentMethodVaultTokenTimedOut':
        return state.status === 'processing' ? { ...state, status: 'failed' } : state;
      case 'PaymentMethodAccountUpdated':
        return state.status === 'absent' || state.status === 'deleted'
          ? state
          : { ...state, accountUpdateJobs: [...state.accountUpdateJobs, event.data.jobId] };
      case 'PaymentMethodDeleted':
        return { status: 'deleted' };
      default:
        return state;
    }
  },
};
