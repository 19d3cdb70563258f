import type { RecordedEvent, SubscribeOptions } from '../event-store';
import type { WakeUpTimer } from './wake-up-timer';

export interface RetryBackoff {
  /** Delay before the first retry. Default 50 ms. */
  readonly initialDelayMs?: number;
  /** The delay doubles on every failure up to this cap. Default 1 s. */
  readonly maxDelayMs?: number;
}

export const defaultOnError = (error: unknown, event: RecordedEvent): void => {
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(
    `event store subscription: handler failed on ${event.type} ${event.streamId}@${event.revision} (position ${event.position}), retrying: ${reason}\n`,
  );
};

/**
 * Hands one event to the handler until it succeeds: a failed event is retried (never skipped), so a handler
 * sees the log in order and at least once. Returns false when the subscription was stopped before the event
 * was handled.
 */
export async function deliverWithRetry(
  event: RecordedEvent,
  options: SubscribeOptions,
  backoff: RetryBackoff,
  timer: WakeUpTimer,
  isStopped: () => boolean,
): Promise<boolean> {
  const initialDelayMs = backoff.initialDelayMs ?? 50;
  const maxDelayMs = backoff.maxDelayMs ?? 1000;
  const onError = options.onError ?? defaultOnError;
  for (let attempt = 0; ; attempt++) {
    if (isStopped()) return false;
    try {
      await options.handler(event);
      return true;
    } catch (error) {
      try {
        onError(error, event);
      } catch {
        // An onError that throws must not end the subscription: the event is still retried.
      }
      if (isStopped()) return false;
      await timer.sleep(Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt, 30)));
    }
  }
}
