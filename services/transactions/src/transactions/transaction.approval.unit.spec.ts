/**
 * The decider's rules for what happens between create and authorization: 3-D Secure, buyer approval (challenge or
 * redirect), the hold on failure notifications across the pause and its window, and failover along the route.
 */
import type { TransactionEvent } from './transaction';
import { at, authResult, command, complete, createData, failure, given, succeededResult } from './transaction.test-kit';

const routed: TransactionEvent = { type: 'TransactionCreated', data: { ...createData(), route: ['ps1', 'ps2'], at } };
const challenge = authResult({
  outcome: 'buyer_approval_required',
  reason: 'three_d_secure',
  authenticationId: 'auth-1',
  approvalUrl: 'https://acs.example/c/auth-1',
  expiresAt: at,
});
const challenged: TransactionEvent[] = [
  routed,
  {
    type: 'BuyerApprovalRequired',
    data: {
      reason: 'three_d_secure',
      authenticationId: 'auth-1',
      approvalUrl: 'https://acs.example/c/auth-1',
      expiresAt: at,
      at,
    },
  },
];
const authenticated = {
  status: 'complete',
  method: 'challenge',
  source: 'directory',
  version: '2.2.0',
  transactionStatus: 'Y',
  eci: '05',
  cavv: 'AAAB',
  directoryServerTransactionId: 'ds-1',
  authenticationId: 'auth-1',
} as const;
const failureHeld: TransactionEvent = { type: 'FailureNotificationHeld', data: { kind: 'failed', error: failure, at } };

describe('3-D Secure challenge: processing → buyer_approval_pending → processing', () => {
  it('pauses for the challenge, with the approval URL and the authentication waiting', () => {
    const state = given([routed]).when(challenge).thenState();
    expect(state).toMatchObject({
      status: 'buyer_approval_pending',
      approvalReason: 'three_d_secure',
      pendingAuthenticationId: 'auth-1',
      createRequestRunning: true,
    });
  });

  it('resumes processing once the challenge is authenticated, carrying the summary', () => {
    const state = given(challenged).when(command('RecordThreeDSecure', authenticated)).thenState();
    expect(state).toMatchObject({ status: 'processing', pendingAuthenticationId: null, threeDSecure: authenticated });
  });

  it('records the same 3-D Secure outcome once (a buyer reloading the return page)', () => {
    given([...challenged, { type: 'ThreeDSecureCompleted', data: { ...authenticated, at } }])
      .when(command('RecordThreeDSecure', authenticated))
      .then([]);
  });

  it('refuses 3-D Secure after the authorization is decided', () => {
    given([routed, { type: 'AuthorizationSucceeded', data: { authorizedAmount: 10000, at } }])
      .when(command('RecordThreeDSecure', authenticated))
      .thenThrows('authorization_already_decided');
  });
});

describe('the hold on failure notifications across a pause (spec, Events rule 2)', () => {
  it('holds a failure notified while the buyer is away, and applies it when the buyer returns', () => {
    const held = given(challenged)
      .when(authResult({ outcome: 'failed', error: failure }, 'notification'))
      .events();
    expect(held).toEqual([failureHeld]);
    const onReturn = given([...challenged, failureHeld])
      .when(complete('buyer_returned'))
      .events();
    expect(onReturn.map((e) => e.type)).toEqual(['CreateRequestCompleted', 'AuthorizationFailed']);
  });

  it('never lets a success follow a held failure', () => {
    given([...challenged, failureHeld])
      .when(succeededResult())
      .then([]);
  });

  it('ends an abandoned approval when the hold window runs out (incomplete_buyer_approval)', () => {
    const state = given(challenged).when(complete('hold_expired')).thenState();
    expect(state).toMatchObject({
      status: 'authorization_failed',
      errorCode: 'incomplete_buyer_approval',
      createRequestRunning: false,
    });
  });

  it('applies the held failure, not the timeout, when both are due', () => {
    const events = given([...challenged, failureHeld])
      .when(complete('hold_expired'))
      .events();
    expect(events.map((e) => e.type)).toEqual(['CreateRequestCompleted', 'AuthorizationFailed']);
  });

  it('just completes a create request still processing when the window runs out (a crashed request)', () => {
    expect(
      given([routed])
        .when(complete('hold_expired'))
        .events()
        .map((e) => e.type),
    ).toEqual(['CreateRequestCompleted']);
  });
});

describe('failover along the route', () => {
  const failOver = (paymentServiceId: string) =>
    command('FailOver', { paymentServiceId, kind: 'failed', error: { errorCode: 'service_unavailable' } });

  it('moves to the next connection, recording the failed attempt', () => {
    const events = given([routed]).when(failOver('ps1')).events();
    expect(events).toEqual([
      {
        type: 'AuthorizationAttemptFailed',
        data: {
          paymentServiceId: 'ps1',
          nextPaymentServiceId: 'ps2',
          kind: 'failed',
          error: { errorCode: 'service_unavailable' },
          at,
        },
      },
    ]);
    expect(given([routed]).when(failOver('ps1')).thenState()).toMatchObject({
      status: 'processing',
      paymentServiceId: 'ps2',
    });
  });

  it('settles what the failed attempt held: its failure does not outlive the failover', () => {
    expect(given([routed, failureHeld]).when(failOver('ps1')).thenState().notificationHeld).toEqual([]);
  });

  it('refuses a failover from a connection that is not the current one, or past the last one', () => {
    given([routed]).when(failOver('ps2')).thenThrows('attempt_not_current');
    const moved: TransactionEvent = {
      type: 'AuthorizationAttemptFailed',
      data: { paymentServiceId: 'ps1', nextPaymentServiceId: 'ps2', kind: 'failed', error: failure, at },
    };
    given([routed, moved]).when(failOver('ps2')).thenThrows('no_connection_left');
  });

  it('refuses a failover once the authorization is decided', () => {
    given([routed, { type: 'AuthorizationSucceeded', data: { authorizedAmount: 10000, at } }])
      .when(failOver('ps1'))
      .thenThrows('authorization_already_decided');
  });
});
