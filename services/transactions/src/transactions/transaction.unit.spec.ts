import { DomainError } from '@switchyard/decider';
import {
  capturedAmount,
  claimedCaptureAmount,
  claimedRefundAmount,
  refundedAmount,
  type Minor,
  type TrackingEntry,
  type TransactionEvent,
} from './transaction';
import {
  captureLimit,
  transaction,
  type CaptureSettings,
  type TransactionCommand,
  type TransactionErrorCode,
} from './transaction.decide';

import {
  at,
  authResult,
  command,
  complete,
  create,
  createData,
  decline,
  failure,
  fold,
  given,
  present,
  succeededResult,
} from './transaction.test-kit';

const single: CaptureSettings = { multipleCapturesEnabled: false };
const multiple: CaptureSettings = { multipleCapturesEnabled: true };
const capture = (
  captureId: string,
  amount?: Minor,
  options: { final?: boolean; tracking?: TrackingEntry[]; settings?: CaptureSettings } = {},
) =>
  command('CaptureTransaction', {
    captureId,
    ...(amount !== undefined ? { amount } : {}),
    ...(options.final !== undefined ? { final: options.final } : {}),
    ...(options.tracking !== undefined ? { tracking: options.tracking } : {}),
    settings: options.settings ?? single,
  });
const captureResult = (captureId: string, outcome: 'succeeded' | 'declined' | 'failed') =>
  command(
    'RecordCaptureResult',
    outcome === 'succeeded'
      ? { captureId, outcome }
      : { captureId, outcome, error: outcome === 'declined' ? decline : failure },
  );
const voidTx = (voidId = 'v1') => command('VoidTransaction', { voidId });
const voidResult = (outcome: 'succeeded' | 'declined' | 'failed', voidId = 'v1') =>
  command('RecordVoidResult', outcome === 'succeeded' ? { voidId, outcome } : { voidId, outcome, error: failure });
const refund = (refundId: string, amount?: Minor) =>
  command('RefundTransaction', { refundId, ...(amount !== undefined ? { amount } : {}) });
const refundResult = (refundId: string, outcome: 'succeeded' | 'declined' | 'failed') =>
  command(
    'RecordRefundResult',
    outcome === 'succeeded'
      ? { refundId, outcome }
      : { refundId, outcome, error: outcome === 'declined' ? decline : failure },
  );
const increment = (amount: Minor, outcome: 'succeeded' | 'failed' | 'pending') =>
  command('RecordAuthorizationIncrement', { incrementId: 'i1', amount, outcome });
const cancel = command('CancelTransaction', {});
const sync = command('SyncTransaction', {});
const tracking = (n: number): TrackingEntry[] =>
  Array.from({ length: n }, (_, i) => ({ number: `1Z${i}`, carrier: 'UPS' }));

// ---- events --------------------------------------------------------------------------------------------------
const created = (intent: 'authorize' | 'capture' = 'authorize', amount: Minor = 10000): TransactionEvent => ({
  type: 'TransactionCreated',
  data: { ...createData(intent, amount), at },
});
const completed: TransactionEvent = { type: 'CreateRequestCompleted', data: { reason: 'responded', at } };
const authorized = (authorizedAmount: Minor = 10000): TransactionEvent => ({
  type: 'AuthorizationSucceeded',
  data: {
    authorizedAmount,
    paymentServiceTransactionId: 'psp-1',
    avsResponseCode: 'match',
    cvvResponseCode: 'match',
    at,
  },
});
const captureRequested = (
  captureId: string,
  amount: Minor,
  final = false,
  entries: TrackingEntry[] = [],
): TransactionEvent => ({
  type: 'CaptureRequested',
  data: { captureId, amount, final, tracking: entries, at },
});
const captureSucceeded = (captureId: string): TransactionEvent => ({
  type: 'CaptureSucceeded',
  data: { captureId, at },
});
const captureDeclined = (captureId: string): TransactionEvent => ({
  type: 'CaptureDeclined',
  data: { captureId, ...decline, at },
});
const refundRequested = (refundId: string, amount: Minor): TransactionEvent => ({
  type: 'RefundRequested',
  data: { refundId, amount, at },
});
const refundSucceeded = (
  refundId: string,
  via: 'payment_service' | 'settlement' = 'payment_service',
): TransactionEvent => ({ type: 'RefundSucceeded', data: { refundId, via, at } });

const processing = [created()];
const authorizedFor10000 = [created(), completed, authorized()];
const captured10000 = [...authorizedFor10000, captureRequested('c1', 10000, true), captureSucceeded('c1')];

/** Decides each command on the state the accepted ones before it produced; returns how many were accepted. */
function foldSequentially(start: readonly TransactionEvent[], commands: readonly TransactionCommand[]) {
  let events = [...start];
  let accepted = 0;
  const refusals = new Set<string>();
  for (const next of commands) {
    try {
      events = [...events, ...transaction.decide(next, fold(events))];
      accepted += 1;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      refusals.add(error.code);
    }
  }
  return { accepted, refusals, state: present(fold(events)) };
}

// ==============================================================================================================
describe('when no transaction exists', () => {
  it('creates it in processing, with the create request running', () => {
    given([]).when(create()).then([created()]);
    expect(given([]).when(create()).thenState()).toMatchObject({
      status: 'processing',
      createRequestRunning: true,
      authorizedAmount: 0,
      notificationHeld: [],
    });
  });

  it('refuses an amount that is not a positive integer of minor units', () => {
    given([]).when(create('authorize', 0)).thenThrows('invalid_amount');
    given([]).when(create('authorize', 10.5)).thenThrows('invalid_amount');
    given([]).when(create('authorize', -1)).thenThrows('invalid_amount');
  });

  it('refuses a currency that is not an ISO code', () =>
    given([])
      .when(command('CreateTransaction', { ...createData(), currency: 'usd' }))
      .thenThrows('invalid_currency'));

  it.each([
    ['an authorization result', succeededResult()],
    ['a completion', complete()],
    ['a cancel', cancel],
    ['a capture', capture('c1', 100)],
    ['a void', voidTx()],
    ['a refund', refund('r1', 100)],
    ['an increment', increment(100, 'succeeded')],
    ['a sync', sync],
  ])('finds nothing for %s', (_name, next) => given([]).when(next).thenThrows('transaction_not_found'));
});

describe('when processing (create request still running)', () => {
  it('refuses to create it again', () => given(processing).when(create()).thenThrows('transaction_exists'));

  it('moves to authorization_succeeded when the authorization succeeds, keeping the amounts and codes', () => {
    given(processing).when(succeededResult()).then([authorized()]);
    expect(given(processing).when(succeededResult(8000)).thenState()).toMatchObject({
      status: 'authorization_succeeded',
      authorizedAmount: 8000,
      avsResponseCode: 'match',
      cvvResponseCode: 'match',
      paymentServiceTransactionId: 'psp-1',
    });
  });

  it('moves to authorization_declined when the create request is declined', () => {
    given(processing)
      .when(authResult({ outcome: 'declined', error: decline }))
      .then([{ type: 'AuthorizationDeclined', data: { ...decline, at } }]);
    expect(
      given(processing)
        .when(authResult({ outcome: 'declined', error: decline }))
        .thenState(),
    ).toMatchObject({ status: 'authorization_declined', errorCode: 'insufficient_funds' });
  });

  it('keeps the AVS and CVV results a decline reports (a failure has none)', () => {
    const declined = authResult({
      outcome: 'declined',
      error: decline,
      avsResponseCode: 'no_match',
      cvvResponseCode: 'match',
    });
    given(processing)
      .when(declined)
      .then([
        {
          type: 'AuthorizationDeclined',
          data: { ...decline, avsResponseCode: 'no_match', cvvResponseCode: 'match', at },
        },
      ]);
    expect(given(processing).when(declined).thenState()).toMatchObject({
      status: 'authorization_declined',
      avsResponseCode: 'no_match',
      cvvResponseCode: 'match',
    });
    given(processing)
      .when(authResult({ outcome: 'failed', error: failure, avsResponseCode: 'match' }))
      .then([{ type: 'AuthorizationFailed', data: { ...failure, at } }]);
  });

  it('moves to authorization_failed when the create request fails', () =>
    expect(
      given(processing)
        .when(authResult({ outcome: 'failed', error: failure }))
        .thenState().status,
    ).toBe('authorization_failed'));

  it('stays processing on a pending result', () => {
    given(processing)
      .when(authResult({ outcome: 'pending' }))
      .then([{ type: 'AuthorizationPending', data: { at } }]);
    expect(
      given(processing)
        .when(authResult({ outcome: 'pending' }))
        .thenState().status,
    ).toBe('processing');
  });

  it('moves to buyer_approval_pending when the buyer must approve', () => {
    const approval = authResult({ outcome: 'buyer_approval_required', approvalUrl: 'https://psp.example/approve' });
    given(processing)
      .when(approval)
      .then([{ type: 'BuyerApprovalRequired', data: { approvalUrl: 'https://psp.example/approve', at } }]);
    expect(given(processing).when(approval).thenState().status).toBe('buyer_approval_pending');
  });

  it('holds a failure notification instead of applying it', () => {
    const notified = authResult({ outcome: 'failed', error: failure }, 'notification');
    given(processing)
      .when(notified)
      .then([{ type: 'FailureNotificationHeld', data: { kind: 'failed', error: failure, at } }]);
    expect(given(processing).when(notified).thenState()).toMatchObject({
      status: 'processing',
      notificationHeld: [{ kind: 'failed', error: failure }],
    });
  });

  it('applies a held failure when the create request completes', () => {
    const held: TransactionEvent = { type: 'FailureNotificationHeld', data: { kind: 'failed', error: failure, at } };
    given([...processing, held])
      .when(complete())
      .then([completed, { type: 'AuthorizationFailed', data: { ...failure, at } }]);
    expect(
      given([...processing, held])
        .when(complete())
        .thenState(),
    ).toMatchObject({ status: 'authorization_failed', createRequestRunning: false, notificationHeld: [] });
  });

  it('applies a held decline as a decline', () => {
    const held: TransactionEvent = { type: 'FailureNotificationHeld', data: { kind: 'declined', error: decline, at } };
    expect(
      given([...processing, held])
        .when(complete())
        .thenState().status,
    ).toBe('authorization_declined');
  });

  it('never follows a held failure with a contradicting success for the same create', () => {
    const { state } = foldSequentially(processing, [
      authResult({ outcome: 'declined', error: decline }, 'notification'),
      succeededResult(),
      complete(),
    ]);
    expect(state.status).toBe('authorization_declined');
    const held: TransactionEvent = { type: 'FailureNotificationHeld', data: { kind: 'declined', error: decline, at } };
    given([...processing, held])
      .when(succeededResult())
      .then([]);
  });

  it('records completion once; a repeated completion changes nothing', () => {
    given(processing).when(complete()).then([completed]);
    given([...processing, completed])
      .when(complete('hold_expired'))
      .then([]);
  });

  it('applies a failure notification at once after the create request completed', () =>
    given([...processing, completed])
      .when(authResult({ outcome: 'failed', error: failure }, 'notification'))
      .then([{ type: 'AuthorizationFailed', data: { ...failure, at } }]));

  it('cancels into authorization_failed', () => {
    given(processing)
      .when(cancel)
      .then([{ type: 'TransactionCanceled', data: { at } }]);
    expect(given(processing).when(cancel).thenState()).toMatchObject({
      status: 'authorization_failed',
      errorCode: 'canceled',
    });
  });

  it('refuses captures, voids, refunds and increments before authorization', () => {
    given(processing).when(capture('c1', 100)).thenThrows('transaction_not_authorized');
    given(processing).when(voidTx()).thenThrows('transaction_not_authorized');
    given(processing).when(refund('r1', 100)).thenThrows('transaction_not_captured');
    given(processing).when(increment(100, 'succeeded')).thenThrows('increment_not_allowed');
  });

  it('syncs', () =>
    given(processing)
      .when(sync)
      .then([{ type: 'TransactionSyncRequested', data: { at } }]));
});

describe('when buyer approval is pending', () => {
  const pendingApproval = [...processing, { type: 'BuyerApprovalRequired', data: { at } } as TransactionEvent];
  const held: TransactionEvent = { type: 'FailureNotificationHeld', data: { kind: 'failed', error: failure, at } };

  it('keeps holding failure notifications until the buyer returns', () => {
    given(pendingApproval)
      .when(authResult({ outcome: 'failed', error: failure }, 'notification'))
      .then([held]);
    expect(
      given([...pendingApproval, held])
        .when(complete('buyer_returned'))
        .thenState().status,
    ).toBe('authorization_failed');
  });

  it('applies held failures when the hold window runs out (abandoned redirect)', () =>
    expect(
      given([...pendingApproval, held])
        .when(complete('hold_expired'))
        .thenState().status,
    ).toBe('authorization_failed'));

  it('moves to authorization_succeeded when the buyer approves', () =>
    expect(given(pendingApproval).when(succeededResult()).thenState().status).toBe('authorization_succeeded'));

  it('ignores a repeated approval request', () =>
    given(pendingApproval)
      .when(authResult({ outcome: 'buyer_approval_required' }))
      .then([]));

  it('stays where it is on a pending result', () =>
    expect(
      given(pendingApproval)
        .when(authResult({ outcome: 'pending' }))
        .thenState().status,
    ).toBe('buyer_approval_pending'));

  it('can be canceled', () =>
    expect(given(pendingApproval).when(cancel).thenState().status).toBe('authorization_failed'));
});

describe('when an intent=capture transaction succeeds', () => {
  const sale = [created('capture'), completed];

  it('is captured in full by one direct, final capture', () =>
    expect(given(sale).when(succeededResult()).thenState()).toMatchObject({
      status: 'capture_succeeded',
      captures: [{ id: 't1', amount: 10000, final: true, direct: true, status: 'succeeded' }],
    }));

  it('refuses tracking, which applies to delayed captures only', () =>
    given([...sale, authorized()])
      .when(capture('c1', 100, { tracking: tracking(1), settings: multiple }))
      .thenThrows('tracking_not_allowed'));

  it('refuses a further capture', () =>
    given([...sale, authorized()])
      .when(capture('c1', 100, { settings: multiple }))
      .thenThrows('authorization_closed'));

  it('can be refunded', () =>
    given([...sale, authorized()])
      .when(refund('r1'))
      .then([refundRequested('r1', 10000)]));
});

describe('when authorization succeeded', () => {
  it('requests a partial capture, which is pending', () => {
    given(authorizedFor10000)
      .when(capture('c1', 4000))
      .then([captureRequested('c1', 4000, true)]);
    expect(given(authorizedFor10000).when(capture('c1', 4000)).thenState().status).toBe('capture_pending');
  });

  it('captures the remaining authorizable amount when the amount is omitted', () =>
    given(authorizedFor10000)
      .when(capture('c1'))
      .then([captureRequested('c1', 10000, true)]));

  it('keeps the balance open when final is omitted and multiple captures are on', () =>
    given(authorizedFor10000)
      .when(capture('c1', 4000, { settings: multiple }))
      .then([captureRequested('c1', 4000, false)]));

  it('refuses a capture above the authorized amount', () =>
    given(authorizedFor10000).when(capture('c1', 10001)).thenThrows('capture_limit_exceeded'));

  it('refuses a capture amount that is not a positive integer', () => {
    given(authorizedFor10000).when(capture('c1', 0)).thenThrows('invalid_amount');
    given(authorizedFor10000).when(capture('c1', 99.5)).thenThrows('invalid_amount');
  });

  it('allows over-capture up to authorized + over_capture_amount', () => {
    const settings: CaptureSettings = { multipleCapturesEnabled: false, overCapture: { amount: 500 } };
    given(authorizedFor10000)
      .when(capture('c1', 10500, { settings }))
      .then([captureRequested('c1', 10500, true)]);
    given(authorizedFor10000)
      .when(capture('c1', 10501, { settings }))
      .thenThrows('capture_limit_exceeded');
  });

  it('allows over-capture up to authorized × (1 + over_capture_percentage / 100)', () => {
    const settings: CaptureSettings = { multipleCapturesEnabled: false, overCapture: { percentage: 10 } };
    given(authorizedFor10000)
      .when(capture('c1', 11000, { settings }))
      .then([captureRequested('c1', 11000, true)]);
    given(authorizedFor10000)
      .when(capture('c1', 11001, { settings }))
      .thenThrows('capture_limit_exceeded');
  });

  it('takes the larger limit when both over-capture settings are configured, rounding the percentage down', () => {
    expect(captureLimit(10000, { multipleCapturesEnabled: false, overCapture: { amount: 2000, percentage: 10 } })).toBe(
      12000,
    );
    expect(captureLimit(10000, { multipleCapturesEnabled: false, overCapture: { amount: 500, percentage: 10 } })).toBe(
      11000,
    );
    expect(captureLimit(999, { multipleCapturesEnabled: false, overCapture: { percentage: 15 } })).toBe(1148);
    expect(captureLimit(10000, { multipleCapturesEnabled: false })).toBe(10000);
  });

  it('stores up to 5 tracking entries with the capture', () => {
    const entries = [...tracking(4), { number: '9400', carrier: 'USPS', url: 'https://tools.usps.com/9400' }];
    given(authorizedFor10000)
      .when(capture('c1', 1000, { tracking: entries }))
      .then([captureRequested('c1', 1000, true, entries)]);
    expect(
      given(authorizedFor10000)
        .when(capture('c1', 1000, { tracking: entries }))
        .thenState().captures[0]?.tracking,
    ).toEqual(entries);
  });

  it('refuses more than 5 tracking entries', () =>
    given(authorizedFor10000)
      .when(capture('c1', 1000, { tracking: tracking(6) }))
      .thenThrows('too_many_tracking_entries'));

  it('refuses a tracking entry without number or carrier', () =>
    given(authorizedFor10000)
      .when(capture('c1', 1000, { tracking: [{ number: '1Z', carrier: ' ' }] }))
      .thenThrows('invalid_tracking_entry'));

  it('voids into authorization_void_pending', () => {
    given(authorizedFor10000)
      .when(voidTx())
      .then([{ type: 'VoidRequested', data: { voidId: 'v1', at } }]);
    expect(given(authorizedFor10000).when(voidTx()).thenState().status).toBe('authorization_void_pending');
  });

  it('refuses a cancel once authorized', () => given(authorizedFor10000).when(cancel).thenThrows('cancel_not_allowed'));

  it('raises authorized_amount when an increment succeeds, and captures up to the new amount', () => {
    given(authorizedFor10000)
      .when(increment(2000, 'succeeded'))
      .then([
        { type: 'AuthorizationIncremented', data: { incrementId: 'i1', amount: 2000, authorizedAmount: 12000, at } },
      ]);
    const raised = given(authorizedFor10000).when(increment(2000, 'succeeded')).events();
    expect(given([...authorizedFor10000, ...raised]).state()).toMatchObject({
      status: 'authorization_succeeded',
      authorizedAmount: 12000,
    });
    given([...authorizedFor10000, ...raised])
      .when(capture('c1', 12000))
      .then([captureRequested('c1', 12000, true)]);
  });

  it.each(['failed', 'pending'] as const)(
    'records a %s increment and leaves the authorization unchanged',
    (outcome) => {
      given(authorizedFor10000)
        .when(increment(2000, outcome))
        .then([{ type: 'AuthorizationIncrementNotApplied', data: { incrementId: 'i1', amount: 2000, outcome, at } }]);
      const recorded = given(authorizedFor10000).when(increment(2000, outcome)).events();
      expect(given([...authorizedFor10000, ...recorded]).state()).toMatchObject({
        status: 'authorization_succeeded',
        authorizedAmount: 10000,
      });
      given([...authorizedFor10000, ...recorded])
        .when(capture('c1', 10001))
        .thenThrows('capture_limit_exceeded');
      given([...authorizedFor10000, ...recorded])
        .when(capture('c1', 10000))
        .then([captureRequested('c1', 10000, true)]);
    },
  );

  it('refuses an increment that is not a positive integer', () =>
    given(authorizedFor10000).when(increment(0, 'succeeded')).thenThrows('invalid_amount'));

  it('ignores a repeated success and refuses a contradicting late result', () => {
    given(authorizedFor10000).when(succeededResult()).then([]);
    given(authorizedFor10000)
      .when(authResult({ outcome: 'declined', error: decline }, 'notification'))
      .thenThrows('authorization_already_decided');
  });

  it('refuses a refund while nothing is captured', () =>
    given(authorizedFor10000).when(refund('r1', 100)).thenThrows('transaction_not_captured'));

  it('syncs with at most one capture', () =>
    given([...authorizedFor10000, captureRequested('c1', 1000)])
      .when(sync)
      .then([{ type: 'TransactionSyncRequested', data: { at } }]));
});

describe('when a capture is pending', () => {
  const pending = [...authorizedFor10000, captureRequested('c1', 6000)];

  it('moves to capture_succeeded when the capture succeeds', () => {
    given(pending)
      .when(captureResult('c1', 'succeeded'))
      .then([captureSucceeded('c1')]);
    expect(given(pending).when(captureResult('c1', 'succeeded')).thenState()).toMatchObject({
      status: 'capture_succeeded',
      captures: [{ id: 'c1', status: 'succeeded' }],
    });
  });

  it.each(['declined', 'failed'] as const)(
    'frees the amount of a %s capture and returns to authorization_succeeded',
    (outcome) => {
      const after = [...pending, ...given(pending).when(captureResult('c1', outcome)).events()];
      expect(given(after).state()).toMatchObject({
        status: 'authorization_succeeded',
        captures: [{ id: 'c1', status: outcome }],
      });
      given(after)
        .when(capture('c2', 10000))
        .then([captureRequested('c2', 10000, true)]);
    },
  );

  it('refuses a second capture when multiple captures are off', () =>
    given(pending).when(capture('c2', 1000)).thenThrows('multiple_captures_disabled'));

  it('counts the pending capture against the authorized amount', () => {
    given(pending)
      .when(capture('c2', 4001, { settings: multiple }))
      .thenThrows('capture_limit_exceeded');
    given(pending)
      .when(capture('c2', 4000, { settings: multiple }))
      .then([captureRequested('c2', 4000, false)]);
  });

  it('refuses a void while a capture is pending', () => given(pending).when(voidTx()).thenThrows('void_not_allowed'));

  it('refuses an increment once captured or capturing', () =>
    given(pending).when(increment(100, 'succeeded')).thenThrows('increment_not_allowed'));

  it('refuses a refund of money not yet captured', () =>
    given(pending).when(refund('r1', 100)).thenThrows('transaction_not_captured'));

  it('refuses a capture id used before', () =>
    given(pending)
      .when(capture('c1', 100, { settings: multiple }))
      .thenThrows('capture_exists'));

  it('ignores a repeated result, refuses a contradicting one and an unknown capture', () => {
    const done = [...pending, captureSucceeded('c1')];
    given(done).when(captureResult('c1', 'succeeded')).then([]);
    given(done).when(captureResult('c1', 'declined')).thenThrows('capture_not_pending');
    given(pending).when(captureResult('c9', 'succeeded')).thenThrows('capture_not_found');
  });
});

describe('when the provider took a capture or refund for later (answered pending under its own reference)', () => {
  const pending = [...authorizedFor10000, captureRequested('c1', 6000)];
  const refunding = [...captured10000, refundRequested('r1', 2500)];
  const submitted = (captureId: string, providerOperationId: string) =>
    command('RecordCaptureSubmitted', { captureId, providerOperationId });
  const refundSubmittedCommand = command('RecordRefundSubmitted', { refundId: 'r1', providerOperationId: 'PSP-R1' });
  const captureSubmitted = (captureId: string, providerOperationId: string): TransactionEvent => ({
    type: 'CaptureSubmitted',
    data: { captureId, providerOperationId, at },
  });
  const refundSubmitted: TransactionEvent = {
    type: 'RefundSubmitted',
    data: { refundId: 'r1', providerOperationId: 'PSP-R1', at },
  };

  it('keeps the capture pending with the reference its notification will name it by', () => {
    given(pending)
      .when(submitted('c1', 'PSP-C1'))
      .then([captureSubmitted('c1', 'PSP-C1')]);
    expect(given([...pending, captureSubmitted('c1', 'PSP-C1')]).state()).toMatchObject({
      status: 'capture_pending',
      captures: [{ id: 'c1', status: 'pending', providerOperationId: 'PSP-C1' }],
    });
  });

  it('has nothing to add once the capture is decided (its notification came first) or the reference is known', () => {
    given([...pending, captureSucceeded('c1')])
      .when(submitted('c1', 'PSP-C1'))
      .then([]);
    given([...pending, captureSubmitted('c1', 'PSP-C1')])
      .when(submitted('c1', 'PSP-C1'))
      .then([]);
    given(pending).when(submitted('c9', 'PSP-C9')).thenThrows('capture_not_found');
  });

  it('keeps a refund processing with its reference, and adds nothing once it is decided', () => {
    given(refunding).when(refundSubmittedCommand).then([refundSubmitted]);
    expect(given([...refunding, refundSubmitted]).state()).toMatchObject({
      refunds: [{ id: 'r1', status: 'processing', providerOperationId: 'PSP-R1' }],
    });
    given([...refunding, refundSucceeded('r1')])
      .when(refundSubmittedCommand)
      .then([]);
  });
});

describe('when a final capture claims the authorization', () => {
  const finalPending = [...authorizedFor10000, captureRequested('c1', 3000, true)];

  it('refuses further captures while it is pending', () =>
    given(finalPending)
      .when(capture('c2', 1000, { settings: multiple }))
      .thenThrows('authorization_closed'));

  it('refuses further captures once it succeeded (the remainder is released)', () =>
    given([...finalPending, captureSucceeded('c1')])
      .when(capture('c2', 1000, { settings: multiple }))
      .thenThrows('authorization_closed'));

  it('reopens the authorization when the final capture is declined', () =>
    given([...finalPending, captureDeclined('c1')])
      .when(capture('c2', 1000, { settings: multiple }))
      .then([captureRequested('c2', 1000, false)]));

  it('makes the only capture final when multiple captures are off', () =>
    expect(
      given(authorizedFor10000)
        .when(capture('c1', 3000, { final: false }))
        .events(),
    ).toEqual([captureRequested('c1', 3000, true)]));
});

describe('when several captures claim one authorization (multiple captures on)', () => {
  const two = [
    ...authorizedFor10000,
    captureRequested('c1', 3000),
    captureSucceeded('c1'),
    captureRequested('c2', 2000),
  ];

  it('captures what is left when the amount is omitted', () =>
    given(two)
      .when(capture('c3', undefined, { settings: multiple, final: true }))
      .then([captureRequested('c3', 5000, true)]));

  it('has nothing to capture once everything is claimed and the amount is omitted', () =>
    given([...two, captureRequested('c3', 5000)])
      .when(capture('c4', undefined, { settings: multiple }))
      .thenThrows('nothing_to_capture'));

  it('stays capture_pending while any capture is pending, then capture_succeeded', () => {
    expect(given(two).state().status).toBe('capture_pending');
    expect(given([...two, captureSucceeded('c2')]).state()).toMatchObject({ status: 'capture_succeeded' });
    expect(capturedAmount(given([...two, captureSucceeded('c2')]).state())).toBe(5000);
  });

  it('refuses a sync once there is more than one capture', () => given(two).when(sync).thenThrows('sync_unavailable'));

  it('refunds across captures: a refund never targets one capture', () =>
    given([...two, captureSucceeded('c2')])
      .when(refund('r1', 4000))
      .then([refundRequested('r1', 4000)]));

  it('refunds only what succeeded, not what is still pending', () =>
    given(two).when(refund('r1', 3001)).thenThrows('refund_limit_exceeded'));
});

describe('when captured (capture_succeeded)', () => {
  it('requests a partial refund, keeping capture_succeeded', () => {
    given(captured10000)
      .when(refund('r1', 4000))
      .then([refundRequested('r1', 4000)]);
    expect(given(captured10000).when(refund('r1', 4000)).thenState()).toMatchObject({
      status: 'capture_succeeded',
      refunds: [{ id: 'r1', amount: 4000, status: 'processing' }],
    });
  });

  it('refunds everything left when the amount is omitted', () =>
    given([...captured10000, refundRequested('r1', 4000)])
      .when(refund('r2'))
      .then([refundRequested('r2', 6000)]));

  it('counts processing refunds against what was captured', () => {
    given([...captured10000, refundRequested('r1', 4000)])
      .when(refund('r2', 6001))
      .thenThrows('refund_limit_exceeded');
    given([...captured10000, refundRequested('r1', 10000)])
      .when(refund('r2'))
      .thenThrows('nothing_to_refund');
  });

  it('refuses a refund amount that is not a positive integer', () =>
    given(captured10000).when(refund('r1', 0)).thenThrows('invalid_amount'));

  it('moves to refunded when succeeded refunds reach what was captured', () => {
    const refunds = [...captured10000, refundRequested('r1', 4000), refundSucceeded('r1'), refundRequested('r2', 6000)];
    expect(given(refunds).state().status).toBe('capture_succeeded');
    given(refunds)
      .when(refundResult('r2', 'succeeded'))
      .then([refundSucceeded('r2')]);
    expect(given(refunds).when(refundResult('r2', 'succeeded')).thenState().status).toBe('refunded');
  });

  it.each(['declined', 'failed'] as const)('frees the amount of a %s refund', (outcome) => {
    const after = [
      ...captured10000,
      refundRequested('r1', 10000),
      ...given([...captured10000, refundRequested('r1', 10000)])
        .when(refundResult('r1', outcome))
        .events(),
    ];
    expect(given(after).state().refunds[0]?.status).toBe(outcome);
    given(after)
      .when(refund('r2'))
      .then([refundRequested('r2', 10000)]);
  });

  it('marks a refund succeeded from settlement data, and ignores the settlement of one already succeeded', () => {
    const processingRefund = [...captured10000, refundRequested('r1', 4000)];
    given(processingRefund)
      .when(command('IngestSettledRefund', { refundId: 'r1' }))
      .then([refundSucceeded('r1', 'settlement')]);
    given([...processingRefund, refundSucceeded('r1')])
      .when(command('IngestSettledRefund', { refundId: 'r1' }))
      .then([]);
  });

  it('refuses a reused refund id, an unknown refund and a contradicting result', () => {
    const processingRefund = [...captured10000, refundRequested('r1', 4000)];
    given(processingRefund).when(refund('r1', 100)).thenThrows('refund_exists');
    given(processingRefund).when(refundResult('r9', 'succeeded')).thenThrows('refund_not_found');
    given([...processingRefund, refundSucceeded('r1')])
      .when(refundResult('r1', 'failed'))
      .thenThrows('refund_not_processing');
  });

  it('refuses a void and a cancel', () => {
    given(captured10000).when(voidTx()).thenThrows('void_not_allowed');
    given(captured10000).when(cancel).thenThrows('cancel_not_allowed');
  });
});

describe('when a void is pending', () => {
  const voidPending = [
    ...authorizedFor10000,
    { type: 'VoidRequested', data: { voidId: 'v1', at } } as TransactionEvent,
  ];

  it('moves to authorization_voided when the void succeeds', () => {
    given(voidPending)
      .when(voidResult('succeeded'))
      .then([{ type: 'VoidSucceeded', data: { voidId: 'v1', at } }]);
    expect(given(voidPending).when(voidResult('succeeded')).thenState().status).toBe('authorization_voided');
  });

  it.each(['declined', 'failed'] as const)('returns to authorization_succeeded when the void is %s', (outcome) =>
    expect(given(voidPending).when(voidResult(outcome)).thenState()).toMatchObject({
      status: 'authorization_succeeded',
      pendingVoidId: null,
    }),
  );

  it('refuses a second void, a capture and an unknown void result', () => {
    given(voidPending).when(voidTx('v2')).thenThrows('void_pending');
    given(voidPending).when(capture('c1', 100)).thenThrows('void_pending');
    given(voidPending).when(voidResult('succeeded', 'v2')).thenThrows('void_not_found');
  });
});

describe('in a terminal state', () => {
  const voided = [
    ...authorizedFor10000,
    { type: 'VoidRequested', data: { voidId: 'v1', at } } as TransactionEvent,
    { type: 'VoidSucceeded', data: { voidId: 'v1', at } } as TransactionEvent,
  ];
  const terminal: [string, readonly TransactionEvent[], TransactionErrorCode][] = [
    [
      'authorization_declined',
      [...processing, { type: 'AuthorizationDeclined', data: { ...decline, at } }],
      'transaction_declined',
    ],
    [
      'authorization_failed',
      [...processing, { type: 'AuthorizationFailed', data: { ...failure, at } }],
      'transaction_failed',
    ],
    ['authorization_voided', voided, 'transaction_voided'],
    ['refunded', [...captured10000, refundRequested('r1', 10000), refundSucceeded('r1')], 'transaction_refunded'],
  ];
  const attempts: [string, TransactionCommand][] = [
    ['an authorization success', succeededResult()],
    ['a capture', capture('c9', 100, { settings: multiple })],
    ['a void', voidTx('v9')],
    ['a refund', refund('r9', 100)],
    ['a cancel', cancel],
    ['an increment', increment(100, 'succeeded')],
  ];

  describe.each(terminal)('%s', (status, events, code) => {
    it(`is ${status}`, () => expect(given(events).state().status).toBe(status));
    // A success after a decided failure is not refused: it is a late authorization (below).
    const refused =
      status === 'authorization_declined' || status === 'authorization_failed' ? attempts.slice(1) : attempts;
    it.each(refused)(`refuses %s with ${code}`, (_name, next) => given(events).when(next).thenThrows(code));
  });

  it('ignores a repeated void success once voided', () => given(voided).when(voidResult('succeeded')).then([]));
});

describe('sequential folds (the limits hold whatever the order of requests)', () => {
  it('accepts exactly 3 of 50 captures of 3000 against an authorization of 10000', () => {
    const captures = Array.from({ length: 50 }, (_, i) => capture(`c${i}`, 3000, { settings: multiple }));
    const { accepted, refusals, state } = foldSequentially(authorizedFor10000, captures);
    expect(accepted).toBe(3);
    expect(claimedCaptureAmount(state)).toBe(9000);
    expect([...refusals]).toEqual(['capture_limit_exceeded']);
  });

  it('accepts exactly 1 of 50 captures of 3000 without multiple captures', () =>
    expect(
      foldSequentially(
        authorizedFor10000,
        Array.from({ length: 50 }, (_, i) => capture(`c${i}`, 3000)),
      ).accepted,
    ).toBe(1));

  it('widens the count to the over-capture limit (10000 + 20% = 12000: exactly 4)', () => {
    const settings: CaptureSettings = { multipleCapturesEnabled: true, overCapture: { percentage: 20 } };
    expect(
      foldSequentially(
        authorizedFor10000,
        Array.from({ length: 50 }, (_, i) => capture(`c${i}`, 3000, { settings })),
      ).accepted,
    ).toBe(4);
  });

  it('accepts exactly 1 of 50 refunds of 6000 against 10000 captured', () => {
    const { accepted, state } = foldSequentially(
      captured10000,
      Array.from({ length: 50 }, (_, i) => refund(`r${i}`, 6000)),
    );
    expect(accepted).toBe(1);
    expect(claimedRefundAmount(state)).toBe(6000);
  });

  it('accepts one more refund of 6000 once the first is declined, never more', () => {
    const commands = [
      refund('r0', 6000),
      refund('r1', 6000),
      refundResult('r0', 'declined'),
      ...Array.from({ length: 20 }, (_, i) => refund(`r${i + 2}`, 6000)),
    ];
    const { state } = foldSequentially(captured10000, commands);
    expect(state.refunds.filter((r) => r.status === 'processing')).toHaveLength(1);
  });

  it('keeps every invariant through 500 pseudo-random steps', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const settings: CaptureSettings = { multipleCapturesEnabled: true, overCapture: { amount: 700, percentage: 5 } };
    let events: TransactionEvent[] = [...authorizedFor10000];
    for (let step = 0; step < 500; step += 1) {
      const t = present(fold(events));
      const pendingCapture = t.captures.find((c) => c.status === 'pending');
      const processingRefund = t.refunds.find((r) => r.status === 'processing');
      const outcomes = ['succeeded', 'declined', 'failed'] as const;
      const options: TransactionCommand[] = [
        capture(`c${step}`, 1 + random(4000), { settings, final: random(10) === 0 }),
        refund(`r${step}`, 1 + random(4000)),
        increment(1 + random(1000), outcomes[random(2)] === 'succeeded' ? 'succeeded' : 'failed'),
        ...(pendingCapture ? [captureResult(pendingCapture.id, outcomes[random(3)] ?? 'succeeded')] : []),
        ...(processingRefund ? [refundResult(processingRefund.id, outcomes[random(3)] ?? 'succeeded')] : []),
      ];
      const next = options[random(options.length)]!;
      try {
        events = [...events, ...transaction.decide(next, fold(events))];
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
      }
      const after = present(fold(events));
      expect(claimedCaptureAmount(after)).toBeLessThanOrEqual(captureLimit(after.authorizedAmount, settings));
      expect(claimedRefundAmount(after)).toBeLessThanOrEqual(capturedAmount(after));
      expect(
        after.captures.filter((c) => c.final && c.status !== 'declined' && c.status !== 'failed').length,
      ).toBeLessThanOrEqual(1);
      if (after.status === 'refunded') expect(refundedAmount(after)).toBe(capturedAmount(after));
    }
  });
});

describe('a success after a decided failure (issue 22, item 10)', () => {
  const failed = [...processing, { type: 'AuthorizationFailed', data: { ...failure, at } } as TransactionEvent];
  const declined = [...processing, { type: 'AuthorizationDeclined', data: { ...decline, at } } as TransactionEvent];
  const late = (
    decidedStatus: 'authorization_failed' | 'authorization_declined',
    captured = false,
  ): TransactionEvent => ({
    type: 'LateAuthorizationReceived',
    data: { authorizedAmount: 10000, paymentServiceTransactionId: 'psp-1', captured, decidedStatus, at },
  });
  const reversal = (via: 'void' | 'refund' = 'void') => command('RecordLateAuthorizationReversal', { via });

  it.each([
    ['authorization_failed', failed],
    ['authorization_declined', declined],
  ] as const)('after %s, records the late authorization and keeps the decided status', (status, events) => {
    given(events)
      .when(succeededResult())
      .then([late(status)]);
    expect(given(events).when(succeededResult()).thenState()).toMatchObject({
      status,
      lateAuthorization: { paymentServiceTransactionId: 'psp-1', amount: 10000, captured: false, reversed: false },
    });
  });

  it('takes captured from the provider, else from what was asked (intent capture)', () => {
    given(failed)
      .when(authResult({ outcome: 'succeeded', captured: true, authorizedAmount: 10000 }, 'notification'))
      .then([
        {
          type: 'LateAuthorizationReceived',
          data: { authorizedAmount: 10000, captured: true, decidedStatus: 'authorization_failed', at },
        },
      ]);
    const failedCapture = [
      created('capture'),
      completed,
      { type: 'AuthorizationFailed', data: { ...failure, at } } as TransactionEvent,
    ];
    expect(given(failedCapture).when(succeededResult()).events()).toEqual([late('authorization_failed', true)]);
  });

  it('records it once: the same success again changes nothing', () =>
    given([...failed, late('authorization_failed')])
      .when(succeededResult())
      .then([]));

  it('records the reversal once, and refuses one without a late authorization', () => {
    given([...failed, late('authorization_failed')])
      .when(reversal())
      .then([{ type: 'LateAuthorizationReversed', data: { via: 'void', at } }]);
    const reversed = [
      ...failed,
      late('authorization_failed'),
      { type: 'LateAuthorizationReversed', data: { via: 'void', at } } as TransactionEvent,
    ];
    given(reversed).when(reversal()).then([]);
    expect(given(reversed).state()).toMatchObject({
      status: 'authorization_failed',
      lateAuthorization: { reversed: true },
    });
    given(failed).when(reversal()).thenThrows('late_authorization_not_found');
  });

  it('still refuses a late decline or failure after a failure', () =>
    given(failed)
      .when(authResult({ outcome: 'declined', error: decline }, 'notification'))
      .thenThrows('transaction_failed'));
});
