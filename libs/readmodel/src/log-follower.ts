import type { EventStore, RecordedEvent } from '@switchyard/eventstore';
import type { CheckpointStore } from './checkpoints';

export interface LogFollowerOptions {
  readonly name: string;
  readonly store: EventStore;
  readonly checkpoints: CheckpointStore;
  /**
   * Handles a batch in log order (read strictly after `after`); the checkpoint moves past the batch only when
   * this resolves.
   */
  readonly handleBatch: (events: readonly RecordedEvent[], after: string | undefined) => Promise<void>;
  readonly batchSize?: number;
  /**
   * How often to look for appends the store does not report (`EventStore.onAppended`): another process's appends
   * to a SQLite file. Default 100 ms. A store that reports every writer's appends (EventStoreDB) is polled only as
   * a fallback for a missed notification, every `fallbackPollIntervalMs`.
   */
  readonly pollIntervalMs?: number;
  /** The poll of a store that reports every writer's appends. Default 1 s (never more often than `pollIntervalMs`). */
  readonly fallbackPollIntervalMs?: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * Reads the store's log from a checkpoint in batches and hands each batch on, one pass at a time. Passes are
 * serialised, so a caller's `catchUp()` (read-your-writes after an append) and the polling loop never apply the
 * same events twice. A pass starts when the store reports an append (`onAppended`), else at the next poll: the
 * poll finds what the store cannot report (another process's appends) and what a lost notification left behind. A failed batch leaves the checkpoint where it was: it is retried, so delivery is
 * at-least-once and exactly-once where the handler commits the checkpoint with its own writes.
 */
export class LogFollower {
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private failures = 0;
  /** A timer-driven pass is under way. */
  private passing = false;
  /** An append was reported during that pass: run another one right after it. */
  private wokenDuringPass = false;
  private stopListening: (() => void) | undefined;

  constructor(private readonly options: LogFollowerOptions) {}

  get name(): string {
    return this.options.name;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopListening = this.options.store.onAppended(() => this.wake());
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopListening?.();
    this.stopListening = undefined;
    if (this.timer) clearTimeout(this.timer);
    await this.running.catch(() => undefined);
  }

  /** Resolves when every event appended before the call has been handled. */
  catchUp(): Promise<void> {
    const pass = this.running.catch(() => undefined).then(() => this.drain());
    this.running = pass;
    return pass;
  }

  /** The store reported an append: start a pass now, or right after the one under way. Not while backing off. */
  private wake(): void {
    if (this.stopped || this.failures > 0) return;
    if (this.passing) {
      this.wokenDuringPass = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private pollIntervalMs(): number {
    const poll = this.options.pollIntervalMs ?? 100;
    if (this.options.store.appendNotifications !== 'all-writers') return poll;
    return Math.max(poll, this.options.fallbackPollIntervalMs ?? 1000);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.passing = true;
      this.wokenDuringPass = false;
      this.catchUp().then(
        () => {
          this.passing = false;
          this.failures = 0;
          this.schedule(this.wokenDuringPass ? 0 : this.pollIntervalMs());
        },
        (error: unknown) => {
          this.passing = false;
          this.failures += 1;
          (this.options.onError ?? ((e) => console.error(`${this.options.name}:`, e)))(error);
          this.schedule(Math.min(5_000, 100 * 2 ** this.failures));
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    const batchSize = this.options.batchSize ?? 500;
    for (;;) {
      const after = this.options.checkpoints.load(this.options.name);
      const events = await this.options.store.readAll({
        ...(after !== undefined ? { after } : {}),
        maxCount: batchSize,
      });
      if (events.length === 0) return;
      await this.options.handleBatch(events, after);
      const last = events[events.length - 1];
      // A short batch ends the pass, unless another process moved the checkpoint meanwhile: then read again.
      if (events.length < batchSize && this.options.checkpoints.load(this.options.name) === last?.position) return;
    }
  }
}
