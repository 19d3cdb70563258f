/**
 * The store-to-Kafka check must catch what it claims to: an event the relay skipped, a message about an event the
 * store does not hold, one that says something else than the store, and a stream published out of order — while a
 * batch published again after a kill (at least once) is counted, not failed.
 */
import { verifyRelayed, type StoredEvent } from './relayed-events';

const stored: StoredEvent[] = [
  { id: 'e0', streamId: 's1', revision: 0, type: 'TransactionCreated' },
  { id: 'e1', streamId: 's1', revision: 1, type: 'CaptureRequested' },
  { id: 'e2', streamId: 's2', revision: 0, type: 'TransactionCreated' },
];

let offset = 0;
const message = (event: StoredEvent, partition = 0) => ({
  partition,
  offset: String(offset++),
  value: Buffer.from(
    JSON.stringify({ id: event.id, stream_id: event.streamId, revision: event.revision, type: event.type, data: {} }),
  ),
});

describe('verifyRelayed', () => {
  it('passes every stored event on the topic once or more, in order per stream, and counts the repeats', () => {
    const [e0, e1, e2] = stored as [StoredEvent, StoredEvent, StoredEvent];
    const result = verifyRelayed(stored, [message(e0), message(e2), message(e1), message(e1), message(e2)]);
    expect(result).toMatchObject({
      inStore: 3,
      onKafka: 3,
      messages: 5,
      republished: 2,
      missing: [],
      unknown: [],
      mismatched: [],
      outOfOrder: [],
      unreadable: 0,
    });
  });

  it('finds an event never published, one the store does not hold, one published otherwise, and a stream out of order', () => {
    const [e0, e1] = stored as [StoredEvent, StoredEvent, StoredEvent];
    const result = verifyRelayed(stored, [
      message(e1),
      message(e0),
      message({ id: 'stranger', streamId: 's9', revision: 0, type: 'X' }),
      { partition: 0, offset: String(offset++), value: Buffer.from('not json') },
    ]);
    expect(result.missing.map((e) => e.id)).toEqual(['e2']);
    expect(result.unknown).toEqual(['stranger']);
    expect(result.outOfOrder).toEqual([{ streamId: 's1', revisions: [1, 0] }]);
    expect(result.unreadable).toBe(1);

    const changed = verifyRelayed(stored, [message(e0), message({ ...e1, revision: 2 })]);
    expect(changed.mismatched).toEqual([expect.objectContaining({ id: 'e1' })]);
  });

  it('reads the topic in offset order within each partition, whatever order the messages came in', () => {
    const [e0, e1] = stored as [StoredEvent, StoredEvent, StoredEvent];
    const first = message(e0);
    const second = message(e1);
    expect(verifyRelayed(stored.slice(0, 2), [second, first]).outOfOrder).toEqual([]);
  });
});
