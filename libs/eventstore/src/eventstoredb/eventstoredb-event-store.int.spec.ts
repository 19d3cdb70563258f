import { createServer } from 'node:net';
import { eventStoreContract } from '../contract';
import { EventStoreUnavailableError } from '../event-store';
import {
  compareEventStoreDbPositions,
  EventStoreDbEventStore,
  formatPosition,
  parsePosition,
} from './eventstoredb-event-store';
import { FakeEventStoreDbClient } from './test-support/fake-eventstoredb-client';

// No EventStoreDB server runs on the project's machines: the behaviour suite runs here against an in-memory
// stand-in for the client, which checks the adapter's own mapping (revisions, conflicts, positions, checkpoint
// exclusivity, system events, subscription loop). The real server is covered by the e2e spec.
eventStoreContract(
  'EventStoreDbEventStore over a fake client (adapter mapping only)',
  async () =>
    new EventStoreDbEventStore(new FakeEventStoreDbClient().asClient(), { retryBackoff: { initialDelayMs: 20 } }),
  { available: true },
  { comparePositions: compareEventStoreDbPositions },
);

/** A localhost port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  await new Promise((closed) => server.close(closed));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('EventStoreDbEventStore without a server', () => {
  let store: EventStoreDbEventStore;
  beforeAll(async () => {
    store = EventStoreDbEventStore.connect(`esdb://127.0.0.1:${await closedPort()}?tls=false`);
  });
  afterAll(async () => {
    await store.close();
  });

  it.each([
    ['ping', () => store.ping()],
    [
      'append',
      () => store.append('payment-1', [{ type: 'PaymentStarted', data: {} }], { expectedRevision: 'no_stream' }),
    ],
    ['readStream', () => store.readStream('payment-1')],
    ['readAll', () => store.readAll({ maxCount: 1 })],
  ])('%s fails with a retriable EventStoreUnavailableError', async (_, operation) => {
    const error = await operation().then(
      () => undefined,
      (failure: unknown) => failure,
    );

    expect(error).toBeInstanceOf(EventStoreUnavailableError);
    expect(error).toMatchObject({ type: 'event_store_unavailable', retriable: true });
  });

  it('refuses an event id that is not a UUID before calling the server', async () => {
    await expect(
      store.append('payment-1', [{ id: 'not-a-uuid', type: 'PaymentStarted', data: {} }], { expectedRevision: 'any' }),
    ).rejects.toBeInstanceOf(TypeError);
  });
});

describe('EventStoreDB positions', () => {
  it('round-trip as "<commit>/<prepare>" and order by commit, then prepare', () => {
    expect(formatPosition(parsePosition('1234/1200'))).toBe('1234/1200');
    expect(compareEventStoreDbPositions('100/90', '100/95')).toBeLessThan(0);
    expect(compareEventStoreDbPositions('200/10', '100/95')).toBeGreaterThan(0);
    expect(compareEventStoreDbPositions('100/95', '100/95')).toBe(0);
    expect(() => parsePosition('42')).toThrow(TypeError);
  });
});
