import type Database from 'better-sqlite3';
import type { EventStore, RecordedEvent } from '@switchyard/eventstore';
import { SqliteCheckpointStore } from './checkpoints';
import { LogFollower } from './log-follower';

export interface Projection {
  readonly name: string;
  /** Synchronous, inside the transaction that also moves the checkpoint. Ignores event types it does not know. */
  apply(event: RecordedEvent, db: Database.Database): void;
}

/**
 * Keeps a read model (SQLite tables local to the service) up to date from the event store: each batch of events
 * and the new checkpoint are written in one transaction, so the read model is exactly the fold of the log up to
 * its checkpoint, and can be rebuilt by dropping its tables and its checkpoint.
 */
export class Projector {
  private readonly follower: LogFollower;

  constructor(db: Database.Database, store: EventStore, projection: Projection, options: { pollIntervalMs?: number } = {}) {
    const checkpoints = new SqliteCheckpointStore(db);
    const name = `projection:${projection.name}`;
    // Several processes may project into the same file (the operator CLI beside the server): the checkpoint is
    // compared inside the write transaction, and a batch that another process already applied is dropped.
    const applyBatch = db.transaction((events: readonly RecordedEvent[], after: string | undefined) => {
      if (checkpoints.load(name) !== after) return;
      for (const event of events) projection.apply(event, db);
      const last = events[events.length - 1];
      if (last) checkpoints.save(name, last.position);
    });
    this.follower = new LogFollower({
      name,
      store,
      checkpoints,
      handleBatch: async (events, after) => applyBatch.immediate(events, after),
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    });
  }

  start(): void {
    this.follower.start();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  /** Read-your-writes: a command handler calls this after its append, before it answers. */
  catchUp(): Promise<void> {
    return this.follower.catchUp();
  }
}
