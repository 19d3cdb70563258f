import { randomUUID } from 'node:crypto';
import { renderMetrics } from '@switchyard/metrics';
import { describeWithInfra } from '@switchyard/testing';
import { kafkaAvailability, messageBusContract } from '../contract';
import { KafkaDeadLetterLog } from './kafka-dead-letter-log';
import { KafkaMessageBus, kafkaBrokersFromEnv, type KafkaMessageBusOptions } from './kafka-message-bus';

const brokers = kafkaBrokersFromEnv();
const client =
  (options: Partial<KafkaMessageBusOptions> = {}) =>
  async () =>
    new KafkaMessageBus({
      brokers,
      clientId: 'bus-contract',
      onHandlerFailure: () => undefined,
      onDeadLetter: () => undefined,
      redelivery: { initialDelayMs: 50, maxAttempts: 3 },
      ...options,
    });
const contractOptions = {
  deadLetterLog: async () => new KafkaDeadLetterLog({ brokers, clientId: 'bus-contract-cli' }),
};

// An async describe rather than a top-level await, which the repository's CommonJS tsconfig refuses.
describe('Kafka adapter', async () => {
  const availability = await kafkaAvailability(brokers);
  // Topics as the services get them (the broker's num.partitions, 1 on the dev broker) ...
  messageBusContract(`KafkaMessageBus at ${brokers.join(',')}`, client(), availability, contractOptions);
  // ... and with 3 partitions: keys spread over partitions, and two members of a group really share them.
  messageBusContract(
    `KafkaMessageBus at ${brokers.join(',')}, 3 partitions per topic`,
    client({ topicPartitions: 3 }),
    availability,
    contractOptions,
  );
});

describe('Kafka adapter, partitions consumed concurrently', async () => {
  const availability = await kafkaAvailability(brokers);
  // The whole contract (order per key, redelivery, parking) with the partitions of a member handled concurrently.
  messageBusContract(
    `KafkaMessageBus at ${brokers.join(',')}, 3 partitions per topic consumed concurrently`,
    client({ topicPartitions: 3, partitionsConsumedConcurrently: 3 }),
    availability,
    contractOptions,
  );
  describeWithInfra(`a slow message at ${brokers.join(',')}`, availability, () => {
    it("holds back only its own partition within a fetch: another partition's messages are handled meanwhile", async () => {
      const bus = await client({ topicPartitions: 3, partitionsConsumedConcurrently: 3 })();
      const topic = `concurrent.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let slowPartition: number | undefined;
      const handled: number[] = [];
      try {
        // Published first, so that the group's first fetch holds every partition's messages: kafkajs fetches again
        // only once the batches of its last fetch are handled, so partitions are handled side by side within a
        // fetch (a fetch that met the publish half-way, as a CI run under load did, holds one partition only).
        await bus.publish(
          topic,
          Array.from({ length: 24 }, (_, n) => ({ key: `k${n}`, value: String(n) })),
        );
        await bus.subscribe({
          groupId: `concurrent-${randomUUID().slice(0, 8)}`,
          topics: [topic],
          handler: async (message) => {
            if (slowPartition === undefined) {
              slowPartition = message.partition;
              // Waits until a message of another partition was handled: a consumer taking one message at a time
              // never gets there.
              await released;
            } else if (message.partition !== slowPartition) release();
            handled.push(message.partition);
          },
        });
        await vi.waitFor(() => expect(handled).toHaveLength(24), { timeout: 15_000 });
      } finally {
        release();
        await bus.close();
      }
    });
  });
});

describe('Kafka adapter metrics', async () => {
  const availability = await kafkaAvailability(brokers);
  describeWithInfra(`consumer lag from ${brokers.join(',')}`, availability, () => {
    it("reads each group's lag per partition from the broker when /metrics is scraped", async () => {
      const bus = await client({ topicPartitions: 2 })();
      const topic = `lag.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      const groupId = `lag-${randomUUID().slice(0, 8)}`;
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let handled = 0;
      try {
        await bus.subscribe({ groupId, topics: [topic], handler: async () => void (await gate, (handled += 1)) });
        await bus.publish(
          topic,
          Array.from({ length: 12 }, (_, n) => ({ key: `k${n}`, value: String(n) })),
        );
        const lagOf = async () =>
          [
            ...(await renderMetrics()).matchAll(
              new RegExp(
                `switchyard_bus_consumer_lag\\{group="${groupId}",topic="${topic.replace(/\./g, '\\.')}",partition="(\\d)"\\} (\\d+)`,
                'g',
              ),
            ),
          ].map(([, partition, lag]) => [Number(partition), Number(lag)]);
        const before = await lagOf();
        expect(before.map(([partition]) => partition).sort()).toEqual([0, 1]);
        expect(before.reduce((sum, [, lag]) => sum + lag!, 0)).toBe(12); // nothing committed yet
        open();
        await vi.waitFor(() => expect(handled).toBe(12), { timeout: 15_000 });
        await vi.waitFor(async () => expect((await lagOf()).every(([, lag]) => lag === 0)).toBe(true), {
          timeout: 15_000,
        });
      } finally {
        await bus.close();
      }
    });
  });
});

describe('Kafka adapter, a subscription that syncs its own writes', async () => {
  const availability = await kafkaAvailability(brokers);
  describeWithInfra(`offsets at ${brokers.join(',')}`, availability, () => {
    it('commits no offset of a handled message before the subscription has synced, and one sync covers a batch', async () => {
      const bus = await client()();
      const topic = `sync.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      const groupId = `sync-${randomUUID().slice(0, 8)}`;
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let handled = 0;
      let syncs = 0;
      const lagOf = async () =>
        [
          ...(await renderMetrics()).matchAll(
            new RegExp(
              `switchyard_bus_consumer_lag\\{group="${groupId}",topic="${topic.replace(/\./g, '\\.')}",partition="\\d"\\} (\\d+)`,
              'g',
            ),
          ),
        ].reduce((sum, [, lag]) => sum + Number(lag), 0);
      try {
        await bus.subscribe({
          groupId,
          topics: [topic],
          handler: async () => void (handled += 1),
          sync: async () => {
            await gate;
            syncs += 1;
          },
        });
        await bus.publish(
          topic,
          Array.from({ length: 10 }, (_, n) => ({ key: `k${n}`, value: String(n) })),
        );
        await vi.waitFor(() => expect(handled).toBe(10), { timeout: 15_000 });
        // Handled, the commit interval long past, but not synced: nothing is acknowledged.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(await lagOf()).toBe(10);
        open();
        await vi.waitFor(async () => expect(await lagOf()).toBe(0), { timeout: 15_000 });
        expect(syncs).toBeGreaterThan(0);
        expect(syncs).toBeLessThan(10);
      } finally {
        open();
        await bus.close();
      }
    });
  });
});

describe('Kafka adapter, a batched subscription', async () => {
  const availability = await kafkaAvailability(brokers);
  describeWithInfra(`its window at ${brokers.join(',')}`, availability, () => {
    // A window far longer than a loopback fetch, so that "at once" and "after the window" cannot be confused.
    const windowMs = 3_000;

    it('hands over the first message to reach an idle topic at once, then gathers what lands for a window', async () => {
      const bus = await client({ batchWindowMs: windowMs })();
      const topic = `batched.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      const handledAt: number[] = [];
      try {
        await bus.subscribe({
          groupId: `batched-${randomUUID().slice(0, 8)}`,
          topics: [topic],
          batched: true,
          handler: async () => void handledAt.push(Date.now()),
        });
        // Idle for longer than a fetch's wait at the broker: the consumer is between empty fetches.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        const publishedAt = Date.now();
        await bus.publish(topic, [{ key: 'first', value: '1' }]);
        await vi.waitFor(() => expect(handledAt).toHaveLength(1), { timeout: windowMs });
        // Before: the broker held every batched fetch for the whole window (its minimum size is never reached).
        expect(handledAt[0]! - publishedAt).toBeLessThan(windowMs / 2);
        await bus.publish(
          topic,
          Array.from({ length: 5 }, (_, n) => ({ key: `k${n}`, value: String(n) })),
        );
        await vi.waitFor(() => expect(handledAt).toHaveLength(6), { timeout: 3 * windowMs });
        // The next fetch waits for the window that began with the last one: the five come together, after it.
        expect(handledAt[1]! - handledAt[0]!).toBeGreaterThanOrEqual(windowMs - 100);
        expect(handledAt[5]! - handledAt[1]!).toBeLessThan(windowMs / 2);
      } finally {
        await bus.close();
      }
    });

    it('stops without waiting for the rest of its window', async () => {
      const bus = await client({ batchWindowMs: 30_000 })();
      const topic = `batched.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      let handled = 0;
      const subscription = await bus.subscribe({
        groupId: `batched-${randomUUID().slice(0, 8)}`,
        topics: [topic],
        batched: true,
        handler: async () => void (handled += 1),
      });
      try {
        await bus.publish(topic, [{ key: 'k', value: '1' }]);
        await vi.waitFor(() => expect(handled).toBe(1), { timeout: 10_000 });
        const stopping = Date.now();
        await subscription.stop();
        expect(Date.now() - stopping).toBeLessThan(10_000);
      } finally {
        await bus.close();
      }
    });
  });
});
