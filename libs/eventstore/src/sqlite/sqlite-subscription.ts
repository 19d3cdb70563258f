import type { RecordedEvent, SubscribeOptions, Subscription } from '../event-store';
import { deliverWithRetry, type RetryBackoff } from '../subscription/deliver-with-retry';
import { WakeUpTimer } from '../subscription/wake-up-timer';

export interface LogSource {
  /** Up to `maxCount` events strictly after `after`, in log order. */
  readAfter(after: string | undefined, maxCount: number): RecordedEvent[];
}

export interface PollingSubscriptionSettings {
  readonly pollIntervalMs: number;
  readonly batchSize: number;
  readonly retryBackoff: RetryBackoff;
}

/**
 * Catch-up, then follow: reads the log in batches from the checkpoint; when it runs dry it sleeps until either
 * this process appends (`notifyAppended`, immediate) or the poll interval passes (appends by other processes,
 * which SQLite cannot signal across processes).
 *
 * No event is ever skipped by polling on `position > checkpoint`: SQLite commits one writer at a time and
 * positions are allocated inside the write transaction, so a position becomes visible only after every smaller
 * one did (see `SqliteEventStore`).
 */
export class PollingSubscription implements Subscription {
  private stopped = false;
  /** Sleep between polls: ended by an append in this process or by stop(). */
  private readonly pollTimer = new WakeUpTimer();
  /** Back-off before retrying a failed event: ended only by stop(), so appends do not hasten retries. */
  private readonly retryTimer = new WakeUpTimer();
  private readonly finished: Promise<void>;

  constructor(
    private readonly source: LogSource,
    private readonly options: SubscribeOptions,
    private readonly settings: PollingSubscriptionSettings,
    private readonly onFinished: (subscription: PollingSubscription) => void,
  ) {
    this.finished = this.run().finally(() => this.onFinished(this));
  }

  /** Something was appended through this store instance: look now rather than at the next poll. */
  notifyAppended(): void {
    this.pollTimer.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pollTimer.wake();
    this.retryTimer.wake();
    await this.finished;
  }

  private async run(): Promise<void> {
    let checkpoint = this.options.after;
    // Let the caller's synchronous code (e.g. storing the returned subscription) run before the first delivery.
    await Promise.resolve();
    while (!this.stopped) {
      let batch: RecordedEvent[];
      try {
        batch = this.source.readAfter(checkpoint, this.settings.batchSize);
      } catch (error) {
        if (this.stopped) return;
        process.stderr.write(`event store subscription: reading the log failed, retrying: ${String(error)}\n`);
        await this.pollTimer.sleep(this.settings.pollIntervalMs);
        continue;
      }
      if (batch.length === 0) {
        await this.pollTimer.sleep(this.settings.pollIntervalMs);
        continue;
      }
      for (const event of batch) {
        const delivered = await deliverWithRetry(
          event,
          this.options,
          this.settings.retryBackoff,
          this.retryTimer,
          () => this.stopped,
        );
        if (!delivered) return;
        checkpoint = event.position;
      }
    }
  }
}
