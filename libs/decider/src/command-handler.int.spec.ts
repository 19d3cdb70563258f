import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '@switchyard/eventstore';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleCommands } from './command-handler';
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
