import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type RecordedEvent,
} from '@switchyard/eventstore';
import { eventMetadata } from '@switchyard/telemetry';
import type { Decider, DomainEvent } from './decider';

export interface HandledCommand<Event extends DomainEvent, State> {
  readonly events: readonly Event[];
  readonly state: State;
  /** Absent when the decision produced no events. */
  readonly appended?: AppendResult;
}

/**
 * Load, fold, decide, append with the revision read. When another writer got there first the stream is read
 * again and the command decided again on the new state, so money rules hold under concurrency (the loser of two
 * racing refunds sees the winner's refund). After `maxAttempts` conflicts the conflict is thrown.
 */
export async function handleCommand<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  options: { maxAttempts?: number; metadata?: Record<string, unknown> } = {},
): Promise<HandledCommand<Event, State>> {
  return handleCommands(store, streamId, decider, [command], options);
}

/**
 * `handleCommand` for commands that follow one another on one stream (what a provider answered, then the request's
 * completion): each decided on the state the ones before it leave, their events appended together — one append,
 * one commit, all or none. A command whose refusal `skip` accepts is left out (as its own `handleCommand` would have
 * been refused) and the others go ahead; any other refusal throws with nothing appended.
 */
export async function handleCommands<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  commands: readonly Command[],
  options: {
    maxAttempts?: number;
    metadata?: Record<string, unknown>;
    skip?: (refusal: unknown) => boolean;
  } = {},
): Promise<HandledCommand<Event, State>> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    const recorded = await store.readStream(streamId);
    const loaded = recorded.reduce(
      (current, event) => decider.evolve(current, asDomainEvent<Event>(event)),
      decider.initialState(),
    );
    const events: Event[] = [];
    let state = loaded;
    for (const command of commands) {
      let decided: readonly Event[];
      try {
        decided = decider.decide(command, state);
      } catch (refusal) {
        if (options.skip?.(refusal)) continue;
        throw refusal;
      }
      events.push(...decided);
      state = decided.reduce(decider.evolve, state);
    }
    if (events.length === 0) return { events, state };
    try {
      const appended = await appendEvents(store, streamId, events, {
        expectedRevision: recorded.length === 0 ? 'no_stream' : recorded.length - 1,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      });
      return { events, state, appended };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= maxAttempts) throw error;
    }
  }
}

/**
 * Appends events as every writer does — `handleCommand`, and the few that decide against a stream of their own making
 * (a claim, a redemption's outcome): each with the context's correlation and causation ids and span (a request's, or
 * the consumed message's: `consumeMessage`), plus `metadata`. No event is appended any other way.
 */
export function appendEvents(
  store: EventStore,
  streamId: string,
  events: readonly DomainEvent[],
  options: { readonly expectedRevision: ExpectedRevision; readonly metadata?: Record<string, unknown> },
): Promise<AppendResult> {
  return store.append(
    streamId,
    events.map((event) => ({ type: event.type, data: event.data, ...withContext(options.metadata) })),
    { expectedRevision: options.expectedRevision },
  );
}

/**
 * The caller's metadata plus the context's (correlation and causation ids, `traceparent`); none when both are empty.
 */
function withContext(metadata: Record<string, unknown> | undefined): { metadata?: Record<string, unknown> } {
  const context = eventMetadata();
  if (Object.keys(context).length === 0) return metadata ? { metadata } : {};
  return { metadata: { ...context, ...metadata } };
}

export const asDomainEvent = <Event extends DomainEvent>(event: RecordedEvent): Event =>
  ({ type: event.type, data: event.data }) as Event;
