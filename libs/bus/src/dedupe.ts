import type { IncomingMessage } from './message-bus';

/**
 * Consumer-side deduplication. Delivery is at-least-once (a relay republishes after a crash, a consumer
 * handles a message again when its commit was lost), so a consumer whose handler is not naturally idempotent
 * wraps it: a message whose `event-id` header was already handled is acknowledged without calling the handler.
 */

/** The header producers put the event id in; the same name as `EVENT_ID_HEADER` of @switchyard/contracts. */
export const DEDUPE_HEADER = 'event-id';

/** Ids already handled. A KeyValue-backed one shares them between the instances of a service. */
export interface SeenEventIds {
  has(id: string): Promise<boolean>;
  add(id: string): Promise<void>;
}

type Handler = (message: IncomingMessage) => Promise<void>;

/**
 * Skips messages whose id is in `seen`; records the id only after the handler resolved, so a handler that
 * rejects is retried rather than forgotten. Messages without the header are always handled. The check and the
 * record are two steps: two deliveries of one id handled at the same moment can both run. Within a consumer
 * group that cannot happen, since both copies carry the same key and a key's messages are handled one at a time.
 */
export const deduplicating =
  (handler: Handler, seen: SeenEventIds, options: { header?: string } = {}): Handler =>
  async (message) => {
    const id = message.headers[options.header ?? DEDUPE_HEADER];
    if (id === undefined || id === '') return handler(message);
    if (await seen.has(id)) return;
    await handler(message);
    await seen.add(id);
  };

/**
 * The last `capacity` ids handled, in memory (one process). Bounded because a consumer runs forever: the
 * oldest ids are forgotten first, so `capacity` has to exceed the number of messages a redelivery can reach
 * back over (a relay's republish batch, a consumer's uncommitted tail).
 */
export class InMemorySeenEventIds implements SeenEventIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  async has(id: string): Promise<boolean> {
    return this.ids.has(id);
  }

  async add(id: string): Promise<void> {
    // Re-adding moves the id to the young end of the insertion order.
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next();
      if (oldest.done) break;
      this.ids.delete(oldest.value);
    }
  }

  get size(): number {
    return this.ids.size;
  }
}
