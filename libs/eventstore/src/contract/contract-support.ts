import { randomUUID } from 'node:crypto';
import type { EventStore, RecordedEvent } from '../event-store';

export interface EventStoreContractOptions {
  /**
   * Orders two positions of the store under test. Positions are opaque to callers, so only the adapter knows;
   * given, the suite checks that positions strictly increase in `readAll` and in subscriptions.
   */
  readonly comparePositions?: (a: string, b: string) => number;
  /** Skip (with the printed reason) rather than fail when the store is unavailable, even in CI (EventStoreDB). */
  readonly optional?: boolean;
  /** Runs after the suite closed the store, e.g. to remove its files. */
  readonly teardown?: () => Promise<void>;
}

/** What every part of the suite shares: the store under test (opened once per suite) and helpers. */
export interface ContractContext {
  readonly store: () => EventStore;
  readonly options: EventStoreContractOptions;
}

/** Stream ids unique across runs: an EventStoreDB server is shared by every run against it. */
export const newStreamId = (prefix: string): string => `${prefix}-${randomUUID()}`;

export const event = (type: string, data: unknown = {}, metadata?: Record<string, unknown>) =>
  metadata === undefined ? { type, data } : { type, data, metadata };

/** The rejection of a promise, or a failure if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A position of the log just before the test's own events: an append to a stream of its own. */
export async function checkpointNow(store: EventStore): Promise<string> {
  const result = await store.append(newStreamId('checkpoint'), [event('CheckpointTaken')], {
    expectedRevision: 'no_stream',
  });
  return result.position;
}

export const ofStreams = (events: readonly RecordedEvent[], ...streamIds: string[]): RecordedEvent[] =>
  events.filter((recorded) => streamIds.includes(recorded.streamId));

export const summary = (events: readonly RecordedEvent[]): string[] =>
  events.map((recorded) => `${recorded.streamId}@${recorded.revision}:${recorded.type}`);
