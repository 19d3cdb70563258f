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
    /** The states of hot streams, kept by this process: only the events after one are read (`StreamStates`). */
    states?: StreamStates<State>;
  } = {},
): Promise<HandledCommand<Event, State>> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    const { state: loaded, revision } = await load(store, streamId, decider, options.states);
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
        expectedRevision: revision < 0 ? 'no_stream' : revision,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      });
      options.states?.keep(streamId, revision + events.length, state);
      return { events, state, appended };
    } catch (error) {
      // Whatever happened to the append, the next load reads the stream as it is.
      options.states?.forget(streamId);
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= maxAttempts) throw error;
    }
  }
}

/**
 * The states of the streams a process decided on last, each with the revision it folds up to: the next load of one
 * reads only the events after that revision (usually none) instead of the whole stream, and folds them onto it. Always
 * checked against the store: another writer's events are read and folded like any other; what a state saves is the
 * read and fold of the events it already holds. `evolve` must not change the state it is given (deciders never
 * do). Bounded: the least recently used stream goes first.
 */
export class StreamStates<State> {
  private readonly entries = new Map<string, { readonly revision: number; readonly state: State }>();

  constructor(private readonly limit = 1_000) {}

  get size(): number {
    return this.entries.size;
  }

  get(streamId: string): { readonly revision: number; readonly state: State } | undefined {
    const entry = this.entries.get(streamId);
    if (entry) {
      this.entries.delete(streamId);
      this.entries.set(streamId, entry);
    }
    return entry;
  }

  keep(streamId: string, revision: number, state: State): void {
    this.entries.delete(streamId);
    this.entries.set(streamId, { revision, state });
    if (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  forget(streamId: string): void {
    this.entries.delete(streamId);
  }
}

/** A stream's state folded from its events (onto the state `states` kept of it, from the events after that one). */
export async function loadState<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  options: { readonly states?: StreamStates<State> } = {},
): Promise<State> {
  return (await load(store, streamId, decider, options.states)).state;
}

/** The state and the revision it folds up to (-1: no stream). */
async function load<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  states: StreamStates<State> | undefined,
): Promise<{ readonly state: State; readonly revision: number }> {
  const kept = states?.get(streamId);
  const recorded = kept
    ? await store.readStream(streamId, { fromRevision: kept.revision + 1 })
    : await store.readStream(streamId);
  const state = recorded.reduce(
    (current, event) => decider.evolve(current, asDomainEvent<Event>(event)),
    kept ? kept.state : decider.initialState(),
  );
  const revision = kept ? kept.revision + recorded.length : recorded.length - 1;
  if (states && recorded.length > 0) states.keep(streamId, revision, state);
  return { state, revision };
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
