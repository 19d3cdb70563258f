/**
 * A job's claim on a payment method: stream `account-updater-claim-<payment method id>`. A payment method waits in at
 * most one open inquiry; a read-model check alone would let two racing requests (or two processes) both schedule it,
 * whereas the append to this stream expects the revision it read, so exactly one of them holds it.
 *
 * The claim is taken before the job is created and needs no release: it stops counting once its inquiry is completed
 * on the job's stream, or when the job was never created (a request that died between the two appends) and the claim
 * is older than the grace period. The next job then takes it over (`replacing`). `AccountUpdater.claim` judges that.
 */
import type { Decider } from '@switchyard/decider';

export interface AccountUpdaterClaimHolder {
  readonly jobId: string;
  readonly inquiryId: string;
  /** When it was claimed (ISO-8601). */
  readonly at: string;
}

export type AccountUpdaterClaimEvent = {
  readonly type: 'AccountUpdaterPaymentMethodClaimed';
  readonly data: {
    readonly paymentMethodId: string;
    readonly merchantAccountId: string;
    readonly jobId: string;
    readonly inquiryId: string;
    readonly at: string;
  };
};

export type AccountUpdaterClaimCommand = {
  readonly type: 'ClaimPaymentMethodForUpdate';
  readonly data: {
    readonly paymentMethodId: string;
    readonly merchantAccountId: string;
    readonly jobId: string;
    readonly inquiryId: string;
    /** The job of a claim the caller found no longer counting (its inquiry completed, or its job never created). */
    readonly replacing: string | null;
  };
  readonly metadata: { readonly now: string };
};

export type AccountUpdaterClaimState =
  | { readonly status: 'free' }
  | ({ readonly status: 'held' } & AccountUpdaterClaimHolder);

export const accountUpdaterClaimStream = (paymentMethodId: string): string =>
  `account-updater-claim-${paymentMethodId}`;

/**
 * Claims a free payment method, or takes over the claim the caller judged stale. Held by another job: no event — the
 * caller reads the resulting state to learn whether it holds the claim (the payment method is then skipped).
 */
export const accountUpdaterClaimDecider: Decider<
  AccountUpdaterClaimCommand,
  AccountUpdaterClaimEvent,
  AccountUpdaterClaimState
> = {
  initialState: () => ({ status: 'free' }),
  decide(command, state) {
    const { replacing, ...data } = command.data;
    const free = state.status === 'free' || (replacing !== null && state.jobId === replacing);
    if (!free) return [];
    return [{ type: 'AccountUpdaterPaymentMethodClaimed', data: { ...data, at: command.metadata.now } }];
  },
  evolve(_state, event) {
    return { status: 'held', jobId: event.data.jobId, inquiryId: event.data.inquiryId, at: event.data.at };
  },
};

export const holds = (state: AccountUpdaterClaimState, jobId: string): boolean =>
  state.status === 'held' && state.jobId === jobId;
