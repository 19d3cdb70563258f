import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listDeadLetters, requestReplay } from '../dead-letter/dead-letter-log';
import type { IncomingMessage } from '../message-bus';
import { SqliteBusState } from './durable-bus-state';
import { InProcessBroker } from './in-process-broker';
import { InProcessMessageBus } from './in-process-message-bus';

const quiet = {
  onHandlerFailure: () => undefined,
  onDeadLetter: () => undefined,
  redelivery: { initialDelayMs: 5, maxAttempts: 2 },
};

describe('the in-process bus with durable state (the embedded runtime, DATA_DIR/bus.db)', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bus-state-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('keeps a parked stream across a restart, and replays it on a command another process appended', async () => {
    let fixed = false;
    const handled: IncomingMessage[] = [];
    const handler = async (message: IncomingMessage) => {
      if (message.value === 'poison' && !fixed) throw new Error('deliberate refusal');
      handled.push(message);
    };

    const firstState = SqliteBusState.open(dataDir);
    const first = new InProcessMessageBus({ broker: new InProcessBroker({ durable: firstState }), ...quiet });
    await first.subscribe({ groupId: 'webhooks', topics: ['transactions.events'], handler });
    await first.publish('transactions.events', [
      { key: 'tx-1', value: 'poison' },
      { key: 'tx-1', value: 'second' },
    ]);
    await vi.waitFor(async () => expect(await listDeadLetters(firstState)).toHaveLength(2));
    await first.close();
    first.broker.close();
    await firstState.close();

    // The next run: the relay publishes what it had not seen acknowledged, and more of the same stream arrives.
    const state = SqliteBusState.open(dataDir);
    const broker = new InProcessBroker({ durable: state, durablePollIntervalMs: 20 });
    const bus = new InProcessMessageBus({ broker, ...quiet });
    await bus.subscribe({ groupId: 'webhooks', topics: ['transactions.events'], handler });
    await bus.publish('transactions.events', [
      { key: 'tx-1', value: 'third' },
      { key: 'tx-2', value: 'other' },
    ]);
    await vi.waitFor(() => expect(handled.map((message) => message.value)).toEqual(['other']));
    await vi.waitFor(async () => expect(await listDeadLetters(state)).toHaveLength(3));

    // The CLI: another connection to the same file.
    fixed = true;
    const cli = SqliteBusState.open(dataDir);
    expect(await requestReplay(cli, { group: 'webhooks', topic: 'transactions.events' })).toMatchObject({
      streams: 1,
      messages: 3,
    });
    await cli.close();
    await vi.waitFor(() =>
      expect(handled.map((message) => message.value)).toEqual(['other', 'poison', 'second', 'third']),
    );
    await vi.waitFor(async () => expect(await listDeadLetters(state)).toEqual([]));
    await bus.close();
    broker.close();
    await state.close();
  });
});
