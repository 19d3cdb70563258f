import { SimulatorLedger, type SimulatedNetworkToken, type SimulatedTransaction } from './simulator-ledger';

const transaction = (id: string, reference: string): SimulatedTransaction => ({
  id,
  reference,
  amount: 1000,
  currency: 'USD',
  notificationUrl: undefined,
  status: 'authorized',
  authorizedAmount: 1000,
  capturedAmount: 0,
  refundedAmount: 0,
  errorCode: null,
  rawResponseCode: '00',
  rawResponseDescription: null,
  avsResponseCode: null,
  cvvResponseCode: null,
  captures: [],
  refunds: [],
  sequence: 0,
});

/** What the simulator does for an authorization: counts the call, then keeps the transaction. */
const authorize = (ledger: SimulatorLedger, reference: string): SimulatedTransaction => {
  ledger.count(reference, 'authorizations');
  const t = transaction(ledger.newId('sim_txn'), reference);
  ledger.add(t);
  return t;
};

const networkToken = (id: string): SimulatedNetworkToken => ({
  id,
  reference: `ref-${id}`,
  token: `4111${id}`,
  expirationDate: '11/30',
  paymentAccountReference: 'par',
  scheme: 'visa',
  requestorId: null,
  appId: null,
  card: { number: '4111111111111111', expirationDate: '11/30' },
  status: 'active',
  cryptograms: new Set(),
  authorizations: [],
});

describe('SimulatorLedger capacity', () => {
  it('keeps 100,000 references by default', () => {
    expect(new SimulatorLedger().capacity).toBe(100_000);
  });

  it('forgets the oldest reference past its capacity, with its counts and transactions, and keeps a recent one', () => {
    const ledger = new SimulatorLedger(3);
    const first = authorize(ledger, 'ref-1');
    authorize(ledger, 'ref-2');
    const third = authorize(ledger, 'ref-3');
    ledger.count('ref-3', 'syncs');
    const fourth = authorize(ledger, 'ref-4');

    expect(ledger.counts('ref-1')).toEqual(new SimulatorLedger().counts('never-seen'));
    expect(ledger.get(first.id)).toBeUndefined();
    expect(ledger.findByReference('ref-1')).toBeUndefined();
    expect(ledger.counts('ref-3')).toMatchObject({ authorizations: 1, syncs: 1 });
    expect(ledger.get(third.id)).toBe(third);
    expect(ledger.findByReference('ref-4')).toBe(fourth);
    expect(ledger.all().map((t) => t.reference)).toEqual(['ref-2', 'ref-3', 'ref-4']);
  });

  it('counts a reference seen again without making room: its place is where it was first seen', () => {
    const ledger = new SimulatorLedger(2);
    authorize(ledger, 'ref-1');
    authorize(ledger, 'ref-2');
    const retry = authorize(ledger, 'ref-1');

    expect(ledger.counts('ref-1').authorizations).toBe(2);
    expect(ledger.findByReference('ref-1')).toBe(retry);
    expect(ledger.all()).toHaveLength(3);
    authorize(ledger, 'ref-3');
    expect(ledger.findByReference('ref-1')).toBeUndefined();
    expect(ledger.all().map((t) => t.reference)).toEqual(['ref-2', 'ref-3']);
  });

  it('keeps the newest network tokens, the oldest forgotten first', () => {
    const ledger = new SimulatorLedger(2);
    for (const id of ['sim_ntk_1', 'sim_ntk_2', 'sim_ntk_3']) ledger.addNetworkToken(networkToken(id));

    expect([...ledger.networkTokens.keys()]).toEqual(['sim_ntk_2', 'sim_ntk_3']);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new SimulatorLedger(0)).toThrow(RangeError);
    expect(() => new SimulatorLedger(1.5)).toThrow(RangeError);
  });
});
