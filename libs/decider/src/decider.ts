/** An aggregate's rules as pure functions (see docs/architecture.md, "Domain code"). */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

export interface Decider<Command, Event extends DomainEvent, State> {
  decide(command: Command, state: State): readonly Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

/**
 * A broken business rule, with a stable code. Each service maps its codes to the spec's error body in one place.
 */
export class DomainError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly details: readonly { readonly field: string; readonly message: string }[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
