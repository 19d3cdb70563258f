/** The event log: how long appends take per store kind, and how far behind the store the relays publish. */
import { Histogram } from 'prom-client';
import { registry, secondsSince } from './registry';

const eventStoreAppendDuration = new Histogram({
  name: 'switchyard_event_store_append_duration_seconds',
  help: 'Time from asking the event store to append to the append being durable (or refused), by store (`sqlite`: group commit included; `eventstoredb`).',
  labelNames: ['store'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

const relayLag = new Histogram({
  name: 'switchyard_relay_lag_seconds',
  help: "Time from an event's recording in its service's event store to the bus acknowledging its publication, by relay (its topic).",
  labelNames: ['relay'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});

export type EventStoreKind = 'sqlite' | 'eventstoredb';

/** Resolves or rejects as `append` does, having recorded how long it took. */
export function timeEventStoreAppend<T>(store: EventStoreKind, append: Promise<T>): Promise<T> {
  const startedAt = performance.now();
  return append.finally(() => eventStoreAppendDuration.observe({ store }, secondsSince(startedAt)));
}

/** After a relay's batch was acknowledged: each event's lag behind its recording (`recordedAt`, ISO 8601). */
export function observeRelayed(relay: string, events: readonly { readonly recordedAt: string }[]): void {
  const now = Date.now();
  for (const event of events) {
    const recordedMs = Date.parse(event.recordedAt);
    if (!Number.isNaN(recordedMs)) relayLag.observe({ relay }, Math.max(0, now - recordedMs) / 1000);
  }
}
