import type { RecordedEvent } from '../event-store';
import { checkpointNow, event, newStreamId, ofStreams, summary, type ContractContext } from './contract-support';

export function readContract({ store, options }: ContractContext): void {
  describe('readStream', () => {
    describe('given a stream of five events', () => {
      let streamId: string;
      beforeAll(async () => {
        streamId = newStreamId('gift-card');
        await store().append(
          streamId,
          [0, 1, 2, 3, 4].map((index) => event(`Step${index}`, { index })),
          { expectedRevision: 'no_stream' },
        );
      });

      const revisionsRead = async (read: { fromRevision?: number; maxCount?: number }) =>
        (await store().readStream(streamId, read)).map((recorded) => recorded.revision);

      it('reads every event in revision order', async () => {
        const events = await store().readStream(streamId);
        expect(events.map((recorded) => [recorded.revision, recorded.type, recorded.data])).toEqual(
          [0, 1, 2, 3, 4].map((index) => [index, `Step${index}`, { index }]),
        );
      });

      it('reads from an inclusive revision', async () => {
        expect(await revisionsRead({ fromRevision: 3 })).toEqual([3, 4]);
      });

      it('reads at most maxCount events', async () => {
        expect(await revisionsRead({ maxCount: 2 })).toEqual([0, 1]);
        expect(await revisionsRead({ fromRevision: 1, maxCount: 3 })).toEqual([1, 2, 3]);
      });

      it('reads nothing past the end', async () => {
        expect(await revisionsRead({ fromRevision: 5 })).toEqual([]);
      });
    });

    it('given no stream, reads an empty array', async () => {
      expect(await store().readStream(newStreamId('missing'))).toEqual([]);
      expect(await store().readStream(newStreamId('missing'), { fromRevision: 2, maxCount: 2 })).toEqual([]);
    });
  });

  describe('readAll', () => {
    describe('given events interleaved across two streams', () => {
      let checkpoint: string;
      let streamA: string;
      let streamB: string;
      let appended: RecordedEvent[];
      beforeAll(async () => {
        checkpoint = await checkpointNow(store());
        streamA = newStreamId('transaction');
        streamB = newStreamId('transaction');
        await store().append(streamA, [event('A0')], { expectedRevision: 'no_stream' });
        await store().append(streamB, [event('B0')], { expectedRevision: 'no_stream' });
        await store().append(streamA, [event('A1'), event('A2')], { expectedRevision: 0 });
        await store().append(streamB, [event('B1')], { expectedRevision: 0 });
        appended = ofStreams(await store().readAll({ after: checkpoint }), streamA, streamB);
      });

      it('reads them in the order they were appended', () => {
        expect(appended.map((recorded) => recorded.type)).toEqual(['A0', 'B0', 'A1', 'A2', 'B1']);
        expect(summary(appended)).toEqual([
          `${streamA}@0:A0`,
          `${streamB}@0:B0`,
          `${streamA}@1:A1`,
          `${streamA}@2:A2`,
          `${streamB}@1:B1`,
        ]);
      });

      it('gives each event the same position as readStream', async () => {
        const byStream = [...(await store().readStream(streamA)), ...(await store().readStream(streamB))];
        for (const recorded of appended) {
          expect(byStream.find((other) => other.id === recorded.id)?.position).toBe(recorded.position);
        }
      });

      it('gives positions that strictly increase', () => {
        expect(new Set(appended.map((recorded) => recorded.position)).size).toBe(appended.length);
        const compare = options.comparePositions;
        if (!compare) return;
        expect(compare(checkpoint, appended[0]!.position)).toBeLessThan(0);
        for (let index = 1; index < appended.length; index++) {
          expect(compare(appended[index - 1]!.position, appended[index]!.position)).toBeLessThan(0);
        }
      });

      it('reads strictly after the checkpoint given', async () => {
        const afterB0 = appended[1]!.position;

        const events = await store().readAll({ after: afterB0 });

        expect(events.some((recorded) => recorded.position === afterB0)).toBe(false);
        expect(ofStreams(events, streamA, streamB).map((recorded) => recorded.type)).toEqual(['A1', 'A2', 'B1']);
      });

      it('reads at most maxCount events', async () => {
        const everything = await store().readAll({ after: checkpoint });

        const firstTwo = await store().readAll({ after: checkpoint, maxCount: 2 });

        expect(firstTwo.map((recorded) => recorded.id)).toEqual(everything.slice(0, 2).map((recorded) => recorded.id));
      });

      it('reads from the start of the log when no checkpoint is given', async () => {
        const first = await store().readAll({ maxCount: 1 });
        expect(first).toHaveLength(1);
        expect(first[0]!.type.startsWith('$')).toBe(false);
      });
    });
  });
}
