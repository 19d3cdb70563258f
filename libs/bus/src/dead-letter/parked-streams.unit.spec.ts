import { errorText } from './dead-letter-records';
import { ParkedStreams } from './parked-streams';

describe('ParkedStreams', () => {
  it('round-trips through the commit metadata, and nothing parked is no metadata', () => {
    const parked = ParkedStreams.none.withEntry('stream-1', 4).withEntry('stream-1', 9).withEntry('stream-2', 7);
    expect(ParkedStreams.decode(parked.encode()).entries()).toEqual([
      ['stream-1', { first: 4, last: 9 }],
      ['stream-2', { first: 7, last: 7 }],
    ]);
    expect(ParkedStreams.none.encode()).toBeNull();
  });

  it('reads metadata it did not write (another tool, a reset) as nothing parked', () => {
    for (const metadata of [
      null,
      undefined,
      '',
      'something else',
      'switchyard.parked.v1:{not json',
      'switchyard.parked.v1:{"a":1}',
    ]) {
      expect(ParkedStreams.decode(metadata).size).toBe(0);
    }
  });

  it('takes a replayed entry only when it is the oldest pending one, and releases the stream after the last', () => {
    const parked = ParkedStreams.none.withEntry('s', 3).withEntry('s', 7);
    expect(parked.isNext('s', 3, -1)).toBe(true);
    expect(parked.isNext('s', 7, 3)).toBe(false); // 3 is still pending
    const afterFirst = parked.withDoneThrough('s', 3);
    expect(afterFirst.isNext('s', 3, -1)).toBe(false); // done already
    expect(afterFirst.isNext('s', 7, 3)).toBe(true);
    expect(afterFirst.withDoneThrough('s', 7).has('s')).toBe(false);
    // An entry of an earlier parking of the same stream is never taken again.
    expect(ParkedStreams.none.withEntry('s', 12).isNext('s', 7, 3)).toBe(false);
  });
});

describe('errorText', () => {
  it('keeps the name and message, masks digit runs that could be a card number, and bounds the length', () => {
    expect(errorText(new TypeError('bad card 4111 1111 1111 1111 in 4111-1111-1111-1111 or 4111111111111111'))).toBe(
      'TypeError: bad card [digits] in [digits] or [digits]',
    );
    expect(errorText(new Error('order 12345 failed'))).toBe('Error: order 12345 failed');
    expect(errorText('x'.repeat(5_000))).toHaveLength(1_000);
  });
});
