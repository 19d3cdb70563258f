import { randomUUID } from 'node:crypto';
import { WrongExpectedRevisionError } from '../event-store';
import { checkpointNow, event, newStreamId, ofStreams, rejectionOf, type ContractContext } from './contract-support';

export function appendContract({ store, options }: ContractContext): void {
  describe('append', () => {
    describe('given no stream', () => {
      it("when appending with 'no_stream', then the stream starts at revision 0", async () => {
        const streamId = newStreamId('payment');

        const result = await store().append(streamId, [event('PaymentStarted'), event('PaymentAuthorized')], {
          expectedRevision: 'no_stream',
        });

        expect(result.nextExpectedRevision).toBe(1);
        const events = await store().readStream(streamId);
        expect(events.map((recorded) => [recorded.revision, recorded.type])).toEqual([
          [0, 'PaymentStarted'],
          [1, 'PaymentAuthorized'],
        ]);
        expect(events[1]?.position).toBe(result.position);
      });

      it('when appending with a revision, then it conflicts with the actual revision no_stream', async () => {
        const streamId = newStreamId('payment');

        const error = await rejectionOf(store().append(streamId, [event('PaymentCaptured')], { expectedRevision: 0 }));

        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({
          type: 'wrong_expected_revision',
          streamId,
          expected: 0,
          actual: 'no_stream',
          retriable: true,
        });
        expect(await store().readStream(streamId)).toEqual([]);
      });

      it("when appending with 'any', then the stream is created", async () => {
        const streamId = newStreamId('payment');

        const result = await store().append(streamId, [event('PaymentStarted')], { expectedRevision: 'any' });

        expect(result.nextExpectedRevision).toBe(0);
      });
    });

    describe('given a stream at revision 1', () => {
      let streamId: string;
      beforeEach(async () => {
        streamId = newStreamId('payment');
        await store().append(streamId, [event('PaymentStarted'), event('PaymentAuthorized')], {
          expectedRevision: 'no_stream',
        });
      });

      it('when appending with revision 1, then the events follow at revisions 2 and 3', async () => {
        const result = await store().append(streamId, [event('PaymentCaptured'), event('PaymentRefunded')], {
          expectedRevision: 1,
        });

        expect(result.nextExpectedRevision).toBe(3);
        expect((await store().readStream(streamId)).map((recorded) => recorded.type)).toEqual([
          'PaymentStarted',
          'PaymentAuthorized',
          'PaymentCaptured',
          'PaymentRefunded',
        ]);
      });

      it('when appending three events with a stale revision, then it throws the typed conflict and writes none', async () => {
        const error = await rejectionOf(
          store().append(streamId, [event('PaymentCaptured'), event('PaymentRefunded'), event('PaymentRefunded')], {
            expectedRevision: 0,
          }),
        );

        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ type: 'wrong_expected_revision', streamId, expected: 0, actual: 1 });
        expect(await store().readStream(streamId)).toHaveLength(2);
      });

      it("when appending with 'no_stream', then it conflicts with the actual revision", async () => {
        const error = await rejectionOf(
          store().append(streamId, [event('PaymentStarted')], { expectedRevision: 'no_stream' }),
        );

        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ expected: 'no_stream', actual: 1 });
      });

      it("when appending with 'any', then the events follow whatever the revision", async () => {
        const result = await store().append(streamId, [event('NoteAdded')], { expectedRevision: 'any' });

        expect(result.nextExpectedRevision).toBe(2);
      });
    });

    describe('event content', () => {
      it('keeps data and metadata as given', async () => {
        const streamId = newStreamId('payment');
        const data = {
          amount: 1299,
          currency: 'USD',
          lines: [{ sku: 'a', quantity: 2 }],
          note: 'ünïcödé ✓',
          gift: null,
        };
        const metadata = { correlationId: randomUUID(), causationId: randomUUID(), merchantAccountId: 'default' };

        await store().append(
          streamId,
          [event('PaymentStarted', data, metadata), event('NoteAdded', 'a plain string')],
          {
            expectedRevision: 'no_stream',
          },
        );

        const [first, second] = await store().readStream(streamId);
        expect(first).toMatchObject({ streamId, type: 'PaymentStarted', data, metadata, revision: 0 });
        expect(second).toMatchObject({ data: 'a plain string', metadata: {} });
        expect(Number.isNaN(Date.parse(first?.recordedAt ?? ''))).toBe(false);
      });

      it('keeps the ids given and generates unique ids otherwise', async () => {
        const streamId = newStreamId('payment');
        const givenId = randomUUID();

        await store().append(
          streamId,
          [{ id: givenId, ...event('PaymentStarted') }, event('NoteAdded'), event('NoteAdded')],
          {
            expectedRevision: 'no_stream',
          },
        );

        const ids = (await store().readStream(streamId)).map((recorded) => recorded.id);
        expect(ids[0]).toBe(givenId);
        expect(new Set(ids).size).toBe(3);
        expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
      });
    });

    describe('concurrent writers', () => {
      it('when 50 appends expect the same revision, then exactly one wins and the others get the typed conflict', async () => {
        const streamId = newStreamId('refund-race');
        await store().append(streamId, [event('PaymentCaptured')], { expectedRevision: 'no_stream' });

        const outcomes = await Promise.allSettled(
          Array.from({ length: 50 }, (_, index) =>
            store().append(streamId, [event('PaymentRefunded', { index })], { expectedRevision: 0 }),
          ),
        );

        const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
        const losers = outcomes.flatMap((outcome) =>
          outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
        );
        expect(winners).toHaveLength(1);
        expect(losers.every((reason) => reason instanceof WrongExpectedRevisionError && reason.actual === 1)).toBe(
          true,
        );
        expect(await store().readStream(streamId)).toHaveLength(2);
      });

      it('when 200 appends hit 20 streams at once, then no stream has a gap and positions strictly increase', async () => {
        const streamIds = Array.from({ length: 20 }, () => newStreamId('busy'));
        const checkpoint = await checkpointNow(store());

        const results = await Promise.all(
          Array.from({ length: 200 }, (_, index) =>
            store().append(streamIds[index % 20]!, [event('Touched', { index })], { expectedRevision: 'any' }),
          ),
        );

        for (const streamId of streamIds) {
          const revisions = (await store().readStream(streamId)).map((recorded) => recorded.revision);
          expect(revisions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        }
        const log = ofStreams(await store().readAll({ after: checkpoint }), ...streamIds);
        expect(log).toHaveLength(200);
        expect(new Set(log.map((recorded) => recorded.position))).toEqual(
          new Set(results.map((result) => result.position)),
        );
        for (const streamId of streamIds) {
          expect(ofStreams(log, streamId).map((recorded) => recorded.revision)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        }
        const compare = options.comparePositions;
        if (compare) {
          for (let index = 1; index < log.length; index++) {
            expect(compare(log[index - 1]!.position, log[index]!.position)).toBeLessThan(0);
          }
        }
      });
    });
  });
}
