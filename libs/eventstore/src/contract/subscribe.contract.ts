import type { RecordedEvent, Subscription } from '../event-store';
import { event, newStreamId, ofStreams, sleep, waitUntil, type ContractContext } from './contract-support';

export function subscribeContract({ store, options }: ContractContext): void {
  describe('subscribe', () => {
    const running: Subscription[] = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map((subscription) => subscription.stop()));
    });

    /** Subscribes and collects the events of the given streams (the log holds other tests' events too). */
    const collect = (
      streamIds: string[],
      subscribeOptions: { after?: string; fail?: (event: RecordedEvent) => boolean } = {},
    ) => {
      const seen: RecordedEvent[] = [];
      const errors: Array<{ error: unknown; event: RecordedEvent }> = [];
      const subscription = store().subscribe({
        ...(subscribeOptions.after === undefined ? {} : { after: subscribeOptions.after }),
        handler: async (recorded) => {
          if (subscribeOptions.fail?.(recorded)) throw new Error(`handler refused ${recorded.type}`);
          seen.push(recorded);
        },
        onError: (error, recorded) => errors.push({ error, event: recorded }),
      });
      running.push(subscription);
      return { subscription, errors, seen: () => ofStreams(seen, ...streamIds), all: seen };
    };

    it('from the start: delivers the events already stored, then the ones appended later', async () => {
      const streamId = newStreamId('webhook');
      await store().append(streamId, [event('Stored0'), event('Stored1')], { expectedRevision: 'no_stream' });

      const { seen } = collect([streamId]);
      await waitUntil(() => seen().length === 2, 'the stored events');
      await store().append(streamId, [event('Live2')], { expectedRevision: 1 });
      await store().append(streamId, [event('Live3')], { expectedRevision: 2 });

      await waitUntil(() => seen().length === 4, 'the live events');
      expect(seen().map((recorded) => recorded.type)).toEqual(['Stored0', 'Stored1', 'Live2', 'Live3']);
    });

    it('from a checkpoint: delivers only the events after it', async () => {
      const streamId = newStreamId('webhook');
      await store().append(streamId, [event('Before')], { expectedRevision: 'no_stream' });
      const { position: checkpoint } = await store().append(streamId, [event('AtCheckpoint')], { expectedRevision: 0 });
      await store().append(streamId, [event('After1')], { expectedRevision: 1 });

      const { seen, all } = collect([streamId], { after: checkpoint });
      await waitUntil(() => seen().length === 1, 'the stored event after the checkpoint');
      await store().append(streamId, [event('After2')], { expectedRevision: 2 });

      await waitUntil(() => seen().length === 2, 'the live event');
      expect(seen().map((recorded) => recorded.type)).toEqual(['After1', 'After2']);
      expect(all.some((recorded) => recorded.position === checkpoint)).toBe(false);
      const compare = options.comparePositions;
      if (compare) expect(all.every((recorded) => compare(checkpoint, recorded.position) < 0)).toBe(true);
    });

    it('delivers in log order, across streams', async () => {
      const streamA = newStreamId('webhook');
      const streamB = newStreamId('webhook');
      const { seen } = collect([streamA, streamB]);

      await Promise.all([
        store().append(streamA, [event('A0'), event('A1')], { expectedRevision: 'no_stream' }),
        store().append(streamB, [event('B0')], { expectedRevision: 'no_stream' }),
      ]);
      await store().append(streamB, [event('B1')], { expectedRevision: 0 });

      await waitUntil(() => seen().length === 4, 'four events');
      const log = ofStreams(await store().readAll(), streamA, streamB);
      expect(seen().map((recorded) => recorded.id)).toEqual(log.map((recorded) => recorded.id));
    });

    it('when the handler throws once, then the same event is delivered again and the order is kept', async () => {
      const streamId = newStreamId('webhook');
      let failuresLeft = 1;
      const { seen, errors } = collect([streamId], {
        fail: (recorded) => recorded.streamId === streamId && recorded.type === 'Second' && failuresLeft-- > 0,
      });

      await store().append(streamId, [event('First'), event('Second'), event('Third')], {
        expectedRevision: 'no_stream',
      });

      await waitUntil(() => seen().length === 3, 'all three events after the retry');
      expect(seen().map((recorded) => recorded.type)).toEqual(['First', 'Second', 'Third']);
      const ownErrors = errors.filter((failure) => failure.event.streamId === streamId);
      expect(ownErrors).toHaveLength(1);
      expect(ownErrors[0]?.event.type).toBe('Second');
      expect(ownErrors[0]?.error).toBeInstanceOf(Error);
    });

    it('when stopped, then no further event is delivered', async () => {
      const streamId = newStreamId('webhook');
      const { subscription, seen } = collect([streamId]);
      await store().append(streamId, [event('BeforeStop')], { expectedRevision: 'no_stream' });
      await waitUntil(() => seen().length === 1, 'the event before stop');

      await subscription.stop();
      await store().append(streamId, [event('AfterStop')], { expectedRevision: 0 });
      await sleep(300);

      expect(seen().map((recorded) => recorded.type)).toEqual(['BeforeStop']);
    });

    it('stop() resolves only after the event being handled completes', async () => {
      const streamId = newStreamId('webhook');
      let handling = false;
      let completed = 0;
      const subscription = store().subscribe({
        handler: async (recorded) => {
          if (recorded.streamId !== streamId) return;
          handling = true;
          await sleep(150);
          completed += 1;
        },
      });
      running.push(subscription);
      await store().append(streamId, [event('Slow'), event('NeverHandled')], { expectedRevision: 'no_stream' });
      await waitUntil(() => handling, 'the handler to start');

      await subscription.stop();

      expect(completed).toBe(1);
      await sleep(200);
      expect(completed).toBe(1);
    });
  });

  describe('onAppended', () => {
    it('calls the listener after an append, and never once stopped', async () => {
      let calls = 0;
      const stop = store().onAppended(() => {
        calls += 1;
      });
      const streamId = newStreamId('watched');
      try {
        // An adapter that learns of appends from the server may start listening a moment after the call: append
        // until it reports one (a missed wake-up costs a follower only its fallback poll).
        let revision = -1;
        const deadline = Date.now() + 5000;
        while (calls === 0) {
          if (Date.now() > deadline) throw new Error('the listener was never called');
          await store().append(streamId, [event('Watched')], {
            expectedRevision: revision < 0 ? 'no_stream' : revision,
          });
          revision += 1;
          await sleep(50);
        }
      } finally {
        stop();
      }
      await sleep(100);
      const before = calls;
      await store().append(newStreamId('watched'), [event('Unwatched')], { expectedRevision: 'no_stream' });
      await sleep(300);
      expect(calls).toBe(before);
    });

    it('does not fail an append when a listener throws', async () => {
      const stop = store().onAppended(() => {
        throw new Error('listener failed');
      });
      try {
        await expect(
          store().append(newStreamId('watched'), [event('Appended')], { expectedRevision: 'no_stream' }),
        ).resolves.toMatchObject({ nextExpectedRevision: 0 });
      } finally {
        stop();
      }
    });

    it('says whose appends it reports', () => {
      expect(['this-instance', 'all-writers']).toContain(store().appendNotifications);
    });
  });
}
