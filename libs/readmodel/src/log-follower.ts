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
  readonly pollIntervalMs?: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * Reads the store's log from a checkpoint in batches and hands each batch on, one pass at a time. Passes are
 * serialised, so a caller's `catchUp()` (read-your-writes after an append) and the polling loop never apply the
 * same events twice. A failed batch leaves the checkpoint where it was: it is retried, so delivery is
 * at-least-once and exactly-once where the handler commits the checkpoint with its own writes.
 */
export class LogFollower {
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private failures = 0;

  constructor(private readonly options: LogFollowerOptions) {}

  get name(): string {
    return this.options.name;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running.catch(() => undefined);
  }

  /** Resolves when every event appended before the call has been handled. */
  catchUp(): Promise<void> {
    const pass = this.running.catch(() => undefined).then(() => this.drain());
    this.running = pass;
    return pass;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.catchUp().then(
        () => {
          this.failures = 0;
          this.schedule(this.options.pollIntervalMs ?? 100);
        },
        (error: unknown) => {
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
      const events = await this.options.store.readAll({ ...(after !== undefined ? { after } : {}), maxCount: batchSize });
      if (events.length === 0) return;
      await this.options.handleBatch(events, after);
      const last = events[events.length - 1];
      // A short batch ends the pass, unless another process moved the checkpoint meanwhile: then read again.
      if (events.length < batchSize && this.options.checkpoints.load(this.options.name) === last?.position) return;
    }
  }
}
