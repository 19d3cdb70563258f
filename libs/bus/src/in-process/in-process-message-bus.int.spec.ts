import { messageBusContract } from '../contract';
import type { IncomingMessage } from '../message-bus';
import { InProcessBroker } from './in-process-broker';
import { InProcessMessageBus } from './in-process-message-bus';

const quiet = { onHandlerFailure: () => undefined, redelivery: { initialDelayMs: 20 } };

// Each contract run gets one broker; every bus the contract opens is another client of it.
const onBroker = (partitions: number) => {
  const broker = new InProcessBroker({ partitions });
  return async () => new InProcessMessageBus({ broker, ...quiet });
};

messageBusContract('in-process, 1 partition per topic', onBroker(1), { available: true }, { quietMs: 50 });
messageBusContract('in-process, 4 partitions per topic', onBroker(4), { available: true }, { quietMs: 50 });

describe('InProcessMessageBus', () => {
  it('gives both members of a group work when topics have several partitions', async () => {
    const broker = new InProcessBroker({ partitions: 4 });
    const [one, two] = [new InProcessMessageBus({ broker }), new InProcessMessageBus({ broker })];
    const handledBy = { one: [] as IncomingMessage[], two: [] as IncomingMessage[] };
    await one.subscribe({ groupId: 'g', topics: ['t'], handler: async (message) => void handledBy.one.push(message) });
    await two.subscribe({ groupId: 'g', topics: ['t'], handler: async (message) => void handledBy.two.push(message) });
    await one.publish('t', Array.from({ length: 40 }, (_, n) => ({ key: `stream-${n}`, value: String(n) })));
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
    await bus.subscribe({ groupId: 'slow', topics: ['t'], fromBeginning: false, handler: async (message) => void (await gate, handled.push(message.value)) });
    await bus.subscribe({ groupId: 'fast', topics: ['t'], fromBeginning: false, handler: async () => undefined });
    let published = false;
    const publishing = bus.publish('t', [{ key: 'k', value: 'one' }, { key: 'k', value: 'two' }]).then(() => (published = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(published).toBe(false);
    open();
    await publishing;
    expect(handled).toEqual(['one', 'two']);
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
