/** The envelope a relay puts on the bus (deploy/kafka/topics.md): every field, its key and its headers. */
import { InProcessMessageBus, type IncomingMessage } from '@switchyard/bus';
import { EVENT_SCHEMA_VERSION, type EventMessage } from '@switchyard/contracts';
import { SqliteEventStore, type RecordedEvent } from '@switchyard/eventstore';
import type { CheckpointStore } from './checkpoints';
import { Relay, toEventMessage } from './relay';

const recorded = (overrides: Partial<RecordedEvent> = {}): RecordedEvent => ({
  id: '0b6f1c1e-8f0e-4d7e-9d4b-1f2a3b4c5d6e',
  streamId: 'transaction-1',
  type: 'CaptureSucceeded',
  data: { captureId: 'cap_1', at: '2025-03-01T10:00:00.123Z' },
  metadata: {},
  revision: 3,
  position: '42',
  recordedAt: '2025-03-01T10:00:01.000Z',
  ...overrides,
});

describe('toEventMessage', () => {
  it('keeps every field of version 1 and adds the time, the correlation and the version', () => {
    const metadata = { correlationId: 'req-1', causationId: 'cmd-1', merchantAccountId: 'default' };
    expect(toEventMessage(recorded({ metadata }), ['capture.succeeded', 'transaction.captured'])).toStrictEqual({
      id: '0b6f1c1e-8f0e-4d7e-9d4b-1f2a3b4c5d6e',
      type: 'CaptureSucceeded',
      name: 'capture.succeeded',
      names: ['capture.succeeded', 'transaction.captured'],
      stream_id: 'transaction-1',
      revision: 3,
      position: '42',
      recorded_at: '2025-03-01T10:00:01.000Z',
      occurred_at: '2025-03-01T10:00:00.123Z',
      correlation_id: 'req-1',
      causation_id: 'cmd-1',
      schema_version: 1,
      data: { captureId: 'cap_1', at: '2025-03-01T10:00:00.123Z' },
      metadata,
    });
    expect(EVENT_SCHEMA_VERSION).toBe(1);
  });

  it('has null names, and null correlation and causation when the metadata has none', () => {
    const message = toEventMessage(recorded());
    expect(message).toMatchObject({ name: null, names: [], correlation_id: null, causation_id: null });
    expect(toEventMessage(recorded(), 'transaction.captured')).toMatchObject({
      name: 'transaction.captured',
      names: ['transaction.captured'],
    });
    expect(toEventMessage(recorded({ metadata: { correlationId: 7, causationId: '' } }))).toMatchObject({
      correlation_id: null,
      causation_id: null,
    });
  });

  it.each([
    ['no at', { captureId: 'cap_1' }],
    ['an at that is not a date-time', { at: 'yesterday' }],
    ['a date without a time', { at: '2025-03-01' }],
    ['an at that is a number', { at: 1740823200000 }],
    ['an impossible date', { at: '2025-13-45T99:00:00Z' }],
    ['data that is not an object', 'text'],
    ['null data', null],
  ])('takes recorded_at as occurred_at for %s', (_case, data) => {
    expect(toEventMessage(recorded({ data })).occurred_at).toBe('2025-03-01T10:00:01.000Z');
  });

  it('takes an at with an offset as it is', () => {
    expect(toEventMessage(recorded({ data: { at: '2025-03-01T11:00:00+01:00' } })).occurred_at).toBe(
      '2025-03-01T11:00:00+01:00',
    );
  });
});

describe('Relay', () => {
  it('publishes the envelope keyed by stream id, with the event-id, event-type and event-name headers', async () => {
    const store = new SqliteEventStore(':memory:');
    const bus = new InProcessMessageBus();
    const positions = new Map<string, string>();
    const checkpoints: CheckpointStore = {
      load: (name) => positions.get(name),
      save: (name, position) => void positions.set(name, position),
    };
    const received: IncomingMessage[] = [];
    const subscription = await bus.subscribe({
      groupId: 'test',
      topics: ['test.events'],
      handler: async (message) => void received.push(message),
    });
    const relay = new Relay({
      store,
      bus,
      topic: 'test.events',
      checkpoints,
      nameOf: (event) => (event.type === 'Named' ? ['a.b', 'c.d'] : undefined),
    });
    try {
      await store.append(
        'thing-1',
        [
          {
            type: 'Named',
            data: { at: '2025-03-01T10:00:00Z' },
            metadata: { correlationId: 'corr-1', causationId: 'cause-1' },
          },
          { type: 'Internal', data: {} },
        ],
        { expectedRevision: 'no_stream' },
      );
      await relay.flush();
      await vi.waitFor(() => expect(received).toHaveLength(2));
      const [named, internal] = received.map((message) => ({
        message,
        envelope: JSON.parse(message.value) as EventMessage,
      }));
      expect(named!.message.key).toBe('thing-1');
      // The correlation id travels as a header too (deploy/kafka/topics.md), so consumers log and trace in it.
      expect(named!.message.headers).toEqual({
        'event-id': named!.envelope.id,
        'event-type': 'Named',
        'event-name': 'a.b,c.d',
        'correlation-id': 'corr-1',
      });
      expect(named!.envelope).toMatchObject({
        type: 'Named',
        name: 'a.b',
        names: ['a.b', 'c.d'],
        stream_id: 'thing-1',
        revision: 0,
        occurred_at: '2025-03-01T10:00:00Z',
        correlation_id: 'corr-1',
        causation_id: 'cause-1',
        schema_version: 1,
      });
      expect(internal!.message.headers).toEqual({ 'event-id': internal!.envelope.id, 'event-type': 'Internal' });
      expect(internal!.envelope).toMatchObject({
        name: null,
        names: [],
        revision: 1,
        correlation_id: null,
        causation_id: null,
        schema_version: 1,
      });
      expect(internal!.envelope.occurred_at).toBe(internal!.envelope.recorded_at);
    } finally {
      await relay.stop();
      await subscription.stop();
      await bus.close();
      await store.close();
    }
  });
});
