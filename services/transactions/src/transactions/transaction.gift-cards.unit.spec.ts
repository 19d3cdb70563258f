/**
 * The decider's rules for gift cards: the plan at creation, each redemption's answer, skipping, reversal by
 * reference, the process's completion, and refunds of one redemption. The process manager (gift-card-payments.ts)
 * drives these commands; split-payments.int.spec.ts proves the whole flow against the simulator.
 */
import type { TransactionEvent } from './transaction';
import { at, command, createData, given, succeededResult } from './transaction.test-kit';

const plan = {
  serviceId: 'gift-service',
  redemptions: [
    { redemptionId: 'r1', giftCardId: 'stored-1', bin: '606060', subBin: '1111', last4: '0011', amount: 1_000 },
    { redemptionId: 'r2', bin: '606060', subBin: '2222', last4: '0022', amount: 2_000 },
  ],
};
const split: TransactionEvent = { type: 'TransactionCreated', data: { ...createData('capture'), giftCards: plan, at } };
const giftOnly: TransactionEvent = {
  type: 'TransactionCreated',
  data: { ...createData('authorize', 3_000), paymentServiceId: 'gift-service', giftCards: plan, at },
};
const redeemed = (redemptionId: string, giftCardId?: string): TransactionEvent => ({
  type: 'GiftCardRedemptionSucceeded',
  data: {
    redemptionId,
    ...(giftCardId ? { giftCardId } : {}),
    providerRedemptionId: `p-${redemptionId}`,
    merchantInitiated: false,
    at,
  },
});
const redeem = (redemptionId: string) =>
  command('RecordGiftCardRedemption', {
    redemptionId,
    merchantInitiated: false,
    result: { outcome: 'succeeded', providerRedemptionId: `p-${redemptionId}` },
  });
const refuse = (redemptionId: string) =>
  command('RecordGiftCardRedemption', {
    redemptionId,
    merchantInitiated: false,
    result: { outcome: 'failed', error: { errorCode: 'insufficient_funds', rawErrorCode: '10006' } },
  });
const complete = (outcome: 'succeeded' | 'failed', errorCode?: string) =>
  command('CompleteGiftCardPayment', { outcome, ...(errorCode ? { errorCode } : {}) });

describe('the plan', () => {
  it('asks the payment method for the rest, and never captures it directly while gift cards are open', () => {
    const state = given([split]).when(succeededResult(7_000)).thenState();
    expect(state).toMatchObject({ status: 'authorization_succeeded', authorizedAmount: 7_000, captures: [] });
  });

  it('refuses gift cards adding up to more than the amount', () => {
    given([])
      .when(command('CreateTransaction', { ...createData('authorize', 2_000), giftCards: plan }))
      .thenThrows('invalid_gift_cards');
  });

  it('refuses a capture while the gift cards are being redeemed', () => {
    const authorized: TransactionEvent = { type: 'AuthorizationSucceeded', data: { authorizedAmount: 7_000, at } };
    given([{ ...split, data: { ...split.data, intent: 'authorize' } } as TransactionEvent, authorized])
      .when(command('CaptureTransaction', { captureId: 'c1', settings: { multipleCapturesEnabled: false } }))
      .thenThrows('gift_card_payment_open');
  });
});

describe('redemptions', () => {
  it('records a success with the stored card it used (the usage counters read it)', () => {
    given([giftOnly])
      .when(redeem('r1'))
      .then([redeemed('r1', 'stored-1')]);
  });

  it('records the same answer twice once, and refuses a contradicting one', () => {
    given([giftOnly, redeemed('r1', 'stored-1')])
      .when(redeem('r1'))
      .then([]);
    given([giftOnly, redeemed('r1', 'stored-1')])
      .when(refuse('r1'))
      .thenThrows('gift_card_redemption_decided');
  });

  it('skips every redemption not yet asked of the provider', () => {
    given([split])
      .when(command('SkipGiftCardRedemptions', {}))
      .then([{ type: 'GiftCardRedemptionsSkipped', data: { redemptionIds: ['r1', 'r2'], at } }]);
  });

  it('asks the gift cards service to redeem a stored card while it is undecided, and only a stored one', () => {
    given([giftOnly])
      .when(command('RequestGiftCardRedemption', { redemptionId: 'r1' }))
      .then([
        {
          type: 'GiftCardRedemptionRequested',
          data: {
            redemptionId: 'r1',
            transactionId: 't1',
            merchantAccountId: 'default',
            giftCardServiceId: 'gift-service',
            giftCardId: 'stored-1',
            amount: 1_000,
            currency: 'USD',
            at,
          },
        },
      ]);
    given([giftOnly])
      .when(command('RequestGiftCardRedemption', { redemptionId: 'r2' }))
      .thenThrows('gift_card_redemption_not_found');
    given([giftOnly, redeemed('r1', 'stored-1')])
      .when(command('RequestGiftCardRedemption', { redemptionId: 'r1' }))
      .thenThrows('gift_card_redemption_decided');
  });

  it('asks for a stored card’s reversal whatever it stands at (a late success after a roll-back too)', () => {
    const reversal = {
      type: 'GiftCardReversalRequested',
      data: {
        redemptionId: 'r1',
        transactionId: 't1',
        merchantAccountId: 'default',
        giftCardServiceId: 'gift-service',
        at,
      },
    } as const;
    given([giftOnly])
      .when(command('RequestGiftCardReversal', { redemptionId: 'r1' }))
      .then([reversal]);
    given([giftOnly, { type: 'GiftCardRedemptionsSkipped', data: { redemptionIds: ['r1', 'r2'], at } }])
      .when(command('RequestGiftCardReversal', { redemptionId: 'r1' }))
      .then([reversal]);
    given([giftOnly])
      .when(command('RequestGiftCardReversal', { redemptionId: 'r2' }))
      .thenThrows('gift_card_redemption_not_found');
  });

  it('reverses a succeeded redemption; one never made by the provider (reversed: false) is skipped', () => {
    given([giftOnly, redeemed('r1')])
      .when(command('RecordGiftCardReversal', { redemptionId: 'r1', reversed: true }))
      .then([{ type: 'GiftCardRedemptionReversed', data: { redemptionId: 'r1', at } }]);
    given([giftOnly])
      .when(command('RecordGiftCardReversal', { redemptionId: 'r2', reversed: false }))
      .then([{ type: 'GiftCardRedemptionsSkipped', data: { redemptionIds: ['r2'], at } }]);
    given([giftOnly])
      .when(command('RecordGiftCardReversal', { redemptionId: 'r2', reversed: true }))
      .then([{ type: 'GiftCardRedemptionReversed', data: { redemptionId: 'r2', at } }]);
  });
});

describe('completion', () => {
  it('a gift-card-only payment is captured once every redemption succeeded', () => {
    const state = given([giftOnly, redeemed('r1'), redeemed('r2')])
      .when(complete('succeeded'))
      .thenState();
    expect(state).toMatchObject({ status: 'capture_succeeded', giftCards: { outcome: 'succeeded' } });
  });

  it('cannot complete with a redemption undecided, nor fail with one still charged', () => {
    given([giftOnly, redeemed('r1')])
      .when(complete('succeeded'))
      .thenThrows('gift_card_payment_open');
    const refused: TransactionEvent = {
      type: 'GiftCardRedemptionFailed',
      data: { redemptionId: 'r2', errorCode: 'insufficient_funds', at },
    };
    given([giftOnly, redeemed('r1'), refused])
      .when(complete('failed', 'insufficient_funds'))
      .thenThrows('gift_card_payment_open');
  });

  it('a failed gift-card-only payment is authorization_failed with the gift card error', () => {
    const refused: TransactionEvent = {
      type: 'GiftCardRedemptionFailed',
      data: { redemptionId: 'r2', errorCode: 'insufficient_funds', at },
    };
    const reversed: TransactionEvent = { type: 'GiftCardRedemptionReversed', data: { redemptionId: 'r1', at } };
    const state = given([giftOnly, redeemed('r1'), refused, reversed])
      .when(complete('failed', 'insufficient_funds'))
      .thenState();
    expect(state).toMatchObject({ status: 'authorization_failed', errorCode: 'insufficient_funds' });
  });
});

describe('refunds of a redemption', () => {
  const done: TransactionEvent[] = [
    giftOnly,
    redeemed('r1'),
    redeemed('r2'),
    { type: 'GiftCardPaymentCompleted', data: { outcome: 'succeeded', giftCardsOnly: true, at } },
  ];
  const refundR1 = (refundId: string, amount?: number) =>
    command('RefundTransaction', {
      refundId,
      ...(amount !== undefined ? { amount } : {}),
      target: { type: 'gift-card-redemption', id: 'r1' },
    });

  it('refunds up to what the redemption took, not past it', () => {
    given(done)
      .when(refundR1('f1', 400))
      .then([
        {
          type: 'RefundRequested',
          data: { refundId: 'f1', amount: 400, target: { type: 'gift-card-redemption', id: 'r1' }, at },
        },
      ]);
    const partly: TransactionEvent[] = [
      ...done,
      {
        type: 'RefundRequested',
        data: { refundId: 'f1', amount: 400, target: { type: 'gift-card-redemption', id: 'r1' }, at },
      },
    ];
    given(partly).when(refundR1('f2', 601)).thenThrows('refund_limit_exceeded');
    given(partly)
      .when(refundR1('f2'))
      .then([
        {
          type: 'RefundRequested',
          data: { refundId: 'f2', amount: 600, target: { type: 'gift-card-redemption', id: 'r1' }, at },
        },
      ]);
  });

  it('is refunded once every redemption is refunded in full', () => {
    const events: TransactionEvent[] = [...done];
    for (const [refundId, id, amount] of [
      ['f1', 'r1', 1_000],
      ['f2', 'r2', 2_000],
    ] as const) {
      events.push(
        { type: 'RefundRequested', data: { refundId, amount, target: { type: 'gift-card-redemption', id }, at } },
        { type: 'RefundSucceeded', data: { refundId, via: 'payment_service', at } },
      );
    }
    expect(given(events).state()).toMatchObject({ status: 'refunded' });
  });

  it('refuses a redemption that was not charged, or a payment still running', () => {
    given([giftOnly, redeemed('r1')])
      .when(refundR1('f1'))
      .thenThrows('redemption_not_refundable');
    given(done)
      .when(command('RefundTransaction', { refundId: 'f1', target: { type: 'gift-card-redemption', id: 'nope' } }))
      .thenThrows('gift_card_redemption_not_found');
  });
});
