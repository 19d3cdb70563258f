/**
 * `TopicProjection` over the in-process bus and an in-memory SQLite file: an event of its types that the projection
 * changes nothing for (`applies` false) is skipped without a write — no id recorded, no transaction committed; the
 * ids applied are forgotten once their events are older than the retention, and until then a redelivery applies
 * nothing twice.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { InProcessMessageBus } from '@switchyard/bus';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, type EventMessage } from '@switchyard/contracts';
import { compareSqlitePositions, type RecordedEvent } from '@switchyard/eventstore';
import { TopicProjection, type TopicProjectionOptions } from './topic-projection';

const message = (position: number, counts: boolean, recordedAt = '2026-02-01T10:00:00.000Z'): EventMessage => ({
  id: randomUUID(),
  type: 'Counted',
  name: null,
  names: [],
  stream_id: `thing-${randomUUID()}`,
  revision: 0,
  position: String(position),
  recorded_at: recordedAt,
  occurred_at: recordedAt,
  correlation_id: null,
  causation_id: null,
  schema_version: 1,
  data: { counts },
  metadata: {},
});

/** A projection of `Counted` events from `things.events` (the in-process bus) recording the ids it applied. */
function counted(
  db: Database.Database,
  options: Partial<TopicProjectionOptions>,
  onHandlerFailure?: (failure: unknown) => void,
) {
  const bus = new InProcessMessageBus({
    publishWaitsForConsumers: true,
    ...(onHandlerFailure ? { onHandlerFailure, redelivery: { initialDelayMs: 1, maxAttempts: 2 } } : {}),
  });
  const applied: string[] = [];
  const projection = new TopicProjection(
    db,
    { name: 'counted', apply: (event: RecordedEvent) => void applied.push(event.id) },
    {
      bus,
      groupId: 'counted',
      topic: 'things.events',
      types: new Set(['Counted']),
      seenTable: 'counted_events',
      comparePositions: compareSqlitePositions,
      ...options,
    },
  );
  return { bus, applied, projection };
}

it('skips without a write the events the projection changes nothing for', async () => {
  const db = new Database(':memory:');
  const { bus, applied, projection } = counted(db, {
    applies: (event) => (event.data as { counts: boolean }).counts,
  });
  await projection.start();
  let commits = 0;
  db.function('count_commit', () => (commits += 1));
  db.exec('CREATE TEMP TRIGGER counted_seen AFTER INSERT ON counted_events BEGIN SELECT count_commit(); END');
  try {
    const events = [message(1, false), message(2, true), message(3, false), message(4, false)];
    await bus.publish(
      'things.events',
      events.map((event) => ({
        key: event.stream_id,
        value: JSON.stringify(event),
        headers: { [EVENT_ID_HEADER]: event.id },
      })),
    );
    expect(applied).toEqual([events[1]!.id]);
    expect(db.prepare('SELECT event_id FROM counted_events').all()).toEqual(
      [{ event_id: events[1]!.id, recorded_at: '2026-02-01T10:00:00.000Z' }].map(({ event_id }) => ({ event_id })),
    );
    expect(commits).toBe(1);
  } finally {
    await projection.stop();
    await bus.close();
    db.close();
  }
});

it('passes over a message of another type by its event-type header, without parsing it; one without the header is read', async () => {
  const db = new Database(':memory:');
  const failures: unknown[] = [];
  const { bus, applied, projection } = counted(db, {}, (failure) => failures.push(failure));
  await projection.start();
  try {
    const counted = message(2, true);
    const unnamed = message(3, true);
    await bus.publish('things.events', [
      // Another event type, its body something this projection could not read.
      { key: 'other', value: '<not json>', headers: { [EVENT_ID_HEADER]: randomUUID(), [EVENT_TYPE_HEADER]: 'Other' } },
      {
        key: counted.stream_id,
        value: JSON.stringify(counted),
        headers: { [EVENT_ID_HEADER]: counted.id, [EVENT_TYPE_HEADER]: 'Counted' },
      },
      // An earlier release's relay named no type: the message itself says.
      { key: unnamed.stream_id, value: JSON.stringify(unnamed), headers: { [EVENT_ID_HEADER]: unnamed.id } },
    ]);
    expect(applied).toEqual([counted.id, unnamed.id]);
    expect(failures).toEqual([]);
  } finally {
    await projection.stop();
    await bus.close();
    db.close();
  }
});

it('forgets the ids of events older than the retention, on start and when pruned; a newer one is still applied once', async () => {
  const db = new Database(':memory:');
  // A table of the release before: ids without their events' time (they age from the upgrade).
  db.exec("CREATE TABLE counted_events (event_id TEXT PRIMARY KEY); INSERT INTO counted_events VALUES ('before')");
  const { bus, applied, projection } = counted(db, { seenRetentionMs: 24 * 60 * 60 * 1000 });
  const day = 24 * 60 * 60 * 1000;
  const old = message(1, true, new Date(Date.now() - 2 * day).toISOString());
  const recent = message(2, true, new Date(Date.now() - day / 2).toISOString());
  const publish = (...events: EventMessage[]) =>
    bus.publish(
      'things.events',
      events.map((event) => ({
        key: event.stream_id,
        value: JSON.stringify(event),
        headers: { [EVENT_ID_HEADER]: event.id },
      })),
    );
  const ids = () =>
    (db.prepare('SELECT event_id FROM counted_events ORDER BY event_id').all() as { event_id: string }[]).map(
      (r) => r.event_id,
    );
  await projection.start();
  try {
    await publish(old, recent, recent);
    expect(applied).toEqual([old.id, recent.id]);
    expect(ids()).toEqual([old.id, recent.id, 'before'].sort());

    expect(projection.pruneSeen()).toBe(1);
    expect(ids()).toEqual([recent.id, 'before'].sort());
    // Redelivered: the recent one still applies nothing twice, nor does the forgotten old one (behind the watermark,
    // the furthest position pruned), nor an event never seen that is older than it.
    await publish(recent, old, message(0, true, old.recorded_at));
    expect(applied).toEqual([old.id, recent.id]);
    expect(db.prepare("SELECT position FROM checkpoints WHERE name = 'seen-pruned:counted_events'").get()).toEqual({
      position: '1',
    });
    // Two days on, the id of before the upgrade and the recent one are forgotten too.
    expect(projection.pruneSeen(new Date(Date.now() + 2 * day))).toBe(2);
    expect(ids()).toEqual([]);
  } finally {
    await projection.stop();
    await bus.close();
    db.close();
  }
});
