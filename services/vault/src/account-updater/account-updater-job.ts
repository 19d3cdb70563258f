/**
 * An account updater job: stream `account-updater-job-<uuid>`. It names the payment methods scheduled (one inquiry
 * each) — never a card number: the cards are read from the vault only for the call to the updater service — then
 * records the service's job id once the batch is submitted, and each inquiry's outcome once the payment method has
 * been updated with it. The job is completed with its last inquiry.
 */
import type { AccountUpdaterOutcome } from '@switchyard/connectors';
import { DomainError, type Decider } from '@switchyard/decider';

/**
 * The updater's outcome, or ours: the payment method's card was gone (deleted) before the job was submitted, or the
 * updater completed the job without answering for the card.
 */
export type AccountUpdaterInquiryOutcome = AccountUpdaterOutcome | 'payment_method_unavailable' | 'not_answered';

export interface AccountUpdaterInquiry {
  readonly id: string;
  readonly paymentMethodId: string;
}

export interface AccountUpdaterInquiryCompletion {
  readonly inquiryId: string;
  readonly outcome: AccountUpdaterInquiryOutcome;
}

export type AccountUpdaterJobEvent =
  | {
      readonly type: 'AccountUpdaterJobCreated';
      readonly data: {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly inquiries: readonly AccountUpdaterInquiry[];
        readonly at: string;
      };
    }
  | {
      readonly type: 'AccountUpdaterJobSubmitted';
      readonly data: { readonly id: string; readonly providerJobId: string; readonly at: string };
    }
  | {
      readonly type: 'AccountUpdaterInquiryCompleted';
      readonly data: {
        readonly id: string;
        readonly inquiryId: string;
        readonly paymentMethodId: string;
        readonly outcome: AccountUpdaterInquiryOutcome;
        readonly at: string;
      };
    }
  | { readonly type: 'AccountUpdaterJobCompleted'; readonly data: { readonly id: string; readonly at: string } };

interface CommandMetadata {
  readonly now: string;
}

export type AccountUpdaterJobCommand =
  | {
      readonly type: 'CreateAccountUpdaterJob';
      readonly data: {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly inquiries: readonly AccountUpdaterInquiry[];
      };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'RecordAccountUpdaterSubmission';
      readonly data: { readonly providerJobId: string };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'CompleteAccountUpdaterInquiries';
      readonly data: { readonly completions: readonly AccountUpdaterInquiryCompletion[] };
      readonly metadata: CommandMetadata;
    };

export type AccountUpdaterJobState =
  | { readonly status: 'absent' }
  | {
      /** `created`: not yet with the updater; `submitted`: waiting for its answer; `completed`: every inquiry answered. */
      readonly status: 'created' | 'submitted' | 'completed';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly inquiries: readonly AccountUpdaterInquiry[];
      readonly providerJobId: string | null;
      /** Outcomes by inquiry id, for the inquiries completed so far. */
      readonly outcomes: Readonly<Record<string, AccountUpdaterInquiryOutcome>>;
      readonly createdAt: string;
      readonly updatedAt: string;
    };

export type ExistingAccountUpdaterJob = Exclude<AccountUpdaterJobState, { status: 'absent' }>;

export const accountUpdaterJobStream = (id: string): string => `account-updater-job-${id}`;

const jobNotFound = () => new DomainError('account_updater_job_not_found', 'The resource could not be found');

export const accountUpdaterJobDecider: Decider<
  AccountUpdaterJobCommand,
  AccountUpdaterJobEvent,
  AccountUpdaterJobState
> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    const at = command.metadata.now;
    switch (command.type) {
      case 'CreateAccountUpdaterJob':
        if (state.status !== 'absent')
          throw new DomainError('account_updater_job_exists', `account updater job ${command.data.id} already exists`);
        if (command.data.inquiries.length === 0)
          throw new DomainError('account_updater_job_empty', 'an account updater job needs at least one inquiry');
        return [{ type: 'AccountUpdaterJobCreated', data: { ...command.data, at } }];
      case 'RecordAccountUpdaterSubmission':
        if (state.status === 'absent') throw jobNotFound();
        if (state.status === 'created')
          return [
            {
              type: 'AccountUpdaterJobSubmitted',
              data: { id: state.id, providerJobId: command.data.providerJobId, at },
            },
          ];
        // The same submission recorded twice (two processes, idempotent by our reference) changes nothing; another
        // job id for the same reference means the updater broke its promise.
        if (state.providerJobId !== null && state.providerJobId !== command.data.providerJobId) {
          throw new DomainError(
            'account_updater_job_submitted',
            `account updater job ${state.id} was submitted as ${state.providerJobId}`,
          );
        }
        return [];
      case 'CompleteAccountUpdaterInquiries': {
        if (state.status === 'absent') throw jobNotFound();
        const byId = new Map(state.inquiries.map((inquiry) => [inquiry.id, inquiry]));
        const completed = new Set(Object.keys(state.outcomes));
        const events: AccountUpdaterJobEvent[] = [];
        for (const { inquiryId, outcome } of command.data.completions) {
          const inquiry = byId.get(inquiryId);
          if (!inquiry)
            throw new DomainError(
              'account_updater_inquiry_not_found',
              `account updater job ${state.id} has no inquiry ${inquiryId}`,
            );
          // A replayed answer (after a crash) completes nothing twice.
          if (completed.has(inquiryId)) continue;
          completed.add(inquiryId);
          events.push({
            type: 'AccountUpdaterInquiryCompleted',
            data: { id: state.id, inquiryId, paymentMethodId: inquiry.paymentMethodId, outcome, at },
          });
        }
        if (events.length > 0 && completed.size === state.inquiries.length)
          events.push({ type: 'AccountUpdaterJobCompleted', data: { id: state.id, at } });
        return events;
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'AccountUpdaterJobCreated':
        return {
          status: 'created',
          id: event.data.id,
          merchantAccountId: event.data.merchantAccountId,
          inquiries: event.data.inquiries,
          providerJobId: null,
          outcomes: {},
          createdAt: event.data.at,
          updatedAt: event.data.at,
        };
      case 'AccountUpdaterJobSubmitted':
        return state.status === 'created'
          ? { ...state, status: 'submitted', providerJobId: event.data.providerJobId, updatedAt: event.data.at }
          : state;
      case 'AccountUpdaterInquiryCompleted':
        return state.status === 'absent'
          ? state
          : {
              ...state,
              outcomes: { ...state.outcomes, [event.data.inquiryId]: event.data.outcome },
              updatedAt: event.data.at,
            };
      case 'AccountUpdaterJobCompleted':
        return state.status === 'absent' ? state : { ...state, status: 'completed', updatedAt: event.data.at };
      default:
        return state;
    }
  },
};
