import type Database from 'better-sqlite3';
import type { EventStore, RecordedEvent } from '@switchyard/eventstore';
import { SqliteCheckpointStore, type CheckpointStore } from './checkpoints';
import { withDeferredSync } from './deferred-sync';
import { LogFollower } from './log-follower';

export interface Projection {
  readonly name: string;
  /** Synchronous, inside the transaction that also moves the checkpoint. Ignores event types it does not know. */
  apply(event: RecordedEvent, db: Database.Database): void;
}

export interface ProjectorOptions {
  readonly pollIntervalMs?: number;
  /** Called when a projection fails a batch and goes on alone (it is retried by its own follower). */
  readonly onError?: (error: unknown, what: string) => void;
}

/**
 * Keeps read models (SQLite tables local to the service) up to date from the event store: each batch of events
 * and the new checkpoints are written in one transaction, so each read model is exactly the fold of the log up to
 * its checkpoint, and can be rebuilt by dropping its tables and its checkpoint.
 *
 * One reader and one transaction serve every projection that stands at the same checkpoint (all of a service's,
 * once they have caught up): a batch is read once and applied to each of them in one commit, where a follower per
 * read model read it N times and committed N times — an fsync each (docs/performance.md, "Read models").
 * Projections at different checkpoints when the projector is made (one added since the last start) get a group
 * each, merged at the next start. A projection whose apply throws leaves its group: the others commit the batch
 * without it, and it is retried alone, so one broken read model never holds the others back.
 *
 * The commit is made with `synchronous = NORMAL` (restored after): in WAL mode it is atomic and survives a
 * process crash; a power loss can lose the last such commits — never an event, committed FULL by the store — and
 * SQLite recovers a prefix of the WAL, so a read model and its checkpoint are lost together and re-applied.
 */
export class Projector {
  private readonly groups: ProjectionGroup[] = [];
  private started = false;

  constructor(
    private readonly db: Database.Database,
    private readonly store: EventStore,
    projections: Projection | readonly Projection[],
    private readonly options: ProjectorOptions = {},
  ) {
    const checkpoints = new SqliteCheckpointStore(db);
    const byCheckpoint = new Map<string | undefined, Projection[]>();
    for (const projection of Array.isArray(projections) ? projections : [projections as Projection]) {
      const at = checkpoints.load(projectionCheckpointName(projection));
      byCheckpoint.set(at, [...(byCheckpoint.get(at) ?? []), projection]);
    }
    for (const members of byCheckpoint.values()) this.addGroup(members);
  }

  start(): void {
    this.started = true;
    for (const group of this.groups) group.follower.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    // A group may split off another while stopping; stop until none is left running.
    for (let stopped = 0; stopped < this.groups.length; ) {
      const pending = this.groups.slice(stopped);
      stopped = this.groups.length;
      await Promise.all(pending.map((group) => group.follower.stop()));
    }
  }

  /** Read-your-writes: a command handler calls this after its append, before it answers. */
  async catchUp(): Promise<void> {
    // A group may split off a projection while it catches up: that one is caught up too before this resolves.
    for (let done = 0; done < this.groups.length; ) {
      const pending = this.groups.slice(done);
      done = this.groups.length;
      await Promise.all(pending.map((group) => group.follower.catchUp()));
    }
  }

  /** The checkpoint groups, by their projections' names (for tests and diagnostics). */
  get groupNames(): string[][] {
    return this.groups.map((group) => group.members.map((projection) => projection.name));
  }

  private addGroup(members: Projection[]): ProjectionGroup {
    const group = new ProjectionGroup(this.db, this.store, members, this.options, (left) => {
      const alone = this.addGroup([left]);
      if (this.started) alone.follower.start();
    });
    this.groups.push(group);
    return group;
  }
}

/** Where a store-following projection keeps its checkpoint (`checkpoints`); a `TopicProjection` of it reads it. */
export const projectionCheckpointName = (projection: Pick<Projection, 'name'>): string =>
  `projection:${projection.name}`;

/** Projections at the same checkpoint, read and committed together. `members[0]`'s checkpoint is the group's. */
class ProjectionGroup {
  readonly follower: LogFollower;
  readonly members: Projection[];

  constructor(
    db: Database.Database,
    store: EventStore,
    members: readonly Projection[],
    options: ProjectorOptions,
    private readonly leave: (projection: Projection) => void,
  ) {
    this.members = [...members];
    const checkpoints = new SqliteCheckpointStore(db);
    // Several processes may project into the same file (the operator CLI beside the server): each member's
    // checkpoint is compared inside the write transaction, and a member that another process moved is skipped.
    const applyTo = (
      targets: readonly Projection[],
      events: readonly RecordedEvent[],
      after: string | undefined,
    ): Projection[] => {
      const last = events[events.length - 1];
      const skipped: Projection[] = [];
      const applied: string[] = [];
      const positions = checkpoints.loadAll(targets.map(projectionCheckpointName));
      for (const projection of targets) {
        const name = projectionCheckpointName(projection);
        if (positions.get(name) !== after) {
          skipped.push(projection);
          continue;
        }
        for (const event of events) projection.apply(event, db);
        applied.push(name);
      }
      if (last) checkpoints.saveAll(applied, last.position);
      return skipped;
    };
    const applyBatch = db.transaction(applyTo);
    /** Commits without an fsync of its own (see Projector and `withDeferredSync`). */
    const commit = (
      targets: readonly Projection[],
      events: readonly RecordedEvent[],
      after: string | undefined,
    ): Projection[] => withDeferredSync(db, () => applyBatch.immediate(targets, events, after));

    const groupCheckpoints: CheckpointStore = {
      // Read before every batch: a member moved meanwhile — by another process, or reset to be rebuilt (its rows and
      // checkpoint deleted) — leaves the group here and follows on its own from where it stands.
      load: () => {
        const positions = checkpoints.loadAll(this.members.map(projectionCheckpointName));
        const at = positions.get(projectionCheckpointName(this.members[0]!));
        for (const projection of this.members.slice(1))
          if (positions.get(projectionCheckpointName(projection)) !== at) this.split(projection);
        return at;
      },
      save: () => undefined, // the batch's transaction saved every member's
    };
    this.follower = new LogFollower({
      name:
        this.members.length === 1
          ? projectionCheckpointName(this.members[0]!)
          : `projections:${this.members.map((projection) => projection.name).join(',')}`,
      store,
      checkpoints: groupCheckpoints,
      handleBatch: async (events, after) => {
        let skipped: Projection[];
        try {
          skipped = commit(this.members, events, after);
        } catch (error) {
          if (this.members.length === 1) throw error;
          // Find the members that fail: the others commit the batch, each failing one goes on alone. When all
          // fail (the database, not a read model), the group stays as it is and the batch is retried.
          skipped = [];
          const failures = new Map<Projection, unknown>();
          for (const projection of this.members) {
            try {
              skipped.push(...commit([projection], events, after));
            } catch (memberError) {
              failures.set(projection, memberError);
            }
          }
          if (failures.size === this.members.length) throw error;
          for (const [projection, memberError] of failures) {
            options.onError?.(memberError, `read model ${projection.name} failed a batch; it is retried on its own`);
            this.split(projection);
          }
        }
        // Moved by another process to somewhere else than the group: it follows on its own from there.
        if (skipped.length === 0) return;
        const positions = checkpoints.loadAll([this.members[0]!, ...skipped].map(projectionCheckpointName));
        const at = positions.get(projectionCheckpointName(this.members[0]!));
        for (const projection of skipped)
          if (this.members.length > 1 && positions.get(projectionCheckpointName(projection)) !== at)
            this.split(projection);
      },
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
      ...(options.onError
        ? {
            onError: (error: unknown) =>
              options.onError?.(error, `read models ${this.members.map((projection) => projection.name).join(', ')}`),
          }
        : {}),
    });
  }

  private split(projection: Projection): void {
    const index = this.members.indexOf(projection);
    if (index < 0 || this.members.length === 1) return;
    this.members.splice(index, 1);
    this.leave(projection);
  }
}
