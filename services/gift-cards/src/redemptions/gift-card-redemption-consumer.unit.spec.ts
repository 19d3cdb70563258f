/**
 * How the gift cards service follows `transactions.events` for split tender's requests: as its own group, batched
 * (the requests are a few messages among every card payment's events), and handing on only the requests.
 */
import type { MessageBus, SubscribeOptions } from '@switchyard/bus';
import { EVENT_TYPE_HEADER, giftCardRedemptionRequestTypes, transactionsTopic } from '@switchyard/contracts';
import type { GiftCardRedemptions } from './gift-card-redemptions';
import { GiftCardRedemptionConsumer } from './gift-card-redemption-consumer';

function recordingBus(): { bus: MessageBus; subscriptions: SubscribeOptions[] } {
  const subscriptions: SubscribeOptions[] = [];
  const bus = {
    publish: async () => undefined,
    subscribe: async (options: SubscribeOptions) => {
      subscriptions.push(options);
      return { stop: async () => undefined };
    },
  } as unknown as MessageBus;
  return { bus, subscriptions };
}

const message = (type: string) => ({
  topic: transactionsTopic,
  key: 'transaction-1',
  value: JSON.stringify({ id: `event-${type}`, type, stream_id: 'transaction-1', data: {} }),
  headers: {},
});

/** A consumer started on a bus that records its subscription; `handled`: the event types handed to the redemptions. */
async function startedConsumer() {
  const { bus, subscriptions } = recordingBus();
  const handled: string[] = [];
  const redemptions = { handle: async (event: { type: string }) => void handled.push(event.type) };
  const consumer = new GiftCardRedemptionConsumer(redemptions as unknown as GiftCardRedemptions, {
    bus,
    groupId: 'gift-cards.redemptions',
  });
  await consumer.start();
  return { subscriptions, handled, consumer };
}

it('follows transactions.events as its group, batched, and hands on only the redemption and reversal requests', async () => {
  const { subscriptions, handled, consumer } = await startedConsumer();

  expect(subscriptions).toHaveLength(1);
  expect(subscriptions[0]).toMatchObject({
    groupId: 'gift-cards.redemptions',
    topics: [transactionsTopic],
    fromBeginning: true,
    batched: true,
  });
  const requestTypes = Object.values(giftCardRedemptionRequestTypes);
  for (const type of ['TransactionCreated', ...requestTypes, 'TransactionAuthorized'])
    await subscriptions[0]!.handler(message(type) as never);
  expect(handled).toEqual(requestTypes);
  await consumer.stop();
});

it('passes over the other events by their event-type header, without parsing them', async () => {
  const { subscriptions, handled, consumer } = await startedConsumer();
  const [request] = Object.values(giftCardRedemptionRequestTypes);
  const named = (type: string, value: string) => ({
    topic: transactionsTopic,
    key: 'transaction-1',
    value,
    headers: { [EVENT_TYPE_HEADER]: type },
  });
  // A payment's event whose body this consumer could not even read: never parsed.
  await subscriptions[0]!.handler(named('TransactionCreated', '<not json>') as never);
  await subscriptions[0]!.handler(named(request!, message(request!).value) as never);
  expect(handled).toEqual([request]);
  await consumer.stop();
});
