import { historyName, transactionEventNames } from './transaction-names';

const at = '2026-11-22T00:00:00.000Z';

it.each([
  [{ type: 'AuthorizationSucceeded', data: { authorizedAmount: 100, at } }, ['transaction.authorized']],
  [
    { type: 'AuthorizationSucceeded', data: { authorizedAmount: 100, directCaptureId: 't-1', at } },
    ['transaction.authorized', 'transaction.captured', 'capture.succeeded'],
  ],
  [{ type: 'CaptureRequested', data: { captureId: 'c', at } }, ['capture.pending', 'transaction.capture-pending']],
  [{ type: 'CaptureSucceeded', data: { captureId: 'c', at } }, ['capture.succeeded', 'transaction.captured']],
  [{ type: 'CaptureDeclined', data: { captureId: 'c', at } }, ['capture.declined', 'transaction.capture-failed']],
  [{ type: 'CaptureFailed', data: { captureId: 'c', at } }, ['capture.failed', 'transaction.capture-failed']],
  [{ type: 'VoidFailed', data: { outcome: 'declined', at } }, ['transaction.void-declined']],
  [{ type: 'VoidFailed', data: { outcome: 'failed', at } }, ['transaction.void-failed']],
  [{ type: 'AuthorizationIncremented', data: { at } }, ['transaction.modified']],
  [{ type: 'LateAuthorizationReceived', data: { captured: false, at } }, ['transaction.late-authorization-received']],
  [{ type: 'LateAuthorizationReversed', data: { via: 'void', at } }, ['transaction.late-authorization-reversed']],
  [{ type: 'CreateRequestCompleted', data: { at } }, undefined],
])('%o is published as %o', (event, names) => expect(transactionEventNames(event)).toEqual(names));

it('names the history entries after the reference (TransactionEvent.name)', () => {
  expect(historyName({ type: 'CaptureSucceeded', data: {} })).toBe(
    'payment-connector-response-transaction-capture-succeeded',
  );
  expect(historyName({ type: 'VoidFailed', data: { outcome: 'declined' } })).toBe(
    'payment-connector-response-transaction-void-declined',
  );
  expect(historyName({ type: 'CreateRequestCompleted', data: {} })).toBe('transaction-updated-status');
});
