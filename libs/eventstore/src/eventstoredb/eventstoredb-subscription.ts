import type { AllStreamResolvedEvent, AllStreamSubscription, Position } from '@eventstore/db-client';
import type { RecordedEvent, SubscribeOptions, Subscription } from '../event-store';
import { deliverWithRetry, type RetryBackoff } from '../subscription/deliver-with-retry';
import { WakeUpTimer } from '../subscription/wake-up-timer';

/**
 * A catch-up subscription to `$all` that delivers one event at a time: iterating the client's readable with
 * `for await` pulls the next event only after the handler settled, so the server's stream is back-pressured.
 * When the connection drops it resubscribes from the last handled event, after a back-off.
 */
export class EventStoreDbSubscription implements Subscription {
  private stopped = false;
  private current: AllStreamSubscription | undefined;
  private readonly timer = new WakeUpTimer();
  private readonly finished: Promise<void>;

  constructor(
    private readonly open: (from: Position | undefined) => AllStreamSubscription,
    private readonly toUserEvent: (
      resolved: AllStreamResolvedEvent,
      after: Position | undefined,
    ) => RecordedEvent | undefined,
    private checkpoint: Position | undefined,
    private readonly options: SubscribeOptions,
    private readonly backoff: RetryBackoff,
    private readonly onFinished: (subscription: EventStoreDbSubscription) => void,
  ) {
    this.finished = this.run().finally(() => this.onFinished(this));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.wake();
    await this.current?.unsubscribe().catch(() => undefined);
    await this.finished;
  }

  private async run(): Promise<void> {
    await Promise.resolve();
    let failures = 0;
    while (!this.stopped) {
      try {
        this.current = this.open(this.checkpoint);
        for await (const resolved of this.current) {
          const event = this.toUserEvent(resolved, this.checkpoint);
          if (event === undefined) continue;
          const delivered = await deliverWithRetry(event, this.options, this.backoff, this.timer, () => this.stopped);
          if (!delivered) return;
          this.checkpoint = resolved.event?.position ?? this.checkpoint;
          failures = 0;
        }
      } catch (error) {
        if (this.stopped) return;
        process.stderr.write(
          `event store subscription: EventStoreDB subscription failed, resubscribing: ${String(error)}\n`,
        );
      } finally {
        await this.current?.unsubscribe().catch(() => undefined);
      }
      if (this.stopped) return;
      const delayMs = Math.min(
        this.backoff.maxDelayMs ?? 1000,
        (this.backoff.initialDelayMs ?? 50) * 2 ** Math.min(failures, 30),
      );
      failures += 1;
      await this.timer.sleep(delayMs);
    }
  }
}
