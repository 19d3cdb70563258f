import { deduplicating, InMemorySeenEventIds } from './dedupe';
import type { IncomingMessage } from './message-bus';

const message = (headers: Record<string, string>): IncomingMessage => ({
  topic: 't',
  key: 'k',
  value: 'v',
  headers,
  partition: 0,
  offset: '0',
});

describe('deduplicating', () => {
  it('calls the handler once per event id', async () => {
    const handled: string[] = [];
    const handler = deduplicating(
      async (m) => void handled.push(m.headers['event-id'] ?? ''),
      new InMemorySeenEventIds(),
    );
    for (const id of ['a', 'b', 'a', 'a', 'b', 'c']) await handler(message({ 'event-id': id }));
    expect(handled).toEqual(['a', 'b', 'c']);
  });

  it('does not mark an id whose handler rejected, so the redelivery is handled', async () => {
    let calls = 0;
    const handler = deduplicating(async () => {
      calls += 1;
      if (calls === 1) throw new Error('first attempt fails');
    }, new InMemorySeenEventIds());
    await expect(handler(message({ 'event-id': 'a' }))).rejects.toThrow('first attempt fails');
    await handler(message({ 'event-id': 'a' }));
    await handler(message({ 'event-id': 'a' }));
    expect(calls).toBe(2);
  });

  it('handles every message that carries no event id', async () => {
    let calls = 0;
    const handler = deduplicating(async () => void (calls += 1), new InMemorySeenEventIds());
    await handler(message({}));
    await handler(message({}));
    expect(calls).toBe(2);
  });

  it('reads another header when told to', async () => {
    let calls = 0;
    const handler = deduplicating(async () => void (calls += 1), new InMemorySeenEventIds(), { header: 'x-id' });
    await handler(message({ 'x-id': '1' }));
    await handler(message({ 'x-id': '1' }));
    expect(calls).toBe(1);
  });
});

describe('InMemorySeenEventIds', () => {
  it('forgets the least recently added ids beyond its capacity', async () => {
    const seen = new InMemorySeenEventIds(2);
    await seen.add('a');
    await seen.add('b');
    await seen.add('a'); // refreshed: b is now the oldest
    await seen.add('c');
    expect([await seen.has('a'), await seen.has('b'), await seen.has('c')]).toEqual([true, false, true]);
    expect(seen.size).toBe(2);
  });
});
