/** A payment method's account updater claim: given its events, when a job claims it, then the claim or nothing. */
import {
  accountUpdaterClaimDecider as decider,
  holds,
  type AccountUpdaterClaimCommand,
  type AccountUpdaterClaimEvent,
} from './account-updater-claim';

const now = '2026-01-01T00:00:00.000Z';

const claim = (jobId: string, replacing: string | null = null): AccountUpdaterClaimCommand => ({
  type: 'ClaimPaymentMethodForUpdate',
  data: { paymentMethodId: 'pm-1', merchantAccountId: 'shop-a', jobId, inquiryId: `inq-of-${jobId}`, replacing },
  metadata: { now },
});
const claimed = (jobId: string): AccountUpdaterClaimEvent => ({
  type: 'AccountUpdaterPaymentMethodClaimed',
  data: { paymentMethodId: 'pm-1', merchantAccountId: 'shop-a', jobId, inquiryId: `inq-of-${jobId}`, at: now },
});

const given = (events: readonly AccountUpdaterClaimEvent[]) => ({
  when: (command: AccountUpdaterClaimCommand) =>
    decider.decide(command, events.reduce(decider.evolve, decider.initialState())),
});

describe('when free', () => {
  it('is claimed by the first job', () => expect(given([]).when(claim('job-1'))).toEqual([claimed('job-1')]));
});

describe('when held', () => {
  it('is not claimed by another job: no event', () =>
    expect(given([claimed('job-1')]).when(claim('job-2'))).toEqual([]));

  it('is not taken over for a holder other than the one judged stale', () =>
    expect(given([claimed('job-1')]).when(claim('job-3', 'job-2'))).toEqual([]));

  it('is taken over from the holder the caller judged stale', () =>
    expect(given([claimed('job-1')]).when(claim('job-2', 'job-1'))).toEqual([claimed('job-2')]));

  it('tells who holds it', () => {
    const state = [claimed('job-1'), claimed('job-2')].reduce(decider.evolve, decider.initialState());
    expect(holds(state, 'job-2')).toBe(true);
    expect(holds(state, 'job-1')).toBe(false);
    expect(holds(decider.initialState(), 'job-1')).toBe(false);
  });
});
