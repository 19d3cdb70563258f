import type { OffsetCommit } from '../dead-letter/dead-lettering';

/**
 * A consumer's offset commits, one request at a time and in order: every commit asked for while one is in flight
 * goes out with the next request, the latest offset of each partition only. A handled message's commit
 * (`acknowledge`) is not waited for — the next message of its partition is handled meanwhile — so a partition read in
 * a batch costs one commit request per round trip to the broker instead of one per message; a commit that changes a
 * partition's parked streams (`commit`) is waited for, and no earlier commit can land after it.
 *
 * At least once, as before: a crash (or a rebalance) before an acknowledged offset reached the broker hands its
 * messages to the group again, as a crash between a handler and its commit always could.
 *
 * With `acknowledgeAfterMs`, an acknowledged offset waits that long for the next request (a waited commit, or the
 * timer): a consumer that handles a message every few milliseconds commits a few times a second instead of once per
 * round trip, each commit a write to the broker's offsets log. A crash then hands back up to that long of handled
 * messages (consumers drop repeats by id); `settled` (a stop) sends what waits at once.
 */
export class OffsetCommitter {
  private readonly pending = new Map<string, OffsetCommit>();
  /** The request waiting to go out: every commit asked for before it starts joins it. */
  private next: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  /** Acknowledged offsets waiting for `acknowledgeAfterMs`; null when none wait. */
  private delayed: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (commits: readonly OffsetCommit[]) => Promise<void>,
    private readonly onAcknowledgeFailure: (error: unknown) => void,
    private readonly acknowledgeAfterMs = 0,
  ) {}

  /** Commits with the next request and resolves once the broker has it (or a later offset of each partition). */
  commit(commits: readonly OffsetCommit[]): Promise<void> {
    for (const commit of commits) this.enqueue(commit);
    if (this.next) return this.next;
    const run = this.tail.then(() => {
      this.next = null;
      this.stopWaiting();
      const batch = [...this.pending.values()];
      this.pending.clear();
      return batch.length > 0 ? this.send(batch) : undefined;
    });
    this.next = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Commits with the next request (at the latest `acknowledgeAfterMs` from now), not waited for; a failure is reported
   * (the group redelivers the messages).
   */
  acknowledge(commit: OffsetCommit): void {
    if (this.acknowledgeAfterMs <= 0) {
      this.commit([commit]).catch(this.onAcknowledgeFailure);
      return;
    }
    this.enqueue(commit);
    if (this.next || this.delayed) return;
    this.delayed = setTimeout(() => {
      this.delayed = null;
      this.commit([]).catch(this.onAcknowledgeFailure);
    }, this.acknowledgeAfterMs);
    this.delayed.unref();
  }

  /** Resolves once every commit asked for so far has been sent and answered (failed or not); sends what waits now. */
  settled(): Promise<void> {
    if (this.delayed) this.commit([]).catch(this.onAcknowledgeFailure);
    return this.tail;
  }

  /** Joins the next request: the latest offset of each partition. */
  private enqueue(commit: OffsetCommit): void {
    this.pending.set(`${commit.topic}\u0000${commit.partition}`, commit);
  }

  private stopWaiting(): void {
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = null;
  }
}
