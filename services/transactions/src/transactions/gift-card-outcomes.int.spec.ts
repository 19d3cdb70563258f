/**
 * `GiftCardOutcomes` over the in-process bus: every answer of the gift cards service is recorded before it is handed
 * on (or acknowledged), a waiting request gets only an answer of the kind it asked for, and no answer in time is null.
 */
import { randomUUID } from 'node:crypto';
import { InProcessMessageBus } from '@switchyard/bus';
import { EVENT_ID_HEADER, giftCardsTopic, type EventMessage } from '@switchyard/contracts';
import { GiftCardOutcomes, type GiftCardOutcome, redemptionAnswers, reversalAnswers } from './gift-card-outcomes';

let bus: InProcessMessageBus;
let outcomes: GiftCardOutcomes;
let recorded: string[];

beforeEach(async () => {
  bus = new InProcessMessageBus({ publishWaitsForConsumers: true });
  recorded = [];
  outcomes = new GiftCardOutcomes(async (outcome: GiftCardOutcome) => {
    recorded.push(`${outcome.type}:${outcome.data.redemptionId}`);
  });
  await outcomes.start({ bus, groupId: 'transactions.gift-card-outcomes' });
});

afterEach(async () => {
  await outcomes.stop();
  await bus.close();
});

const answer = (type: string, redemptionId: string, streamId = `gift-card-redemption-${redemptionId}`) => {
  const message: EventMessage = {
    id: randomUUID(),
    type,
    name: null,
    names: [],
    stream_id: streamId,
    revision: 1,
    position: '1',
    recorded_at: '2026-02-01T10:00:00.000Z',
    occurred_at: '2026-02-01T10:00:00.000Z',
    correlation_id: null,
    causation_id: null,
    schema_version: 1,
    data: { redemptionId, transactionId: 't1', merchantAccountId: 'm' },
    metadata: {},
  };
  return bus.publish(giftCardsTopic, [
    { key: message.stream_id, value: JSON.stringify(message), headers: { [EVENT_ID_HEADER]: message.id } },
  ]);
};

it('records every answer, and hands a waiting reversal its reversal’s answer, not a late redemption answer', async () => {
  const waiting = outcomes.wait('r1', reversalAnswers, 5_000);
  await answer('GiftCardRedeemed', 'r1');
  await answer('GiftCardRedemptionUndone', 'r1');
  expect((await waiting.promise)?.type).toBe('GiftCardRedemptionUndone');
  expect(recorded).toEqual(['GiftCardRedeemed:r1', 'GiftCardRedemptionUndone:r1']);
});

it('ignores what is not an answer (a claim, a stored card’s events); no answer in time is null', async () => {
  const waiting = outcomes.wait('r2', redemptionAnswers, 200);
  await answer('GiftCardRedemptionStarted', 'r2');
  await answer('GiftCardStored', 'r2', 'gift-card-r2');
  expect(await waiting.promise).toBeNull();
  expect(recorded).toEqual([]);
});
