import { SqliteEventStore, type EventStore, type RecordedEvent } from '@switchyard/eventstore';
import type { CheckpointStore } from './checkpoints';
import { LogFollower } from './log-follower';

const memoryCheckpoints = (): CheckpointStore => {
  const positions = new Map<string, string>();
  return { load: (name) => positions.get(name), save: (name, position) => void positions.set(name, position) };
};

/** A follower that records what it handled and saves its checkpoint after each batch. */
const following = (store: EventStore, options: { pollIntervalMs: number; slowBatchMs?: number }) => {
  const checkpoints = memoryCheckpoints();
  const handled: RecordedEvent[] = [];
  const follower = new LogFollower({
    name: 'test',
    store,
    checkpoints,
    pollIntervalMs: options.pollIntervalMs,
    handleBatch: async (events) => {
      if (options.slowBatchMs) await new Promise((resolve) => setTimeout(resolve, options.slowBatchMs));
      handled.push(...events);
      checkpoints.save('test', events[events.length - 1]!.position);
    },
  });
  return { follower, handled };
};

describe('LogFollower', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = new SqliteEventStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it('handles an append through its store at once, without waiting for the poll', async () => {
    const { follower, handled } = following(store, { pollIntervalMs: 60_000 });
    follower.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50)); // the first pass (an empty log) is over
      const appendedAt = performance.now();
      await store.append('s-1', [{ type: 'Happened', data: {} }], { expectedRevision: 'no_stream' });
      await vi.waitFor(() => expect(handled).toHaveLength(1), { timeout: 1000, interval: 2 });
      expect(performance.now() - appendedAt).toBeLessThan(500);
    } finally {
      await follower.stop();
    }
  });

  it('does not miss an append made while a batch is being handled', async () => {
    const { follower, handled } = following(store, { pollIntervalMs: 60_000, slowBatchMs: 100 });
    follower.start();
    try {
      await store.append('s-1', [{ type: 'First', data: {} }], { expectedRevision: 'no_stream' });
      // The first batch is under way (it takes 100 ms): this append lands after its read.
      await new Promise((resolve) => setTimeout(resolve, 30));
      await store.append('s-1', [{ type: 'Second', data: {} }], { expectedRevision: 0 });
      await vi.waitFor(() => expect(handled.map((event) => event.type)).toEqual(['First', 'Second']), {
        timeout: 2000,
      });
    } finally {
      await follower.stop();
    }
  });

  it('stops listening when stopped', async () => {
    const { follower, handled } = following(store, { pollIntervalMs: 60_000 });
    follower.start();
    await follower.stop();
    await store.append('s-1', [{ type: 'Happened', data: {} }], { expectedRevision: 'no_stream' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(handled).toHaveLength(0);
  });

  it("polls only as a slow fallback when the store reports every writer's appends", async () => {
    const reads: number[] = [];
    const allWriters: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendNotifications: 'all-writers' as const,
      readAll: (options?: Parameters<EventStore['readAll']>[0]) => {
        reads.push(performance.now());
        return store.readAll(options);
      },
    });
    const { follower } = following(allWriters, { pollIntervalMs: 20 });
    follower.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      // 20 ms polls would read ~20 times; the fallback (at least 1 s) reads once, at start.
      expect(reads.length).toBeLessThanOrEqual(2);
    } finally {
      await follower.stop();
    }
  });
});
