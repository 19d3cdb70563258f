/**
 * Retention: operational tables that grow with traffic (webhook deliveries and attempts, authorization statistics,
 * idempotency records) are pruned by age, in small batches. Events are never pruned.
 *
 * Each batch is one short SQLite transaction (better-sqlite3 is synchronous: the event loop is held for its
 * duration, a few milliseconds at the default size, docs/operations.md "Retention"); between batches the sweeper
 * yields to the event loop, so requests and their writes go on between them, and another process writing the same
 * file waits at most one batch (its `busy_timeout` is 5 s).
 */

export interface RetentionTask {
  /** Shown in logs and in the sweep's result, e.g. `webhook-deliveries`. */
  readonly name: string;
  /** Deletes at most `limit` rows that are past their age at `now`; returns how many. Synchronous: one transaction. */
  pruneBatch(now: Date, limit: number): number;
}

export interface RetentionSweeperOptions {
  readonly tasks: readonly RetentionTask[];
  readonly now: () => Date;
  /** Between two sweeps. Default 1 h (RETENTION_INTERVAL_MS). */
  readonly intervalMs?: number;
  /** Rows per batch. Default 500 (RETENTION_BATCH_SIZE). */
  readonly batchSize?: number;
  readonly onError?: (error: unknown, task: string) => void;
  /** After each sweep that deleted something: rows per task. */
  readonly onSwept?: (deleted: Readonly<Record<string, number>>) => void;
}

export const DEFAULT_RETENTION_INTERVAL_MS = 60 * 60 * 1000;
export const DEFAULT_RETENTION_BATCH_SIZE = 500;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<Record<string, number>> | undefined;
  private stopped = true;
  /** Set by `stop`: a sweep under way ends after its current batch. */
  private halted = false;

  constructor(private readonly options: RetentionSweeperOptions) {}

  /** Sweeps soon after start, then every `intervalMs`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.halted = false;
    this.schedule(1_000);
  }

  /** Stops sweeping; resolves once a sweep under way has finished its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.halted = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }

  /**
   * Every task, batch after batch until a batch deletes fewer rows than its size, one task after the other. The
   * cut-off is the time the sweep started: rows that age meanwhile wait for the next sweep. A task that fails is
   * reported and skipped until the next sweep.
   */
  sweep(): Promise<Record<string, number>> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<Record<string, number>> {
    const now = this.options.now();
    const batchSize = this.options.batchSize ?? DEFAULT_RETENTION_BATCH_SIZE;
    const deleted: Record<string, number> = {};
    for (const task of this.options.tasks) {
      let total = 0;
      try {
        for (;;) {
          const count = task.pruneBatch(now, batchSize);
          total += count;
          await yieldToEventLoop();
          if (count < batchSize || this.halted) break;
        }
      } catch (error) {
        this.options.onError?.(error, task.name);
      }
      deleted[task.name] = total;
    }
    if (Object.values(deleted).some((count) => count > 0)) this.options.onSwept?.(deleted);
    return deleted;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.sweep().finally(() => this.schedule(this.options.intervalMs ?? DEFAULT_RETENTION_INTERVAL_MS));
    }, delayMs);
    this.timer.unref();
  }
}

/** `now` minus `days` days. */
export const daysBefore = (now: Date, days: number): Date => new Date(now.getTime() - days * 24 * 60 * 60 * 1000);
