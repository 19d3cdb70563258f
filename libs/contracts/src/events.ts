/**
 * How a stored event travels on the bus: one JSON message per event, keyed by its stream id (ordering per
 * stream), header `event-id` for consumer-side deduplication.
 */
export interface EventMessage {
  readonly id: string;
  readonly type: string;
  /** The public event name (`api-key-pair.created`), when the event has one; null for internal events. */
  readonly name: string | null;
  /** Every public name of the event, `name` first; empty for internal events. */
  readonly names: readonly string[];
  readonly stream_id: string;
  readonly revision: number;
  readonly position: string;
  readonly recorded_at: string;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export const EVENT_ID_HEADER = 'event-id';
export const EVENT_TYPE_HEADER = 'event-type';
export const EVENT_NAME_HEADER = 'event-name';
