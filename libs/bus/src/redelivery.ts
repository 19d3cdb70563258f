import type { IncomingMessage } from './message-bus';

/**
 * What both adapters do when a handler rejects (one policy, `dead-letter/dead-lettering.ts`): the message is not
 * acknowledged and is handed to the handler again after a delay that doubles per attempt, while later messages of
 * its partition wait. After `maxAttempts` it is parked on `<topic>.dead-letter` and the partition moves on; later
 * messages of its key (its stream) are parked behind it until `cli dead-letters replay` or `discard`
 * (docs/operations.md).
 */
export interface RedeliveryOptions {
  /** Delay before the first redelivery. Default 100 ms. */
  readonly initialDelayMs?: number;
  /** Ceiling of the doubling delay. Default 5 s. */
  readonly maxDelayMs?: number;
  /**
   * Failed attempts of a message before it is parked. Default 5 (about 1.5 s of back-off with the default delays).
   * Failures with `retriable: true` (something the handler needs is unreachable) do not count: they are retried
   * until they pass.
   */
  readonly maxAttempts?: number;
  /**
   * Largest parked-stream state of one partition, encoded (it rides on the group's committed offset; Kafka's
   * `offset.metadata.max.bytes` is 4096 by default). A message that would exceed it is not parked but retried, as
   * if there were no dead-letter topic, with an error line each time. Default 4000 (about 70 parked streams).
   */
  readonly maxParkedStateBytes?: number;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_MAX_PARKED_STATE_BYTES = 4_000;

export interface HandlerFailure {
  readonly error: unknown;
  readonly groupId: string;
  readonly message: IncomingMessage;
  /** 1 for the first failure of this message in this consumer. */
  readonly attempt: number;
  readonly redeliveryInMs: number;
}

export type HandlerFailureListener = (failure: HandlerFailure) => void;

export const redeliveryDelayMs = (attempt: number, options: RedeliveryOptions = {}): number => {
  const initial = options.initialDelayMs ?? 100;
  const max = options.maxDelayMs ?? 5_000;
  return Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
};

/** Default listener: one JSON line on stderr, the same shape as the services' pino logs. */
export const logHandlerFailure: HandlerFailureListener = ({ error, groupId, message, attempt, redeliveryInMs }) => {
  const line = {
    level: 40,
    time: Date.now(),
    name: 'bus',
    msg: 'message handler failed; the message will be redelivered',
    groupId,
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    key: message.key,
    attempt,
    redeliveryInMs,
    err: error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) },
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
};

/** Resolves after `ms`, or earlier when `interrupt` settles. */
export const sleep = (ms: number, interrupt?: Promise<unknown>): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupt?.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * A subscription's handlers under way and its stop signal: `track` a handling, `requestStop` wakes any back-off
 * waiting on `stopRequested`, and `settled` resolves when every tracked handling has finished.
 */
export class HandlerRuns {
  private readonly inFlight = new Set<Promise<void>>();
  private signalStop!: () => void;
  readonly stopRequested = new Promise<void>((resolve) => (this.signalStop = resolve));

  track(handling: Promise<void>): Promise<void> {
    this.inFlight.add(handling);
    void handling.then(
      () => this.inFlight.delete(handling),
      () => this.inFlight.delete(handling),
    );
    return handling;
  }

  requestStop(): void {
    this.signalStop();
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
