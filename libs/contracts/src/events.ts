/**
 * How a stored event travels on the bus (the Kafka topics `identity.events`, `transactions.events`, … are a public
 * interface: deploy/kafka/topics.md, docs/events.md): one JSON message per event, keyed by its stream id (ordering
 * per stream), header `event-id` for consumer-side deduplication. Fields are only ever added to the envelope; a
 * change that removes or redefines one raises `schema_version`.
 */
export interface EventMessage {
  readonly id: string;
  readonly type: string;
  /** The public event name (`api-key-pair.created`), when the event has one; null for internal events. */
  readonly name: string | null;
  /** Every public name of the event, `name` first; empty for internal events. */
  readonly names: readonly string[];
  readonly stream_id: string;
  /**
   * The merchant account whose resource the stream is, when the publishing service names it (`transactions.events`:
   * every event of a transaction, so a consumer needs no state to tell whose a later event is); absent from a
   * message of an earlier release, and for streams of no one merchant account.
   */
  readonly merchant_account_id?: string;
  readonly revision: number;
  readonly position: string;
  /** When the event store recorded the event (ISO 8601). */
  readonly recorded_at: string;
  /** When the change happened (ISO 8601): the event's own time (`data.at`) when it has one, else `recorded_at`. */
  readonly occurred_at: string;
  /** The id shared by every event one request (or one chain of work) caused; null when the event does not carry one. */
  readonly correlation_id: string | null;
  /** The id of the message (command, request or event) that directly caused this event; null when unknown. */
  readonly causation_id: string | null;
  /** The version of this envelope; 1 today. */
  readonly schema_version: typeof EVENT_SCHEMA_VERSION;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export const EVENT_SCHEMA_VERSION = 1;

export const EVENT_ID_HEADER = 'event-id';
export const EVENT_TYPE_HEADER = 'event-type';
export const EVENT_NAME_HEADER = 'event-name';
