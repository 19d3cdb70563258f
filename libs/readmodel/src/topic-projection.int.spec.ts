/**
 * `TopicProjection` over the in-process bus and an in-memory SQLite file: an event of its types that the projection
 * changes nothing for (`applies` false) is skipped without a write — no id recorded, no transaction committed.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { InProcessMessageBus } from '@switchyard/bus';
import { EVENT_ID_HEADER, type EventMessage } from '@switchyard/contracts';
import { compareSqlitePositions, type RecordedEvent } from '@switchyard/eventstore';
import { TopicProjection } from './topic-projection';

const message = (position: number, counts: boolean): EventMessage => ({
  id: randomUUID(),
  type: 'Counted',
  name: null,
  names: [],
  stream_id: `thing-${randomUUID()}`,
  revision: 0,
  position: String(position),
  recorded_at: '2026-02-01T10:00:00.000Z',
  occurred_at: '2026-02-01T10:00:00.000Z',
  correlation_id: null,
  causation_id: null,
  schema_version: 1,
  data: { counts },
  metadata: {},
});

it('skips without a write the events the projection changes nothing for', async () => {
  const db = new Database(':memory:');
  const bus = new InProcessMessageBus({ publishWaitsForConsumers: true });
  const applied: string[] = [];
  const projection = new TopicProjection(
    db,
    { name: 'counted', apply: (event: RecordedEvent) => void applied.push(event.id) },
    {
      bus,
      groupId: 'counted',
      topic: 'things.events',
      types: new Set(['Counted']),
      applies: (event) => (event.data as { counts: boolean }).counts,
      seenTable: 'counted_events',
      comparePositions: compareSqlitePositions,
    },
  );
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
    expect(db.prepare('SELECT event_id FROM counted_events').all()).toEqual([{ event_id: events[1]!.id }]);
    expect(commits).toBe(1);
  } finally {
    await projection.stop();
    await bus.close();
    db.close();
  }
});
