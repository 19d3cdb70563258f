/** `dead-letters list | replay | discard` against the embedded runtime's data directory, with its bus running. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  InProcessBroker,
  InProcessMessageBus,
  listDeadLetters,
  SqliteBusState,
  type IncomingMessage,
} from '@switchyard/bus';
import { runCli } from '@switchyard/testing';

const quiet = {
  onHandlerFailure: () => undefined,
  onDeadLetter: () => undefined,
  redelivery: { initialDelayMs: 5, maxAttempts: 2 },
};

// Each CLI run is a process of its own (a few seconds on a busy machine).
describe('dead-letters, embedded (DATA_DIR/bus.db)', { timeout: 120_000 }, () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-dead-letters-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCli({ DATA_DIR: dataDir }, 'dead-letters', ...args, '--source', 'data-dir');

  it('lists what the running bus parked, replays it in order once the handler is fixed, and discards', async () => {
    expect(JSON.parse((await cli('list')).stdout)).toEqual({ items: [] }); // no bus.db yet

    const state = SqliteBusState.open(dataDir);
    const broker = new InProcessBroker({ durable: state, durablePollIntervalMs: 50 });
    const bus = new InProcessMessageBus({ broker, ...quiet });
    let fixed = false;
    const handled: string[] = [];
    await bus.subscribe({
      groupId: 'webhooks',
      topics: ['transactions.events'],
      handler: async (message: IncomingMessage) => {
        if (message.value.startsWith('poison') && !fixed) throw new Error('cannot render 4111111111111111');
        handled.push(message.value);
      },
    });
    try {
      await bus.publish('transactions.events', [
        { key: 'tx-1', value: 'poison-1', headers: { 'event-id': 'e1', 'event-type': 'TransactionAuthorized' } },
        { key: 'tx-1', value: 'after-1' },
        { key: 'tx-2', value: 'poison-2' },
        { key: 'tx-3', value: 'fine' },
      ]);
      await vi.waitFor(() => expect(handled).toEqual(['fine']));

      const listed = await cli('list', '--group', 'webhooks');
      expect(listed.code).toBe(0);
      const items = JSON.parse(listed.stdout).items as Array<Record<string, unknown>>;
      expect(items.map((item) => [item.key, item.reason, item.state])).toEqual([
        ['tx-1', 'failed', 'parked'],
        ['tx-1', 'behind-parked', 'parked'],
        ['tx-2', 'failed', 'parked'],
      ]);
      expect(items[0]).toMatchObject({
        group: 'webhooks',
        topic: 'transactions.events',
        attempts: 2,
        event_id: 'e1',
        event_type: 'TransactionAuthorized',
      });
      expect(items[0]?.error).toBe('Error: cannot render [digits]');

      fixed = true;
      const replay = await cli(
        'replay',
        '--group',
        'webhooks',
        '--topic',
        'transactions.events',
        '--key',
        'tx-1',
        '--wait-seconds',
        '20',
      );
      expect(replay.code).toBe(0);
      expect(JSON.parse(replay.stdout)).toEqual({
        requested: { streams: 1, messages: 2 },
        released: ['tx-1'],
        still_parked: {},
      });
      expect(replay.stderr).toContain('1 of 1 stream(s) released');
      expect(handled).toEqual(['fine', 'poison-1', 'after-1']);

      const discard = await cli('discard', '--group', 'webhooks', '--topic', 'transactions.events', '--key', 'tx-2');
      expect(JSON.parse(discard.stdout)).toEqual({ streams: 1, messages: 1 });
      await vi.waitFor(async () => expect(JSON.parse((await cli('list')).stdout).items).toEqual([]), {
        timeout: 60_000,
        interval: 200,
      });
      await bus.publish('transactions.events', [{ key: 'tx-2', value: 'later' }]);
      await vi.waitFor(() => expect(handled).toEqual(['fine', 'poison-1', 'after-1', 'later']));
      expect(
        JSON.parse((await cli('list', '--all')).stdout).items.map((item: { state: string }) => item.state),
      ).toEqual(['done', 'done', 'done']);
    } finally {
      await bus.close();
      broker.close();
      await state.close();
    }
  });

  it('says so with a non-zero exit when the replay does not finish (the handler still fails)', async () => {
    const state = SqliteBusState.open(dataDir);
    const broker = new InProcessBroker({ durable: state, durablePollIntervalMs: 50 });
    const bus = new InProcessMessageBus({ broker, ...quiet });
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      handler: async () => Promise.reject(new Error('still broken')),
    });
    try {
      await bus.publish('t', [{ key: 'k', value: 'v' }]);
      await vi.waitFor(async () => expect(await listDeadLetters(state)).toHaveLength(1));
      const replay = await cli('replay', '--group', 'g', '--topic', 't', '--wait-seconds', '2');
      expect(replay.code).toBe(1);
      expect(JSON.parse(replay.stdout)).toMatchObject({ released: [], still_parked: { k: 1 } });
      expect(replay.stderr).toContain('some streams are still parked');
    } finally {
      await bus.close();
      broker.close();
      await state.close();
    }
  });
});
