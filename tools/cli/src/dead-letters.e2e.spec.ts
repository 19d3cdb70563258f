/** `dead-letters list | replay` against Kafka: a consumer of a unique topic parks, the CLI replays. */
import { randomUUID } from 'node:crypto';
import { KafkaMessageBus, kafkaBrokersFromEnv, type IncomingMessage } from '@switchyard/bus';
import { kafkaAvailability } from '@switchyard/bus/src/contract';
import { describeWithInfra, runCli } from '@switchyard/testing';

const brokers = kafkaBrokersFromEnv();

describe('dead-letters on Kafka', async () => {
  const availability = await kafkaAvailability(brokers);
  describeWithInfra(`dead-letters at ${brokers.join(',')}`, availability, () => {
    vi.setConfig({ testTimeout: 120_000 });
    it('lists the parked messages of a group and replays them in order once the handler is fixed', async () => {
      const topic = `cli-dead-letters.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
      const groupId = `cli-dead-letters-${randomUUID().slice(0, 8)}`;
      const bus = new KafkaMessageBus({
        brokers,
        clientId: 'cli-e2e',
        onHandlerFailure: () => undefined,
        onDeadLetter: () => undefined,
        redelivery: { initialDelayMs: 20, maxAttempts: 2 },
      });
      let fixed = false;
      const handled: string[] = [];
      await bus.subscribe({
        groupId,
        topics: [topic],
        handler: async (message: IncomingMessage) => {
          if (message.value === 'poison' && !fixed) throw new Error('deliberate refusal');
          handled.push(message.value);
        },
      });
      const cli = (...args: string[]) =>
        runCli({ KAFKA_BROKERS: brokers.join(',') }, 'dead-letters', ...args, '--source', 'kafka');
      try {
        await bus.publish(topic, [
          { key: 's', value: 'poison' },
          { key: 's', value: 'next' },
          { key: 'o', value: 'other' },
        ]);
        await vi.waitFor(() => expect(handled).toEqual(['other']), { timeout: 15_000 });
        await vi.waitFor(
          async () => expect(JSON.parse((await cli('list', '--topic', topic)).stdout).items).toHaveLength(2),
          { timeout: 20_000, interval: 500 },
        );

        fixed = true;
        const replay = await cli('replay', '--group', groupId, '--topic', topic, '--wait-seconds', '30');
        expect(replay.code).toBe(0);
        expect(JSON.parse(replay.stdout)).toEqual({
          requested: { streams: 1, messages: 2 },
          released: ['s'],
          still_parked: {},
        });
        expect(handled).toEqual(['other', 'poison', 'next']);
        expect(JSON.parse((await cli('list', '--topic', topic)).stdout).items).toEqual([]);
      } finally {
        await bus.close();
      }
    });
  });
});
