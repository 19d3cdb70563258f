import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '@switchyard/eventstore';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appendEvents, handleCommands, loadState, StreamStates } from './command-handler';
import { DomainError, type Decider } from './decider';

/** A counter that refuses to go below zero or past a close. */
type Command = { type: 'add'; by: number } | { type: 'close' };
type Event = { type: 'Added'; data: { by: number } } | { type: 'Closed'; data: Record<string, never> };
interface State {
  total: number;
  closed: boolean;
}
const counter: Decider<Command, Event, State> = {
  initialState: () => ({ total: 0, closed: false }),
  evolve: (state, event) =>
    event.type === 'Added' ? { ...state, total: state.total + event.data.by } : { ...state, closed: true },
  decide: (command, state) => {
    if (state.closed) throw new DomainError('closed', 'the counter is closed');
    if (command.type === 'close') return [{ type: 'Closed', data: {} }];
    if (state.total + command.by < 0) throw new DomainError('negative', 'the counter cannot go below zero');
    return [{ type: 'Added', data: { by: command.by } }];
  },
};

let dir: string;
let store: SqliteEventStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-decider-'));
  store = new SqliteEventStore(path.join(dir, 'events.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const types = async () => (await store.readStream('counter-1')).map((event) => event.type);

describe('handleCommands', () => {
  it('decides each command on the state the ones before it leave, and appends all their events at once', async () => {
    const handled = await handleCommands(store, 'counter-1', counter, [
      { type: 'add', by: 2 },
      { type: 'add', by: -2 },
      { type: 'close' },
    ]);
    expect(handled.state).toEqual({ total: 0, closed: true });
    expect(await types()).toEqual(['Added', 'Added', 'Closed']);
    expect(handled.appended?.nextExpectedRevision).toBe(2);
  });

  it('appends nothing when one command is refused', async () => {
    await expect(
      handleCommands(store, 'counter-1', counter, [
        { type: 'add', by: 1 },
        { type: 'add', by: -5 },
      ]),
    ).rejects.toMatchObject({ code: 'negative' });
    expect(await types()).toEqual([]);
  });

  it('leaves out a command whose refusal `skip` accepts, and goes ahead with the others', async () => {
    const handled = await handleCommands(
      store,
      'counter-1',
      counter,
      [{ type: 'add', by: -1 }, { type: 'add', by: 3 }, { type: 'close' }],
      { skip: (refusal) => refusal instanceof DomainError && refusal.code === 'negative' },
    );
    expect(handled.state).toEqual({ total: 3, closed: true });
    expect(await types()).toEqual(['Added', 'Closed']);
  });
});

describe('with the states of hot streams kept (StreamStates)', () => {
  it('reads only the events after the state it kept, and decides as from the whole stream', async () => {
    const states = new StreamStates<State>();
    const read = vi.spyOn(store, 'readStream');
    await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: 2 }], { states });
    await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: 3 }], { states });
    const handled = await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: -4 }], { states });
    expect(handled.state).toEqual({ total: 1, closed: false });
    expect(read.mock.calls.map(([, options]) => options?.fromRevision ?? 0)).toEqual([0, 1, 2]);
    expect(await loadState(store, 'counter-1', counter, { states })).toEqual({ total: 1, closed: false });
  });

  it("sees another writer's events: the money rule holds on the whole stream", async () => {
    const states = new StreamStates<State>();
    await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: 5 }], { states });
    // Another process (or a path that appends without the cache) takes 4.
    await appendEvents(store, 'counter-1', [{ type: 'Added', data: { by: -4 } }], { expectedRevision: 0 });
    await expect(
      handleCommands(store, 'counter-1', counter, [{ type: 'add', by: -2 }], { states }),
    ).rejects.toMatchObject({ code: 'negative' });
    expect((await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: -1 }], { states })).state).toEqual({
      total: 0,
      closed: false,
    });
  });

  it('decides again from the stream after losing a race, and keeps no state of a refused decision', async () => {
    const states = new StreamStates<State>();
    await handleCommands(store, 'counter-1', counter, [{ type: 'add', by: 5 }], { states });
    const append = store.append.bind(store);
    let raced = false;
    vi.spyOn(store, 'append').mockImplementation(async (streamId, events, options) => {
      if (!raced) {
        raced = true;
        // The other writer's append lands between this one's read and its append.
        await append(streamId, [{ type: 'Added', data: { by: -3 } }], { expectedRevision: 0 });
      }
      return append(streamId, events, options);
    });
    await expect(
      handleCommands(store, 'counter-1', counter, [{ type: 'add', by: -4 }], { states }),
    ).rejects.toMatchObject({ code: 'negative' });
    expect(await loadState(store, 'counter-1', counter, { states })).toEqual({ total: 2, closed: false });
    expect((await store.readStream('counter-1')).map((event) => event.data)).toEqual([{ by: 5 }, { by: -3 }]);
  });

  it('keeps at most its limit of streams, the least recently used forgotten first', () => {
    const states = new StreamStates<State>(2);
    states.keep('a', 0, { total: 1, closed: false });
    states.keep('b', 0, { total: 2, closed: false });
    states.get('a');
    states.keep('c', 0, { total: 3, closed: false });
    expect(states.get('b')).toBeUndefined();
    expect(states.get('a')).toEqual({ revision: 0, state: { total: 1, closed: false } });
    expect(states.size).toBe(2);
  });
});
