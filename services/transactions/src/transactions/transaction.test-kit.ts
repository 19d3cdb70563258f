/** Given/when/then for the transaction decider's specs: events in, a command, the events (or the error) out. */
import type { Minor, Transaction, TransactionEvent, TransactionState } from './transaction';
import { transaction, type TransactionCommand, type TransactionErrorCode } from './transaction.decide';

export const T0 = '2026-01-01T00:00:00.000Z';
export const at = T0;

// ---- given / when / then ----------------------------------------------------------------------------------
export const fold = (events: readonly TransactionEvent[]): TransactionState =>
  events.reduce(transaction.evolve, transaction.initialState());
export const present = (state: TransactionState): Transaction => {
  if (state.status === 'absent') throw new Error('expected a transaction');
  return state;
};

export const given = (events: readonly TransactionEvent[]) => ({
  state: () => present(fold(events)),
  when: (command: TransactionCommand) => {
    const decide = () => transaction.decide(command, fold(events));
    return {
      // biome-ignore lint/suspicious/noThenProperty: the given/when/then specs (STYLE.md 5); nothing awaits this object.
      then: (expected: readonly TransactionEvent[]) => expect(decide()).toEqual(expected),
      thenThrows: (code: TransactionErrorCode) => expect(decide).toThrow(expect.objectContaining({ code })),
      /** The state after the decided events, for rules about where a transition lands. */
      thenState: () => present(fold([...events, ...decide()])),
      events: decide,
    };
  },
});

// ---- commands ------------------------------------------------------------------------------------------------
export type Data<T extends TransactionCommand['type']> = Extract<TransactionCommand, { type: T }>['data'];
export const command = <T extends TransactionCommand['type']>(type: T, data: Data<T>): TransactionCommand =>
  ({ type, data, metadata: { now: T0 } }) as TransactionCommand;

export const createData = (
  intent: 'authorize' | 'capture' = 'authorize',
  amount: Minor = 10000,
): Data<'CreateTransaction'> => ({
  transactionId: 't1',
  merchantAccountId: 'default',
  paymentServiceId: 'ps1',
  intent,
  amount,
  currency: 'USD',
  isAmountEstimated: false,
  vaultCard: null,
});
export const create = (intent: 'authorize' | 'capture' = 'authorize', amount: Minor = 10000) =>
  command('CreateTransaction', createData(intent, amount));
export const authResult = (
  result: Data<'RecordAuthorizationResult'>['result'],
  source: 'create_request' | 'notification' = 'create_request',
) => command('RecordAuthorizationResult', { source, result });
export const succeededResult = (authorizedAmount: Minor = 10000) =>
  authResult({
    outcome: 'succeeded',
    authorizedAmount,
    paymentServiceTransactionId: 'psp-1',
    avsResponseCode: 'match',
    cvvResponseCode: 'match',
  });
export const decline = {
  errorCode: 'insufficient_funds',
  rawResponseCode: '51',
  rawResponseDescription: 'Insufficient funds',
};
export const failure = { errorCode: 'service_error' };
export const complete = (reason: Data<'CompleteCreateRequest'>['reason'] = 'responded') =>
  command('CompleteCreateRequest', { reason });
