/**
 * Time travel and the events' explanations, as pure functions over recorded events: the view as of a moment is the
 * read model's own fold of the events recorded by then, and each history entry says who, where, which rule and
 * what the provider answered.
 */
import type { RecordedEvent } from '@switchyard/eventstore';
import type { TransactionEvent } from './transaction';
import { transactionViewAsOf } from './transaction-as-of';
import { actorOf, explainEvent } from './transaction-explanation';
import { evolveView, type TransactionView } from './transactions.read-model';

const id = '9b6f3f0e-5c1b-4d8e-9a57-6f1f6c1f0001';
const second = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
const apiKey = { actor: { type: 'api-key-pair', id: 'key-1' } };

const recorded = (
  events: readonly (readonly [TransactionEvent, number, Record<string, unknown>?])[],
): RecordedEvent[] =>
  events.map(([event, s, metadata], revision) => ({
    id: `e${revision}`,
    streamId: `transaction-${id}`,
    type: event.type,
    data: event.data,
    metadata: metadata ?? apiKey,
    revision,
    position: String(revision + 1),
    recordedAt: second(s),
  }));

const at = second(0);
const lifecycle = recorded([
  [
    {
      type: 'TransactionCreated',
      data: {
        transactionId: id,
        merchantAccountId: 'm1',
        paymentServiceId: 'ps-a',
        route: ['ps-a', 'ps-b'],
        intent: 'authorize',
        amount: 10_000,
        currency: 'USD',
        isAmountEstimated: false,
        vaultCard: null,
        at,
      },
    },
    1,
  ],
  [
    {
      type: 'AuthorizationAttemptFailed',
      data: {
        paymentServiceId: 'ps-a',
        nextPaymentServiceId: 'ps-b',
        kind: 'failed',
        error: { errorCode: 'service_unavailable', rawResponseDescription: 'down' },
        at,
      },
    },
    2,
  ],
  [
    {
      type: 'AuthorizationSucceeded',
      data: {
        authorizedAmount: 10_000,
        paymentServiceTransactionId: 'psp-1',
        avsResponseCode: 'match',
        cvvResponseCode: 'no_match',
        rawResponseCode: '00',
        at,
      },
    },
    2,
  ],
  [{ type: 'CreateRequestCompleted', data: { reason: 'responded', at } }, 3],
  [{ type: 'CaptureRequested', data: { captureId: 'c1', amount: 10_000, final: true, tracking: [], at } }, 5],
  [{ type: 'CaptureSucceeded', data: { captureId: 'c1', rawResponseCode: '00', at } }, 5],
  [{ type: 'RefundRequested', data: { refundId: 'r1', amount: 4_000, at } }, 7],
  [
    { type: 'RefundSucceeded', data: { refundId: 'r1', via: 'payment_service', providerOperationId: 'psp-r1', at } },
    8,
    { actor: { type: 'system', id: 'provider-notification' } },
  ],
]);

describe('transactionViewAsOf', () => {
  it('is nothing before the first event', () => {
    expect(transactionViewAsOf(lifecycle, Date.parse(second(0)))).toBeUndefined();
  });

  it('folds the events recorded at or before the moment', () => {
    expect(transactionViewAsOf(lifecycle, Date.parse(second(1)))?.state.status).toBe('processing');
    expect(transactionViewAsOf(lifecycle, Date.parse(second(4)))?.state).toMatchObject({
      status: 'authorization_succeeded',
      paymentServiceId: 'ps-b',
      captures: [],
    });
    expect(transactionViewAsOf(lifecycle, Date.parse(second(5)))?.state.status).toBe('capture_succeeded');
    const refunding = transactionViewAsOf(lifecycle, Date.parse(second(7)));
    expect(refunding?.state.refunds).toEqual([{ id: 'r1', amount: 4_000, status: 'processing' }]);
    expect(transactionViewAsOf(lifecycle, Date.parse(second(8)))?.state.refunds).toEqual([
      { id: 'r1', amount: 4_000, status: 'succeeded' },
    ]);
  });

  it("after the last event is the read model's fold of every event (the int spec compares the answers)", () => {
    const folded = lifecycle.reduce<TransactionView | undefined>(
      (view, event) => evolveView(view, { type: event.type, data: event.data } as TransactionEvent),
      undefined,
    );
    expect(transactionViewAsOf(lifecycle, Date.parse('2999-01-01T00:00:00Z'))).toEqual(folded);
  });

  it('reads a prefix: an event recorded later ends it, even if one after it carries an earlier time', () => {
    const skewed = lifecycle.map((event, i) => (i === 4 ? { ...event, recordedAt: second(30) } : event));
    expect(transactionViewAsOf(skewed, Date.parse(second(10)))?.state.status).toBe('authorization_succeeded');
  });
});

describe('explainEvent', () => {
  const viewsAfter = (events: readonly RecordedEvent[]): TransactionView[] => {
    const views: TransactionView[] = [];
    let view: TransactionView | undefined;
    for (const event of events) {
      view = evolveView(view, { type: event.type, data: event.data } as TransactionEvent);
      views.push(view!);
    }
    return views;
  };
  const explained = (events: readonly RecordedEvent[]) => {
    const views = viewsAfter(events);
    return events.map((event, i) =>
      explainEvent({ type: event.type, data: event.data } as TransactionEvent, event.metadata, views[i]!),
    );
  };

  it('names the actor, the connection of each step and the provider codes', () => {
    const [createdStep, failedOver, authorization, , , captureStep, , refundStep] = explained(lifecycle);
    expect(createdStep).toEqual({
      actor: { type: 'api-key-pair', id: 'key-1' },
      payment_service_id: 'ps-a',
      flow_rule_id: null,
      provider_response: null,
    });
    expect(failedOver).toMatchObject({
      payment_service_id: 'ps-a',
      provider_response: { error_code: 'service_unavailable', raw_response_description: 'down' },
    });
    expect(authorization).toMatchObject({
      payment_service_id: 'ps-b',
      provider_response: {
        raw_response_code: '00',
        avs_response_code: 'match',
        cvv_response_code: 'no_match',
        payment_service_transaction_id: 'psp-1',
      },
    });
    expect(captureStep).toMatchObject({ payment_service_id: 'ps-b', provider_response: { raw_response_code: '00' } });
    expect(refundStep).toMatchObject({
      actor: { type: 'system', id: 'provider-notification' },
      provider_response: { provider_operation_id: 'psp-r1' },
    });
  });

  it('names the flow rule that routed, unless payment_service_id bypassed it; and the decline-early rule, with no provider answer', () => {
    const created = (flowActions: unknown[]): TransactionEvent =>
      ({
        type: 'TransactionCreated',
        data: {
          transactionId: id,
          merchantAccountId: 'm1',
          paymentServiceId: 'ps-a',
          flowActions,
          intent: 'authorize',
          amount: 1,
          currency: 'USD',
          isAmountEstimated: false,
          vaultCard: null,
          at,
        },
      }) as TransactionEvent;
    const routed = recorded([
      [created([{ ruleId: 'rule-route', action: 'route-transaction', outcome: { result: ['ps-a'] } }]), 1],
    ]);
    expect(explained(routed)[0]?.flow_rule_id).toBe('rule-route');
    const bypassed = recorded([
      [
        created([
          {
            ruleId: 'rule-route',
            action: 'route-transaction',
            outcome: { result: ['ps-b'], bypassed_by: 'payment_service_id' },
          },
        ]),
        1,
      ],
    ]);
    expect(explained(bypassed)[0]?.flow_rule_id).toBeNull();
    const declined = recorded([
      [created([{ ruleId: 'rule-decline', action: 'decline-early', outcome: { result: true } }]), 1],
      [
        {
          type: 'AuthorizationDeclined',
          data: { errorCode: 'flow_decline', rawResponseDescription: 'declined by flow rule rule-decline', at },
        },
        1,
      ],
    ]);
    expect(explained(declined)[1]).toMatchObject({ flow_rule_id: 'rule-decline', provider_response: null });
  });

  it('records no actor it cannot read', () => {
    expect(actorOf({})).toBeNull();
    expect(actorOf({ actor: { type: 'somebody', id: 'x' } })).toBeNull();
    expect(actorOf({ actor: { type: 'dashboard-user', id: 'u1' } })).toEqual({ type: 'dashboard-user', id: 'u1' });
  });
});
