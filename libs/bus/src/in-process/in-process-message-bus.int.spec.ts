import { renderMetrics } from '@switchyard/metrics';
import { messageBusContract } from '../contract';
import type { IncomingMessage } from '../message-bus';
import { InProcessBroker } from './in-process-broker';
import { InProcessDeadLetterLog } from './in-process-dead-letter-log';
import { InProcessMessageBus } from './in-process-message-bus';

const quiet = {
  onHandlerFailure: () => undefined,
  onDeadLetter: () => undefined,
  redelivery: { initialDelayMs: 20, maxAttempts: 3 },
};

// Each contract run gets one broker; every bus the contract opens is another client of it.
const contractOn = (name: string, partitions: number) => {
  const broker = new InProcessBroker({ partitions });
  messageBusContract(
    name,
    async () => new InProcessMessageBus({ broker, ...quiet }),
    { available: true },
    {
      quietMs: 50,
      deadLetterLog: async () => new InProcessDeadLetterLog(broker),
    },
  );
};

contractOn('in-process, 1 partition per topic', 1);
contractOn('in-process, 4 partitions per topic', 4);

/** Publishes 'one' and 'two' under one key; `published` turns true once the publish resolved. */
function publishTwo(bus: InProcessMessageBus): { readonly published: boolean; readonly done: Promise<void> } {
  const state = { published: false, done: Promise.resolve() };
  state.done = bus
    .publish('t', [
      { key: 'k', value: 'one' },
      { key: 'k', value: 'two' },
    ])
    .then(() => {
      state.published = true;
    });
  return state;
}

describe('InProcessMessageBus', () => {
  it('gives both members of a group work when topics have several partitions', async () => {
    const broker = new InProcessBroker({ partitions: 4 });
    const [one, two] = [new InProcessMessageBus({ broker }), new InProcessMessageBus({ broker })];
    const handledBy = { one: [] as IncomingMessage[], two: [] as IncomingMessage[] };
    await one.subscribe({ groupId: 'g', topics: ['t'], handler: async (message) => void handledBy.one.push(message) });
    await two.subscribe({ groupId: 'g', topics: ['t'], handler: async (message) => void handledBy.two.push(message) });
    await one.publish(
      't',
      Array.from({ length: 40 }, (_, n) => ({ key: `stream-${n}`, value: String(n) })),
    );
    await vi.waitFor(() => expect(handledBy.one.length + handledBy.two.length).toBe(40));

    expect(handledBy.one.length).toBeGreaterThan(0);
    expect(handledBy.two.length).toBeGreaterThan(0);
    const partitionsOf = (messages: IncomingMessage[]) => new Set(messages.map((message) => message.partition));
    const shared = [...partitionsOf(handledBy.one)].filter((partition) => partitionsOf(handledBy.two).has(partition));
    expect(shared).toEqual([]);
    await Promise.all([one.close(), two.close()]);
  });

  it('with publishWaitsForConsumers, publish resolves only once every subscribed group has handled the messages', async () => {
    const bus = new InProcessMessageBus({ publishWaitsForConsumers: true, ...quiet });
    await bus.publish('t', [{ key: 'k', value: 'nobody listens' }]);
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const handled: string[] = [];
    await bus.subscribe({
      groupId: 'slow',
      topics: ['t'],
      fromBeginning: false,
      handler: async (message) => void (await gate, handled.push(message.value)),
    });
    await bus.subscribe({ groupId: 'fast', topics: ['t'], fromBeginning: false, handler: async () => undefined });
    const publishing = publishTwo(bus);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(publishing.published).toBe(false);
    open();
    await publishing.done;
    expect(handled).toEqual(['one', 'two']);
    await bus.close();
  });

  it("with publishWaitsForConsumers, publish resolves only once the groups' subscriptions have synced what they handled", async () => {
    const bus = new InProcessMessageBus({ publishWaitsForConsumers: true, ...quiet });
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const handled: string[] = [];
    let synced: string[] = [];
    await bus.subscribe({
      groupId: 'ingest',
      topics: ['t'],
      fromBeginning: false,
      handler: async (message) => void handled.push(message.value),
      sync: async () => {
        await gate;
        synced = [...handled];
      },
    });
    const publishing = publishTwo(bus);
    await vi.waitFor(() => expect(handled).toEqual(['one', 'two']));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(publishing.published).toBe(false);
    open();
    await publishing.done;
    expect(synced).toEqual(['one', 'two']);
    await bus.close();
  });

  it('syncs a subscription when it stops', async () => {
    const bus = new InProcessMessageBus(quiet);
    const sync = vi.fn(async () => undefined);
    const subscription = await bus.subscribe({ groupId: 'g', topics: ['t'], handler: async () => undefined, sync });
    await subscription.stop();
    expect(sync).toHaveBeenCalledTimes(1);
    await bus.close();
  });

  it('keeps its own broker when none is given, so two buses do not see each other', async () => {
    const [one, two] = [new InProcessMessageBus(), new InProcessMessageBus()];
    const received: IncomingMessage[] = [];
    await two.subscribe({ groupId: 'g', topics: ['t'], handler: async (message) => void received.push(message) });
    await one.publish('t', [{ key: 'k', value: 'v' }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual([]);
    await Promise.all([one.close(), two.close()]);
  });
});

describe('bus metrics', () => {
  it("shows each group's lag per partition, the parked streams and the dead letters in /metrics", async () => {
    const broker = new InProcessBroker({ partitions: 2 });
    const bus = new InProcessMessageBus({ broker, ...quiet });
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    await bus.subscribe({
      groupId: 'metrics-group',
      topics: ['metrics-topic'],
      handler: async (message) => {
        if (message.value === 'poison') throw new Error('deliberate refusal');
        await gate;
      },
    });
    await bus.publish('metrics-topic', [
      { key: 'p', value: 'poison' },
      { key: 'p', value: 'behind' },
    ]);
    await vi.waitFor(async () =>
      expect(await renderMetrics()).toMatch(
        /switchyard_bus_dead_letters_total\{group="metrics-group",topic="metrics-topic",reason="behind-parked"\} 1/,
      ),
    );
    const slow = Array.from({ length: 10 }, (_, n) => ({ key: `k${n}`, value: String(n) }));
    await bus.publish('metrics-topic', slow);
    const text = await renderMetrics();
    expect(text).toMatch(
      /switchyard_bus_dead_letters_total\{group="metrics-group",topic="metrics-topic",reason="failed"\} 1/,
    );
    expect(text).toMatch(/switchyard_bus_parked_streams\{group="metrics-group",topic="metrics-topic"\} 1/);
    const lags = [
      ...text.matchAll(
        /switchyard_bus_consumer_lag\{group="metrics-group",topic="metrics-topic",partition="(\d)"\} (\d+)/g,
      ),
    ];
    expect(lags.map(([, partition]) => partition).sort()).toEqual(['0', '1']);
    // Ten published, one of them under way in the handler: nine or ten still to handle.
    expect(lags.reduce((sum, [, , lag]) => sum + Number(lag), 0)).toBeGreaterThanOrEqual(9);
    open();
    await vi.waitFor(async () =>
      expect(await renderMetrics()).toMatch(
        /switchyard_bus_consumer_lag\{group="metrics-group",topic="metrics-topic",partition="0"\} 0/,
      ),
    );
    await bus.close();
    expect(await renderMetrics()).not.toContain('group="metrics-group",topic="metrics-topic",partition');
  });
});

describe('InProcessBroker retention', () => {
  const kept = (broker: InProcessBroker, topic: string) => {
    let count = 0;
    for (let offset = broker.start(topic, 0); broker.read(topic, 0, offset); offset += 1) count += 1;
    return count;
  };

  it('drops a message once every group consuming its topic has committed it', async () => {
    const broker = new InProcessBroker();
    const bus = new InProcessMessageBus({ broker, ...quiet });
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow: string[] = [];
    await bus.subscribe({ groupId: 'fast', topics: ['t'], handler: async () => undefined });
    await bus.subscribe({
      groupId: 'slow',
      topics: ['t'],
      handler: async (message) => void (await gate, slow.push(message.value)),
    });
    await bus.publish(
      't',
      Array.from({ length: 3000 }, (_, n) => ({ key: 'k', value: String(n) })),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kept(broker, 't')).toBe(3000); // the slow group has committed nothing yet

    open();
    await vi.waitFor(() => expect(slow).toHaveLength(3000));
    await vi.waitFor(() => expect(kept(broker, 't')).toBe(0));
    expect(broker.start('t', 0)).toBe(3000);

    // Offsets stay absolute after a trim, and a group joining from the beginning starts at what is still kept.
    await bus.publish('t', [{ key: 'k', value: 'late' }]);
    const late: IncomingMessage[] = [];
    await bus.subscribe({ groupId: 'late', topics: ['t'], handler: async (message) => void late.push(message) });
    await vi.waitFor(() => expect(late.map((message) => [message.offset, message.value])).toEqual([['3000', 'late']]));
    await bus.close();
  });

  it('keeps the last unconsumedRetention messages of a topic no group has joined', async () => {
    const broker = new InProcessBroker({ unconsumedRetention: 2000 });
    const bus = new InProcessMessageBus({ broker, ...quiet });
    for (let batch = 0; batch < 5; batch += 1) {
      await bus.publish(
        'nobody',
        Array.from({ length: 1000 }, (_, n) => ({ key: 'k', value: `${batch}-${n}` })),
      );
    }
    expect(kept(broker, 'nobody')).toBeLessThanOrEqual(2000 + 1024);
    expect(kept(broker, 'nobody')).toBeGreaterThanOrEqual(2000);
    expect(broker.read('nobody', 0, 4999)?.value).toBe('4-999');
    await bus.close();
  });
});
