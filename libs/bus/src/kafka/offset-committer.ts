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
 */
export class OffsetCommitter {
  private readonly pending = new Map<string, OffsetCommit>();
  /** The request waiting to go out: every commit asked for before it starts joins it. */
  private next: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly send: (commits: readonly OffsetCommit[]) => Promise<void>,
    private readonly onAcknowledgeFailure: (error: unknown) => void,
  ) {}

  /** Commits with the next request and resolves once the broker has it (or a later offset of each partition). */
  commit(commits: readonly OffsetCommit[]): Promise<void> {
    for (const commit of commits) this.pending.set(`${commit.topic}\u0000${commit.partition}`, commit);
    if (this.next) return this.next;
    const run = this.tail.then(() => {
      this.next = null;
      const batch = [...this.pending.values()];
      this.pending.clear();
      return this.send(batch);
    });
    this.next = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Commits with the next request, not waited for; a failure is reported (the group redelivers the messages). */
  acknowledge(commit: OffsetCommit): void {
    this.commit([commit]).catch(this.onAcknowledgeFailure);
  }

  /** Resolves once every commit asked for so far has been sent and answered (failed or not). */
  settled(): Promise<void> {
    return this.tail;
  }
}
