import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OffsetCommit } from '../dead-letter/dead-lettering';
import { OffsetCommitter } from './offset-committer';

const at = (partition: number, offset: number, metadata: string | null = null): OffsetCommit => ({
  topic: 't',
  partition,
  offset: String(offset),
  metadata,
});

/** A broker whose answers the test releases one at a time. */
function heldBroker() {
  const sent: OffsetCommit[][] = [];
  const answers: Array<(error?: Error) => void> = [];
  const send = (commits: readonly OffsetCommit[]) =>
    new Promise<void>((resolve, reject) => {
      sent.push([...commits]);
      answers.push((error) => (error ? reject(error) : resolve()));
    });
  const answerNext = async (error?: Error) => {
    answers.shift()!(error);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { sent, send, answerNext };
}

describe('OffsetCommitter', () => {
  it('sends what is acknowledged while a request is in flight with the next one, the latest offset per partition', async () => {
    const broker = heldBroker();
    const committer = new OffsetCommitter(broker.send, () => undefined);
    committer.acknowledge(at(0, 1));
    await new Promise((resolve) => setImmediate(resolve));
    for (let offset = 2; offset <= 50; offset += 1) committer.acknowledge(at(offset % 2, offset));
    expect(broker.sent).toEqual([[at(0, 1)]]);
    await broker.answerNext();
    expect(broker.sent).toEqual([[at(0, 1)], [at(0, 50), at(1, 49)]]);
    await broker.answerNext();
    await committer.settled();
    expect(broker.sent).toHaveLength(2);
  });

  it('a waited commit resolves once its request is answered, and no earlier commit lands after it', async () => {
    const broker = heldBroker();
    const committer = new OffsetCommitter(broker.send, () => undefined);
    committer.acknowledge(at(0, 5));
    await new Promise((resolve) => setImmediate(resolve));
    committer.acknowledge(at(0, 6));
    let parked = false;
    const park = committer.commit([at(0, 7, 'parked')]).then(() => (parked = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(parked).toBe(false);
    await broker.answerNext();
    expect(parked).toBe(false);
    // Offset 6's commit went with the parked one, superseded by it: the broker never gets 6 after 7.
    expect(broker.sent).toEqual([[at(0, 5)], [at(0, 7, 'parked')]]);
    await broker.answerNext();
    await park;
    expect(parked).toBe(true);
  });

  it('a waited commit fails with its request; an acknowledged one reports its failure and the next still goes', async () => {
    const broker = heldBroker();
    const failures: unknown[] = [];
    const committer = new OffsetCommitter(broker.send, (error) => failures.push(error));
    committer.acknowledge(at(0, 1));
    await new Promise((resolve) => setImmediate(resolve));
    await broker.answerNext(new Error('rebalancing'));
    expect(failures).toEqual([new Error('rebalancing')]);
    const waited = committer.commit([at(0, 2, 'm')]);
    await new Promise((resolve) => setImmediate(resolve));
    await broker.answerNext(new Error('not the coordinator'));
    await expect(waited).rejects.toThrow('not the coordinator');
    committer.acknowledge(at(0, 3));
    await new Promise((resolve) => setImmediate(resolve));
    await broker.answerNext();
    await committer.settled();
    expect(broker.sent.at(-1)).toEqual([at(0, 3)]);
  });

  describe('with acknowledgeAfterMs', () => {
    afterEach(() => vi.useRealTimers());

    it('sends the acknowledged offsets of that long in one request, the latest per partition', async () => {
      vi.useFakeTimers();
      const broker = heldBroker();
      const committer = new OffsetCommitter(broker.send, () => undefined, 250);
      for (let offset = 1; offset <= 40; offset += 1) {
        committer.acknowledge(at(offset % 2, offset));
        await vi.advanceTimersByTimeAsync(5);
      }
      expect(broker.sent).toEqual([]);
      await vi.advanceTimersByTimeAsync(50);
      expect(broker.sent).toEqual([[at(1, 39), at(0, 40)]]);
      committer.acknowledge(at(0, 41));
      await vi.advanceTimersByTimeAsync(249);
      expect(broker.sent).toHaveLength(1);
      broker.answerNext();
      await vi.advanceTimersByTimeAsync(1);
      expect(broker.sent).toEqual([[at(1, 39), at(0, 40)], [at(0, 41)]]);
    });

    it('a waited commit takes the waiting offsets with it, at once', async () => {
      vi.useFakeTimers();
      const broker = heldBroker();
      const committer = new OffsetCommitter(broker.send, () => undefined, 250);
      committer.acknowledge(at(1, 8));
      const parked = committer.commit([at(0, 9, 'parked')]);
      await vi.advanceTimersByTimeAsync(0);
      expect(broker.sent).toEqual([[at(1, 8), at(0, 9, 'parked')]]);
      broker.answerNext();
      await parked;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(broker.sent).toHaveLength(1);
    });

    it('settled (a stop) sends what waits without waiting out the delay', async () => {
      const broker = heldBroker();
      const committer = new OffsetCommitter(broker.send, () => undefined, 60_000);
      committer.acknowledge(at(0, 3));
      const settled = committer.settled();
      await new Promise((resolve) => setImmediate(resolve));
      expect(broker.sent).toEqual([[at(0, 3)]]);
      await broker.answerNext();
      await settled;
    });
  });
});
