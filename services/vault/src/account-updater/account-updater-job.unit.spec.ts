/** The account updater job decider: given its events, when a command, then the events it decides or the error it throws. */
import {
  accountUpdaterJobDecider as decider,
  type AccountUpdaterJobCommand,
  type AccountUpdaterJobEvent,
} from './account-updater-job';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const id = '0b6c1f2e-0000-4000-8000-000000000001';
const first = { id: 'inq-1', paymentMethodId: 'pm-1' };
const second = { id: 'inq-2', paymentMethodId: 'pm-2' };

const given = (events: readonly AccountUpdaterJobEvent[]) => ({
  when: (command: AccountUpdaterJobCommand) =>
    decider.decide(command, events.reduce(decider.evolve, decider.initialState())),
});

const create = (inquiries = [first, second]): AccountUpdaterJobCommand => ({
  type: 'CreateAccountUpdaterJob',
  data: { id, merchantAccountId: 'shop-a', inquiries },
  metadata: { now },
});
const submit = (providerJobId = 'sim_au_job_1'): AccountUpdaterJobCommand => ({
  type: 'RecordAccountUpdaterSubmission',
  data: { providerJobId },
  metadata: { now: later },
});
const complete = (...completions: [string, string][]): AccountUpdaterJobCommand =>
  ({
    type: 'CompleteAccountUpdaterInquiries',
    data: { completions: completions.map(([inquiryId, outcome]) => ({ inquiryId, outcome })) },
    metadata: { now: later },
  }) as AccountUpdaterJobCommand;

const created: AccountUpdaterJobEvent = {
  type: 'AccountUpdaterJobCreated',
  data: { id, merchantAccountId: 'shop-a', inquiries: [first, second], at: now },
};
const submitted: AccountUpdaterJobEvent = {
  type: 'AccountUpdaterJobSubmitted',
  data: { id, providerJobId: 'sim_au_job_1', at: later },
};
const inquiryCompleted = (inquiryId: string, paymentMethodId: string, outcome: string): AccountUpdaterJobEvent =>
  ({
    type: 'AccountUpdaterInquiryCompleted',
    data: { id, inquiryId, paymentMethodId, outcome, at: later },
  }) as AccountUpdaterJobEvent;

describe('when no job exists', () => {
  it('creates it with its inquiries (payment method ids only)', () =>
    expect(given([]).when(create())).toEqual([created]));

  it('refuses a job without inquiries', () =>
    expect(() => given([]).when(create([]))).toThrow(expect.objectContaining({ code: 'account_updater_job_empty' })));

  it('knows no submission or completion', () => {
    expect(() => given([]).when(submit())).toThrow(expect.objectContaining({ code: 'account_updater_job_not_found' }));
    expect(() => given([]).when(complete(['inq-1', 'closed']))).toThrow(
      expect.objectContaining({ code: 'account_updater_job_not_found' }),
    );
  });
});

describe('when created', () => {
  it('refuses to be created again', () =>
    expect(() => given([created]).when(create())).toThrow(
      expect.objectContaining({ code: 'account_updater_job_exists' }),
    ));

  it('records the submission', () => expect(given([created]).when(submit())).toEqual([submitted]));

  it('completes an inquiry whose payment method is gone before submission', () =>
    expect(given([created]).when(complete(['inq-2', 'payment_method_unavailable']))).toEqual([
      inquiryCompleted('inq-2', 'pm-2', 'payment_method_unavailable'),
    ]));
});

describe('when submitted', () => {
  it('records the same submission again as nothing (idempotent by our reference)', () =>
    expect(given([created, submitted]).when(submit())).toEqual([]));

  it('refuses another job id for the same job', () =>
    expect(() => given([created, submitted]).when(submit('sim_au_job_2'))).toThrow(
      expect.objectContaining({ code: 'account_updater_job_submitted' }),
    ));

  it('completes inquiries one batch at a time, and the job with the last', () => {
    expect(given([created, submitted]).when(complete(['inq-1', 'updated_expiry']))).toEqual([
      inquiryCompleted('inq-1', 'pm-1', 'updated_expiry'),
    ]);
    expect(
      given([created, submitted, inquiryCompleted('inq-1', 'pm-1', 'updated_expiry')]).when(
        complete(['inq-2', 'closed']),
      ),
    ).toEqual([
      inquiryCompleted('inq-2', 'pm-2', 'closed'),
      { type: 'AccountUpdaterJobCompleted', data: { id, at: later } },
    ]);
  });

  it('completes nothing twice: a replayed answer after a crash adds no event', () => {
    const events = [created, submitted, inquiryCompleted('inq-1', 'pm-1', 'updated_expiry')];
    expect(given(events).when(complete(['inq-1', 'updated_expiry']))).toEqual([]);
    expect(given(events).when(complete(['inq-1', 'updated_expiry'], ['inq-2', 'no_change']))).toEqual([
      inquiryCompleted('inq-2', 'pm-2', 'no_change'),
      { type: 'AccountUpdaterJobCompleted', data: { id, at: later } },
    ]);
  });

  it('refuses an inquiry it does not have', () =>
    expect(() => given([created, submitted]).when(complete(['inq-9', 'closed']))).toThrow(
      expect.objectContaining({ code: 'account_updater_inquiry_not_found' }),
    ));
});

describe('the folded state', () => {
  it('follows created → submitted → completed with each outcome', () => {
    const events = [
      created,
      submitted,
      inquiryCompleted('inq-1', 'pm-1', 'updated_number'),
      inquiryCompleted('inq-2', 'pm-2', 'closed'),
      { type: 'AccountUpdaterJobCompleted', data: { id, at: later } } as const,
    ];
    expect(events.slice(0, 2).reduce(decider.evolve, decider.initialState())).toMatchObject({
      status: 'submitted',
      providerJobId: 'sim_au_job_1',
      outcomes: {},
    });
    expect(events.reduce(decider.evolve, decider.initialState())).toMatchObject({
      status: 'completed',
      outcomes: { 'inq-1': 'updated_number', 'inq-2': 'closed' },
      createdAt: now,
      updatedAt: later,
    });
  });
});
