import type { ExpectedRevision, NewEvent } from './event-store';

/**
 * Caller mistakes every adapter rejects the same way, before touching the store. An empty append is refused:
 * it has no last event whose revision and position `AppendResult` could report (a decider that decided nothing
 * should not append).
 */
export function assertAppendable(streamId: string, events: readonly NewEvent[]): void {
  if (typeof streamId !== 'string' || streamId.length === 0)
    throw new TypeError('append: streamId must be a non-empty string');
  if (events.length === 0) throw new TypeError(`append to ${streamId}: at least one event is needed`);
  for (const event of events) {
    if (typeof event.type !== 'string' || event.type.length === 0) {
      throw new TypeError(`append to ${streamId}: every event needs a non-empty type`);
    }
  }
}

export function assertValidExpectedRevision(expected: ExpectedRevision): void {
  if (expected === 'any' || expected === 'no_stream') return;
  if (!Number.isSafeInteger(expected) || expected < 0) {
    throw new TypeError(`expectedRevision must be 'any', 'no_stream' or a revision >= 0, got ${String(expected)}`);
  }
}
