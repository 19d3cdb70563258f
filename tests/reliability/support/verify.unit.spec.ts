/**
 * The crash suites' checks must catch what they claim to: a lost acknowledged write, an operation made twice at
 * the provider, an authorization without a record of ours, money that disagrees, an open transaction, and a webhook
 * missing or out of order. Here on made-up records, so that a "0 lost" from a real run means something.
 */
import type { FlowRecord, OpRecord } from './load';
import type { LedgerCounts, ProviderLedger, ProviderTransaction } from './provider';
import { verifyAgainstLedger, type Snapshot } from './verify';
import { verifyWebhooks, type ExpectedWebhook } from './webhooks';
import type { ReceivedWebhook, WebhookReceiver } from '../../../services/standalone/src/webhooks.receiver';

const zero: LedgerCounts = {
  authorizations: 0,
  captures: 0,
  voids: 0,
  cancels: 0,
  refunds: 0,
  increments: 0,
  syncs: 0,
};

function op(kind: OpRecord['kind'], amount: number, outcome: OpRecord['outcome'], ack?: unknown): OpRecord {
  return {
    kind,
    key: `k-${kind}-${amount}`,
    path: '/',
    body: {},
    amount,
    attempts: 1,
    noAnswers: 0,
    outcome,
    ...(ack ? { ack: { status: 200, body: ack } } : {}),
  };
}

/** An order: authorized 1000, captured 600 and refunded 200, each acknowledged. */
function flow(id = 'f1', transactionId = 't1'): FlowRecord {
  return {
    id,
    client: 0,
    amount: 1_000,
    transactionId,
    end: 'partly refunded',
    ops: [
      op('create', 1_000, 'acknowledged', {
        id: transactionId,
        amount: 1_000,
        authorized_amount: 1_000,
        status: 'authorization_succeeded',
      }),
      op('capture', 600, 'acknowledged', { id: 'c1', amount: 600, status: 'succeeded' }),
      op('refund', 200, 'acknowledged', { id: 'r1', amount: 200, status: 'succeeded' }),
    ],
  };
}

function snapshot(
  overrides: Partial<{ status: string; captured: number; refunded: number; captures: any[]; refunds: any[] }> = {},
  id = 't1',
  flowId = 'f1',
): Snapshot {
  return {
    transaction: {
      id,
      external_identifier: flowId,
      amount: 1_000,
      authorized_amount: 1_000,
      status: overrides.status ?? 'capture_succeeded',
      captured_amount: overrides.captured ?? 600,
      refunded_amount: overrides.refunded ?? 200,
    },
    captures: overrides.captures ?? [{ id: 'c1', amount: 600, status: 'succeeded' }],
    refunds: overrides.refunds ?? [{ id: 'r1', amount: 200, status: 'succeeded' }],
  };
}

function provider(
  held: Record<string, Partial<ProviderTransaction>>,
  counts: Record<string, Partial<LedgerCounts>> = {},
): ProviderLedger {
  return {
    counts: async (reference) => ({
      ...zero,
      ...(held[reference] ? { authorizations: 1, captures: 1, refunds: 1 } : {}),
      ...counts[reference],
    }),
    authorization: async (reference) =>
      held[reference]
        ? ({ id: `sim-${reference}`, reference, captures: [], refunds: [], ...held[reference] } as ProviderTransaction)
        : null,
    references: () => Object.keys(held),
  };
}

const agreeing = {
  t1: {
    status: 'captured',
    amount: 1_000,
    authorized_amount: 1_000,
    captured_amount: 600,
    refunded_amount: 200,
    captures: [{ id: 'sc1', amount: 600, status: 'succeeded' }],
    refunds: [{ id: 'sr1', amount: 200, status: 'succeeded', refund_reference: 'r1' }],
  },
};

describe('verifyAgainstLedger', () => {
  it('passes a run where everything acknowledged is there, once, on both sides', async () => {
    const result = await verifyAgainstLedger({
      snapshots: new Map([['t1', snapshot()]]),
      flows: [flow()],
      provider: provider(agreeing),
    });
    expect(result).toMatchObject({
      transactions: 1,
      acknowledgedWrites: 3,
      lost: [],
      duplicates: [],
      disagreements: [],
      orphans: [],
      unsettled: [],
    });
  });

  it('finds an acknowledged refund that is gone, and an acknowledged create whose transaction is gone', async () => {
    const noRefund = snapshot({ refunded: 0, status: 'capture_succeeded', refunds: [] });
    const result = await verifyAgainstLedger({
      snapshots: new Map([['t1', noRefund]]),
      flows: [flow(), flow('f2', 't2')],
      provider: provider({ t1: { ...agreeing.t1, refunded_amount: 0, refunds: [] } }),
    });
    expect(result.lost.map((f) => f.what)).toEqual(
      expect.arrayContaining([
        'acknowledged refund r1: not found',
        'refunded_amount below the acknowledged refunds',
        'acknowledged create: the transaction does not exist',
      ]),
    );
  });

  it('finds a status that the acknowledged writes do not imply', async () => {
    const result = await verifyAgainstLedger({
      snapshots: new Map([['t1', snapshot({ status: 'refunded' })]]),
      flows: [flow()],
      provider: provider(agreeing),
    });
    expect(result.lost).toEqual([
      expect.objectContaining({
        what: 'status differs from what the acknowledged writes imply',
        expected: 'capture_succeeded',
        actual: 'refunded',
      }),
    ]);
  });

  it('takes a refund acknowledged `processing` (its outcome unknown when answered) as settled either way, but not a settled one changed', async () => {
    // The vault's process killed mid provider call: the refund is answered `processing`, reconciliation settles it.
    const inDoubt = flow();
    inDoubt.ops.push(op('refund', 400, 'acknowledged', { id: 'r2', amount: 400, status: 'processing' }));
    const settled = (status: string) =>
      snapshot({
        status: status === 'succeeded' ? 'refunded' : 'capture_succeeded',
        refunded: status === 'succeeded' ? 600 : 200,
        refunds: [
          { id: 'r1', amount: 200, status: 'succeeded' },
          { id: 'r2', amount: 400, status },
        ],
      });
    const refundedAtProvider = (amount: number) => ({
      t1: {
        ...agreeing.t1,
        refunded_amount: amount,
        refunds: [
          ...agreeing.t1.refunds,
          ...(amount > 200 ? [{ id: 'sr2', amount: 400, status: 'succeeded', refund_reference: 'r2' }] : []),
        ],
      },
    });
    for (const [status, atProvider] of [
      ['succeeded', 600],
      ['failed', 200],
      ['processing', 200],
    ] as const) {
      const result = await verifyAgainstLedger({
        snapshots: new Map([['t1', settled(status)]]),
        flows: [inDoubt],
        provider: provider(refundedAtProvider(atProvider)),
      });
      expect({ status, lost: result.lost, disagreements: result.disagreements }).toEqual({
        status,
        lost: [],
        disagreements: [],
      });
    }
    // An acknowledged settled refund is not allowed to change, and one in doubt keeps its amount.
    const changed = flow();
    changed.ops.push(op('refund', 400, 'acknowledged', { id: 'r2', amount: 400, status: 'processing' }));
    const result = await verifyAgainstLedger({
      snapshots: new Map([
        [
          't1',
          snapshot({
            refunds: [
              { id: 'r1', amount: 200, status: 'failed' },
              { id: 'r2', amount: 300, status: 'succeeded' },
            ],
          }),
        ],
      ]),
      flows: [changed],
      provider: provider(agreeing),
    });
    expect(result.lost.map((f) => f.what)).toEqual(
      expect.arrayContaining(['acknowledged refund r1', 'acknowledged refund r2']),
    );
  });

  it('finds an authorization or a refund made twice at the provider, and two transactions for one order', async () => {
    const twice = {
      t1: {
        ...agreeing.t1,
        refunds: [...agreeing.t1.refunds, { id: 'sr2', amount: 200, status: 'succeeded', refund_reference: 'r1' }],
      },
    };
    const snapshots = new Map([
      ['t1', snapshot()],
      ['t1b', snapshot({}, 't1b', 'f1')],
    ]);
    const result = await verifyAgainstLedger({
      snapshots,
      flows: [flow()],
      provider: provider({ ...twice, t1b: agreeing.t1 }, { t1: { authorizations: 2 } }),
    });
    expect(result.duplicates.map((f) => f.what)).toEqual(
      expect.arrayContaining([
        '2 transactions for one order (one create request)',
        'authorized at the provider more than once',
        'refund r1 made at the provider 2 times',
      ]),
    );
  });

  it('finds an authorization at the provider without a transaction of ours, and money that disagrees', async () => {
    const result = await verifyAgainstLedger({
      snapshots: new Map([['t1', snapshot()]]),
      flows: [flow()],
      provider: provider({
        t1: { ...agreeing.t1, captured_amount: 700, captures: [{ id: 'sc1', amount: 700, status: 'succeeded' }] },
        stranger: { status: 'authorized', authorized_amount: 5 },
      }),
    });
    expect(result.orphans).toEqual([expect.objectContaining({ transaction_id: 'stranger' })]);
    expect(result.disagreements.map((f) => f.what)).toEqual(
      expect.arrayContaining([
        "our record (capture_succeeded) and the provider's (captured) disagree",
        'succeeded captures differ from the provider',
      ]),
    );
  });

  it('reports an open capture as unsettled, with what the provider did and the write the kill interrupted', async () => {
    const interrupted = flow();
    interrupted.ops.splice(1, 2, { ...op('capture', 600, 'unknown'), why: 'killed' });
    const open = snapshot({
      status: 'capture_pending',
      captured: 0,
      refunded: 0,
      captures: [{ id: 'c1', amount: 600, status: 'pending' }],
      refunds: [],
    });
    const result = await verifyAgainstLedger({
      snapshots: new Map([['t1', open]]),
      flows: [interrupted],
      provider: provider({ t1: { ...agreeing.t1, refunded_amount: 0, refunds: [] } }),
    });
    expect(result.lost).toEqual([]);
    expect(result.unsettled).toEqual([
      expect.objectContaining({
        transaction_id: 't1',
        reasons: ['transaction capture_pending', 'capture c1 pending'],
        diagnosis: ['capture c1 pending: the provider captured 600; its answer was lost with the process'],
        interruptedWrite: expect.stringContaining('capture'),
      }),
    ]);
  });
});

describe('verifyWebhooks', () => {
  const expected: ExpectedWebhook[] = [
    { eventId: 'e0', name: 'transaction.authorized', transactionId: 't1', revision: 1 },
    { eventId: 'e1', name: 'capture.pending', transactionId: 't1', revision: 2 },
    { eventId: 'e1', name: 'transaction.capture-pending', transactionId: 't1', revision: 2 },
    { eventId: 'e2', name: 'capture.succeeded', transactionId: 't1', revision: 3 },
  ];
  const received = (arrivals: [string, string, string][]): WebhookReceiver =>
    ({
      requests: arrivals.map(
        ([webhookId, eventId, name], index) =>
          ({
            index,
            webhookId,
            event: { id: eventId, name },
            answered: 200,
            raw: Buffer.from('{}'),
            headers: {},
          }) as unknown as ReceivedWebhook,
      ),
    }) as WebhookReceiver;

  it('counts a webhook delivered once however often it came, and finds one missing and one out of order', () => {
    const result = verifyWebhooks(
      received([
        ['w0', 'e0', 'transaction.authorized'],
        ['w2', 'e2', 'capture.succeeded'],
        ['w1', 'e1', 'capture.pending'],
        ['w1', 'e1', 'capture.pending'],
      ]),
      expected,
      'whsec_unused',
    );
    expect(result).toMatchObject({ expected: 4, delivered: 3, repeats: 1, unexpected: [] });
    expect(result.missing).toEqual([expected[2]]);
    expect(result.outOfOrder).toEqual([{ transactionId: 't1', revisions: [1, 3, 2] }]);
    expect(result.badSignatures).toBe(4); // unsigned
  });
});
