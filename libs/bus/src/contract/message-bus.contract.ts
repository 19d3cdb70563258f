/**
 * The behaviour every MessageBus adapter has, as one vitest suite. An adapter's spec calls
 * `messageBusContract(name, makeBus, availability)`; `makeBus` returns a new client of the same bus each time
 * (Kafka: a new client of the cluster; in-process: a new bus on a shared broker), so that a group can be
 * resumed by another client and split between two.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeWithInfra, type Availability } from '@switchyard/testing';
import { deduplicating, InMemorySeenEventIds } from '../dedupe';
import { listDeadLetters, requestDiscard, requestReplay, type DeadLetterLog } from '../dead-letter/dead-letter-log';
import {
  BusUnavailableError,
  type BusSubscription,
  type IncomingMessage,
  type MessageBus,
  type SubscribeOptions,
} from '../message-bus';

export interface MessageBusContractOptions {
  /** How long a test waits for deliveries. Default 15 s. */
  readonly deliveryTimeoutMs?: number;
  /** How long a test watches for deliveries that should not come. Default 300 ms. */
  readonly quietMs?: number;
  /** The bus's dead-letter topics as `cli dead-letters` sees them (a new one per call; closed by the suite). */
  readonly deadLetterLog: () => Promise<DeadLetterLog>;
}

export function messageBusContract(
  name: string,
  makeBus: () => Promise<MessageBus>,
  availability: Availability,
  options: MessageBusContractOptions,
): void {
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 15_000;
  const quietMs = options.quietMs ?? 300;

  describeWithInfra(`MessageBus contract: ${name}`, availability, () => {
    const clients: MessageBus[] = [];
    const subscriptions: BusSubscription[] = [];
    let bus: MessageBus;

    const newClient = async (): Promise<MessageBus> => {
      const client = await makeBus();
      clients.push(client);
      return client;
    };
    const subscribe = async (options: SubscribeOptions, on: MessageBus = bus): Promise<BusSubscription> => {
      const subscription = await on.subscribe(options);
      subscriptions.push(subscription);
      return subscription;
    };
    const eventually = async (what: string, done: () => boolean): Promise<void> => {
      const deadline = Date.now() + deliveryTimeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${deliveryTimeoutMs} ms waiting for ${what}`);
        await pause(10);
      }
    };

    const deadLetterLogs: DeadLetterLog[] = [];
    const deadLetterLog = async (): Promise<DeadLetterLog> => {
      const log = await options.deadLetterLog();
      deadLetterLogs.push(log);
      return log;
    };
    const eventuallyAsync = async (what: string, done: () => Promise<boolean>): Promise<void> => {
      const deadline = Date.now() + deliveryTimeoutMs;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out after ${deliveryTimeoutMs} ms waiting for ${what}`);
        await pause(25);
      }
    };

    beforeAll(async () => {
      bus = await newClient();
    });
    afterEach(async () => {
      await Promise.allSettled(subscriptions.splice(0).map((subscription) => subscription.stop()));
    });
    afterAll(async () => {
      await Promise.allSettled(clients.map((client) => client.close()));
      await Promise.allSettled(deadLetterLogs.map((log) => log.close()));
    });

    it('answers ping and accepts an empty publish', async () => {
      await bus.ping();
      await bus.publish(unique('empty'), []);
    });

    it('delivers what was published before a new group subscribed: topic, key, value, headers, position', async () => {
      const topic = unique('roundtrip');
      await bus.publish(topic, [{ key: 'stream-1', value: '{"n":1}', headers: { 'event-id': 'e-1' } }]);
      const received = collect();
      await subscribe({ groupId: unique('g'), topics: [topic], handler: received.handler });

      await eventually('the message', () => received.messages.length === 1);
      const [message] = received.messages;
      expect(message).toMatchObject({ topic, key: 'stream-1', value: '{"n":1}', headers: { 'event-id': 'e-1' } });
      expect(Number.isInteger(message?.partition) && (message?.partition ?? -1) >= 0).toBe(true);
      expect(message?.offset).toMatch(/^\d+$/);
    });

    it('round-trips headers as strings, and gives a message without headers an empty record', async () => {
      const topic = unique('headers');
      const headers = {
        'event-id': randomUUID(),
        'event-type': 'ThingHappened',
        'content-type': 'application/json',
        note: 'déjà vu ✓',
      };
      const received = collect();
      await subscribe({ groupId: unique('g'), topics: [topic], handler: received.handler });
      await bus.publish(topic, [
        { key: 'k', value: '1', headers },
        { key: 'k', value: '2' },
      ]);

      await eventually('both messages', () => received.messages.length === 2);
      expect(received.messages.map((message) => message.headers)).toEqual([headers, {}]);
    });

    it.each([
      ['', false],
      [', gathered by a batched subscription', true],
    ])('keeps the publish order of each key when keys interleave (3 keys × 50)%s', async (_, batched) => {
      const topic = unique('order');
      const received = collect();
      await subscribe({ groupId: unique('g'), topics: [topic], batched, handler: received.handler });
      const messages = Array.from({ length: 50 }, (_, seq) =>
        ['a', 'b', 'c'].map((key) => ({ key, value: String(seq) })),
      ).flat();
      // Some one at a time, the rest in batches: both paths must keep the order.
      for (const message of messages.slice(0, 30)) await bus.publish(topic, [message]);
      for (let start = 30; start < messages.length; start += 20)
        await bus.publish(topic, messages.slice(start, start + 20));

      await eventually('150 messages', () => received.messages.length >= 150);
      await pause(quietMs);
      expect(received.messages).toHaveLength(150);
      for (const key of ['a', 'b', 'c']) {
        expect(valuesOf(received.messages, key)).toEqual(Array.from({ length: 50 }, (_, seq) => String(seq)));
      }
    });

    it('redelivers a message whose handler rejected, before any later message of its key', async () => {
      const topic = unique('redeliver');
      const attempts: IncomingMessage[] = [];
      const handled: IncomingMessage[] = [];
      let failed = false;
      await subscribe({
        groupId: unique('g'),
        topics: [topic],
        handler: async (message) => {
          attempts.push(message);
          if (message.key === 'k' && message.value === '2' && !failed) {
            failed = true;
            throw new Error('deliberate failure (contract test)');
          }
          handled.push(message);
        },
      });
      await bus.publish(
        topic,
        ['0', '1', '2', '3', '4'].flatMap((value) => [
          { key: 'k', value },
          { key: 'other', value },
        ]),
      );

      await eventually('all 10 handled', () => handled.length >= 10);
      await pause(quietMs);
      expect(valuesOf(attempts, 'k')).toEqual(['0', '1', '2', '2', '3', '4']);
      expect(valuesOf(handled, 'k')).toEqual(['0', '1', '2', '3', '4']);
      expect(valuesOf(handled, 'other')).toEqual(['0', '1', '2', '3', '4']);
    });

    it('gives every group every message', async () => {
      const topic = unique('groups');
      const first = collect();
      const second = collect();
      await subscribe({ groupId: unique('g1'), topics: [topic], handler: first.handler });
      await subscribe({ groupId: unique('g2'), topics: [topic], handler: second.handler });
      const published = Array.from({ length: 20 }, (_, n) => ({ key: `k${n % 4}`, value: String(n) }));
      await bus.publish(topic, published);

      await eventually('20 messages in each group', () => first.messages.length >= 20 && second.messages.length >= 20);
      await pause(quietMs);
      const expected = published.map((message) => message.value).sort();
      expect(first.messages.map((message) => message.value).sort()).toEqual(expected);
      expect(second.messages.map((message) => message.value).sort()).toEqual(expected);
    });

    it('resumes a group in a new client after its committed offset, without acknowledged messages', async () => {
      const topic = unique('resume');
      const groupId = unique('g');
      const before = collect();
      const firstRun = await subscribe({ groupId, topics: [topic], handler: before.handler });
      await bus.publish(
        topic,
        range(0, 5).map((n) => ({ key: 'k', value: String(n) })),
      );
      await eventually('the first 5', () => before.messages.length >= 5);
      await firstRun.stop();
      await bus.publish(
        topic,
        range(5, 10).map((n) => ({ key: 'k', value: String(n) })),
      );

      const after = collect();
      await subscribe({ groupId, topics: [topic], handler: after.handler }, await newClient());
      await eventually('the last 5', () => after.messages.length >= 5);
      await pause(quietMs);
      expect(valuesOf(before.messages, 'k')).toEqual(['0', '1', '2', '3', '4']);
      expect(valuesOf(after.messages, 'k')).toEqual(['5', '6', '7', '8', '9']);
    });

    it('hands a message that was never acknowledged to the next member when a member stops', async () => {
      const topic = unique('handover');
      const groupId = unique('g');
      const attemptsOfFailing: string[] = [];
      const failing = await subscribe({
        groupId,
        topics: [topic],
        handler: async (message) => {
          attemptsOfFailing.push(message.value);
          throw new Error('deliberate failure (contract test)');
        },
      });
      await bus.publish(topic, [
        { key: 'k', value: '0' },
        { key: 'k', value: '1' },
      ]);
      await eventually('a failed attempt', () => attemptsOfFailing.length >= 1);
      await failing.stop();

      const next = collect();
      await subscribe({ groupId, topics: [topic], handler: next.handler }, await newClient());
      await eventually('both messages', () => next.messages.length >= 2);
      await pause(quietMs);
      expect(new Set(attemptsOfFailing)).toEqual(new Set(['0']));
      expect(valuesOf(next.messages, 'k')).toEqual(['0', '1']);
    });

    it('starts a new group at the end of the topic when fromBeginning is false', async () => {
      const topic = unique('latest');
      await bus.publish(topic, [{ key: 'k', value: 'old' }]);
      const received = collect();
      await subscribe({ groupId: unique('g'), topics: [topic], fromBeginning: false, handler: received.handler });
      await bus.publish(topic, [
        { key: 'k', value: 'new-1' },
        { key: 'other', value: 'new-2' },
      ]);

      await eventually('the 2 new messages', () => received.messages.length >= 2);
      await pause(quietMs);
      expect(received.messages.map((message) => message.value).sort()).toEqual(['new-1', 'new-2']);
    });

    it('splits a group between two members (each message handled once) and lets one take over from the other', async () => {
      const topic = unique('members');
      const groupId = unique('g');
      const handled: Array<{ member: 'first' | 'second'; message: IncomingMessage }> = [];
      const member = (tag: 'first' | 'second') => async (message: IncomingMessage) =>
        void handled.push({ member: tag, message });
      const first = await subscribe({ groupId, topics: [topic], handler: member('first') });
      // Resolves once the group is stable again with both members: nothing rebalances while messages flow.
      await subscribe({ groupId, topics: [topic], handler: member('second') }, await newClient());
      const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
      await bus.publish(
        topic,
        range(0, 30).map((n) => ({ key: keys[n % keys.length] ?? 'a', value: String(n) })),
      );
      await eventually('30 messages', () => handled.length >= 30);
      await pause(quietMs);
      expect(handled.map(({ message }) => message.value).sort()).toEqual(range(0, 30).map(String).sort());

      await first.stop();
      await bus.publish(
        topic,
        range(30, 40).map((n) => ({ key: keys[n % keys.length] ?? 'a', value: String(n) })),
      );
      await eventually('40 messages', () => handled.length >= 40);
      await pause(quietMs);
      expect(handled).toHaveLength(40);
      expect(handled.slice(30).every(({ member }) => member === 'second')).toBe(true);
      for (const key of keys) {
        const values = valuesOf(
          handled.map(({ message }) => message),
          key,
        ).map(Number);
        expect(values).toEqual([...values].sort((a, b) => a - b));
      }
    });

    it('lets a deduplicating handler see each event id once when a message is published twice', async () => {
      const topic = unique('dedupe');
      const deliveries: string[] = [];
      const handled: string[] = [];
      const seen = new InMemorySeenEventIds();
      const handler = deduplicating(async (message) => void handled.push(message.headers['event-id'] ?? '?'), seen);
      await subscribe({
        groupId: unique('g'),
        topics: [topic],
        handler: async (message) => {
          deliveries.push(message.value);
          await handler(message);
        },
      });
      const once = { key: 'stream-1', value: 'first', headers: { 'event-id': 'evt-1' } };
      await bus.publish(topic, [once, { key: 'stream-1', value: 'second', headers: { 'event-id': 'evt-2' } }]);
      await bus.publish(topic, [once]); // a relay republishing after a crash

      await eventually('3 deliveries', () => deliveries.length >= 3);
      await pause(quietMs);
      expect(deliveries).toEqual(['first', 'second', 'first']);
      expect(handled).toEqual(['evt-1', 'evt-2']);
    });

    it('parks a message its handler always refuses, parks its stream behind it while others flow, and replays them in order', async () => {
      const topic = unique('poison');
      const groupId = unique('g');
      const log = await deadLetterLog();
      let fixed = false;
      const handled: IncomingMessage[] = [];
      const refusals: string[] = [];
      await subscribe({
        groupId,
        topics: [topic],
        handler: async (message) => {
          if (message.value === 'poison' && !fixed) {
            refusals.push(message.value);
            throw new Error('deliberate refusal (contract test)');
          }
          handled.push(message);
        },
      });
      await bus.publish(topic, [
        { key: 'a', value: 'a0' },
        { key: 'p', value: 'p0' },
        { key: 'p', value: 'poison', headers: { 'event-id': 'evt-poison' } },
        { key: 'b', value: 'b0' },
        { key: 'p', value: 'p2' },
        { key: 'a', value: 'a1' },
      ]);
      const parked = () => listDeadLetters(log, { topic, group: groupId });
      await eventually(
        'the other streams',
        () => valuesOf(handled, 'a').length === 2 && valuesOf(handled, 'b').length === 1,
      );
      await eventuallyAsync(
        'the poison message and the one behind it parked',
        async () => (await parked()).length === 2,
      );

      // Parked: the partition moves on (later messages of other streams are handled), the stream's wait behind it.
      await bus.publish(topic, [
        { key: 'p', value: 'p3' },
        { key: 'b', value: 'b1' },
        { key: 'a', value: 'a2' },
      ]);
      await eventually(
        'the later messages of other streams',
        () => valuesOf(handled, 'b').length === 2 && valuesOf(handled, 'a').length === 3,
      );
      await eventuallyAsync('p3 parked behind', async () => (await parked()).length === 3);
      await pause(quietMs);
      expect(valuesOf(handled, 'p')).toEqual(['p0']);
      const entries = await parked();
      expect(entries.map((entry) => [entry.key, entry.reason, entry.state])).toEqual([
        ['p', 'failed', 'parked'],
        ['p', 'behind-parked', 'parked'],
        ['p', 'behind-parked', 'parked'],
      ]);
      expect(entries[0]).toMatchObject({ group: groupId, topic, attempts: refusals.length, event_id: 'evt-poison' });
      expect(entries[0]?.error).toContain('deliberate refusal (contract test)');
      expect(refusals.length).toBeGreaterThan(1);

      // A replay while the handler still refuses: the stream stays parked, nothing of it is handled out of order.
      await requestReplay(log, { group: groupId, topic });
      await eventually('the replay to fail', () => refusals.length >= entries[0]!.attempts * 2);
      await pause(quietMs);
      expect(valuesOf(handled, 'p')).toEqual(['p0']);
      expect((await parked()).length).toBe(3);

      fixed = true;
      const replay = await requestReplay(log, { group: groupId, topic });
      expect(replay).toMatchObject({ streams: 1, messages: 3 });
      await eventually('the replayed messages', () => valuesOf(handled, 'p').length === 4);
      expect(valuesOf(handled, 'p')).toEqual(['p0', 'poison', 'p2', 'p3']);
      expect(handled.find((message) => message.value === 'poison')).toMatchObject({
        topic,
        key: 'p',
        headers: { 'event-id': 'evt-poison' },
      });
      await eventuallyAsync('nothing parked', async () => (await parked()).length === 0);

      // Released: the stream's next message is handled at once.
      await bus.publish(topic, [{ key: 'p', value: 'p4' }]);
      await eventually('p4', () => valuesOf(handled, 'p').length === 5);
      await pause(quietMs);
      expect(valuesOf(handled, 'p')).toEqual(['p0', 'poison', 'p2', 'p3', 'p4']);
    });

    it('retries a failure that says it is retriable past the attempt limit instead of parking it', async () => {
      const topic = unique('transient');
      const groupId = unique('g');
      const log = await deadLetterLog();
      let failures = 0;
      const handled: string[] = [];
      await subscribe({
        groupId,
        topics: [topic],
        handler: async (message) => {
          if (failures < 6) {
            failures += 1;
            throw Object.assign(new Error('a service it needs is unreachable (contract test)'), { retriable: true });
          }
          handled.push(message.value);
        },
      });
      await bus.publish(topic, [{ key: 'k', value: 'v' }]);
      await eventually('the message handled', () => handled.length === 1);
      expect(failures).toBe(6);
      expect(await listDeadLetters(log, { topic, all: true })).toEqual([]);
    });

    it('remembers a parked stream in the next member of the group, and drops it on discard', async () => {
      const topic = unique('parked-restart');
      const groupId = unique('g');
      const log = await deadLetterLog();
      const handled: IncomingMessage[] = [];
      const handler = async (message: IncomingMessage) => {
        if (message.value === 'poison') throw new Error('deliberate refusal (contract test)');
        handled.push(message);
      };
      const first = await subscribe({ groupId, topics: [topic], handler });
      await bus.publish(topic, [{ key: 's', value: 'poison' }]);
      await eventuallyAsync(
        'the poison message parked',
        async () => (await listDeadLetters(log, { topic, group: groupId })).length === 1,
      );
      await first.stop();

      await subscribe({ groupId, topics: [topic], handler }, await newClient());
      await bus.publish(topic, [
        { key: 's', value: 's1' },
        { key: 'other', value: 'o1' },
      ]);
      await eventually('the other stream', () => valuesOf(handled, 'other').length === 1);
      await eventuallyAsync(
        's1 parked behind',
        async () => (await listDeadLetters(log, { topic, group: groupId })).length === 2,
      );
      expect(valuesOf(handled, 's')).toEqual([]);

      expect(await requestDiscard(log, { group: groupId, topic, key: 's' })).toMatchObject({ streams: 1, messages: 2 });
      await eventuallyAsync(
        'the stream released',
        async () => (await listDeadLetters(log, { topic, group: groupId })).length === 0,
      );
      const all = await listDeadLetters(log, { topic, group: groupId, all: true });
      expect(all.map((entry) => [entry.key, entry.state])).toEqual([
        ['s', 'done'],
        ['s', 'done'],
      ]);
      await bus.publish(topic, [{ key: 's', value: 's2' }]);
      await eventually('s2', () => valuesOf(handled, 's').length === 1);
      expect(valuesOf(handled, 's')).toEqual(['s2']);
    });

    it('refuses work with a non-retriable BusUnavailableError once closed', async () => {
      const closing = await newClient();
      await closing.close();
      const refusal = await closing
        .publish(unique('closed'), [{ key: 'k', value: 'v' }])
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(BusUnavailableError);
      expect(refusal).toMatchObject({ type: 'bus_unavailable', retriable: false });
    });
  });
}

/** A topic or group name no earlier run used: reruns against a long-lived broker never collide. */
const unique = (label: string): string => `contract.${label}.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, index) => from + index);

const valuesOf = (messages: readonly IncomingMessage[], key: string): string[] =>
  messages.filter((message) => message.key === key).map((message) => message.value);

const collect = () => {
  const messages: IncomingMessage[] = [];
  return { messages, handler: async (message: IncomingMessage) => void messages.push(message) };
};
