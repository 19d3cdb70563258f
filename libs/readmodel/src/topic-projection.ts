/**
 * A projection fed from another service's topic instead of its store, which another process owns (distributed
 * runtime): the stored gift cards' usage and the stored payment methods' usage follow `transactions.events` this way,
 * each as a consumer group of its own. The embedded runtime keeps following the store (`Projector`, read-your-writes).
 *
 * The bus delivers at least once: each event is applied in one SQLite transaction with the record of its id (the
 * `seenTable`), so a redelivery, or a new consumer group reading the topic from its beginning, applies nothing twice.
 * An event the store-following projection already applied (at or before its checkpoint, `projection:<name>`: an
 * installation that ran embedded before) is skipped too. Reads may lag a moment behind the other service here.
 *
 * The ids are kept with their events' time and position, and forgotten once older than `seenRetentionMs` (30 days by
 * default, longer than the 7 days `transactions.events` keeps its messages), by a prune on start and every hour, so
 * the table stays bounded. What was forgotten stands behind a watermark, the furthest position pruned
 * (`seen-pruned:<table>` in `checkpoints`): an event at or before it — a group reading the topic again, old events
 * published again — is skipped, never applied twice.
 */
import type Database from 'better-sqlite3';
import type { BusSubscription, IncomingMessage, MessageBus } from '@switchyard/bus';
import { EVENT_TYPE_HEADER, type EventMessage } from '@switchyard/contracts';
import { existsSync } from 'node:fs';
import { SqliteEventStore, type EventStore, type RecordedEvent } from '@switchyard/eventstore';
import { projectionCheckpointName, type Projection } from './projection';

export interface TopicProjectionOptions {
  readonly bus: MessageBus;
  /** One per installation sharing a broker (e.g. GIFT_CARDS_CONSUMER_GROUP). */
  readonly groupId: string;
  readonly topic: string;
  /** The event types the projection applies; the others are skipped unread. */
  readonly types: ReadonlySet<string>;
  /**
   * Of those, the events the projection changes anything for (default: all): the others are skipped without a
   * write, so that a topic mostly of events the projection ignores does not cost a commit (an fsync) per event.
   */
  readonly applies?: (event: RecordedEvent) => boolean;
  /** The table of the event ids applied (one per projection; created here). */
  readonly seenTable: string;
  /** How the other store orders its positions (`compareSqlitePositions`, `compareEventStoreDbPositions`). */
  readonly comparePositions: (a: string, b: string) => number;
  /** How long an applied event's id is kept (by the event's time); default `DEFAULT_SEEN_RETENTION_MS`. */
  readonly seenRetentionMs?: number;
  /** No request waits on this projection: the bus may gather its messages (`SubscribeOptions.batched`). */
  readonly batched?: boolean;
}

/** 30 days: longer than any topic keeps its messages (`transactions.events`: 7 days, docs/operations.md). */
export const DEFAULT_SEEN_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const PRUNE_EVERY_MS = 60 * 60 * 1000;
const PRUNE_BATCH = 1_000;

export class TopicProjection {
  private subscription: BusSubscription | null = null;
  private readonly applyOnce: (event: RecordedEvent) => void;
  private readonly storeCheckpoint: () => string | undefined;
  private readonly saveCheckpoint: (position: string) => void;
  private readonly applyFolded: (events: readonly RecordedEvent[]) => void;
  private readonly applies: (event: RecordedEvent) => boolean;
  /** Read at `start`: a fold from the store just before (`foldFromStore`) moves it. */
  private appliedUpTo: string | undefined;
  private readonly pruneBatch: (before: string) => number;
  private pruning: NodeJS.Timeout | null = null;

  constructor(
    db: Database.Database,
    projection: Projection,
    private readonly options: TopicProjectionOptions,
  ) {
    this.applies = options.applies ?? (() => true);
    if (!/^[a-z_][a-z0-9_]*$/.test(options.seenTable)) throw new Error(`not a table name: ${options.seenTable}`);
    const table = options.seenTable;
    const compare = options.comparePositions;
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (event_id TEXT PRIMARY KEY, recorded_at TEXT, position TEXT)`);
    const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    if (!columns.includes('recorded_at')) {
      // Ids kept before they had a time: they age from now.
      db.exec(`ALTER TABLE ${table} ADD COLUMN recorded_at TEXT`);
      db.prepare(`UPDATE ${table} SET recorded_at = ? WHERE recorded_at IS NULL`).run(new Date().toISOString());
    }
    if (!columns.includes('position')) db.exec(`ALTER TABLE ${table} ADD COLUMN position TEXT`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${table}_recorded_at ON ${table} (recorded_at)`);
    db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
    const insertSeen = db.prepare<[string, string, string]>(
      `INSERT OR IGNORE INTO ${table} (event_id, recorded_at, position) VALUES (?, ?, ?)`,
    );
    const checkpoint = db.prepare<[string]>('SELECT position FROM checkpoints WHERE name = ?');
    const save = db.prepare<[string, string]>(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
    const positionOf = (name: string) => (checkpoint.get(name) as { position: string } | undefined)?.position;
    this.storeCheckpoint = () => positionOf(projectionCheckpointName(projection));
    this.saveCheckpoint = (position) => save.run(projectionCheckpointName(projection), position);

    // Forgotten ids stand behind a watermark: the furthest position among them. An event at or before it was applied
    // (or is older than the retention and never came: only a relay that far behind), so it is skipped unread.
    // Read from the table each time (one indexed row): another projection of the same table may have pruned.
    const prunedName = `seen-pruned:${table}`;
    const forgotten = (event: RecordedEvent) => {
      const prunedUpTo = positionOf(prunedName);
      return prunedUpTo !== undefined && compare(event.position, prunedUpTo) <= 0;
    };
    const seen = (event: RecordedEvent) =>
      !forgotten(event) && insertSeen.run(event.id, event.recordedAt, event.position).changes > 0;
    const prunable = db.prepare<[string, number], { id: number; position: string | null }>(
      `SELECT rowid AS id, position FROM ${table} WHERE recorded_at < ? LIMIT ?`,
    );
    const remove = db.prepare<[number]>(`DELETE FROM ${table} WHERE rowid = ?`);
    this.pruneBatch = db.transaction((before: string) => {
      const was = positionOf(prunedName);
      let upTo = was;
      const rows = prunable.all(before, PRUNE_BATCH);
      for (const row of rows) {
        remove.run(row.id);
        if (row.position !== null && (upTo === undefined || compare(row.position, upTo) > 0)) upTo = row.position;
      }
      if (upTo !== undefined && upTo !== was) save.run(prunedName, upTo);
      return rows.length;
    });

    const applies = this.applies;
    this.applyFolded = db.transaction((events: readonly RecordedEvent[]) => {
      for (const event of events)
        if (options.types.has(event.type) && applies(event) && seen(event)) projection.apply(event, db);
    });
    this.applyOnce = db.transaction((event: RecordedEvent) => {
      const upTo = this.appliedUpTo;
      if (upTo !== undefined && compare(event.position, upTo) <= 0) return;
      if (!seen(event)) return;
      projection.apply(event, db);
    });
  }

  /**
   * Folds the projection from the other service's store up to its end, once, when it never was (no checkpoint): what
   * the topic no longer holds (past its retention) or never held (written before a relay to this broker). Each event
   * is applied once by its id, as from the topic (one the topic already brought is not applied again); the store's
   * end becomes the checkpoint, so the topic's events at or before it are skipped. A store of another process's is
   * only read.
   */
  async foldFromStore(store: EventStore, pageSize = 1_000): Promise<boolean> {
    if (this.storeCheckpoint() !== undefined) return false;
    let after: string | undefined;
    // Positions start after 0 (SQLite): an empty store still leaves a checkpoint, so the fold runs once.
    let last = '0';
    for (;;) {
      const page = await store.readAll({ ...(after !== undefined ? { after } : {}), maxCount: pageSize });
      this.applyFolded(page);
      if (page.length > 0) last = page[page.length - 1]!.position;
      if (page.length < pageSize) break;
      after = last;
    }
    this.saveCheckpoint(last);
    return true;
  }

  /** `foldFromStore` from the other service's SQLite file, when it is there (one DATA_DIR); only read. */
  async foldFromSqliteFile(file: string): Promise<boolean> {
    if (!existsSync(file)) return false;
    if (this.storeCheckpoint() !== undefined) return false;
    const store = new SqliteEventStore(file);
    try {
      return await this.foldFromStore(store);
    } finally {
      await store.close();
    }
  }

  /** Forgets the ids of events older than the retention (`now` minus `seenRetentionMs`); answers how many. */
  pruneSeen(now: Date = new Date()): number {
    const before = new Date(now.getTime() - (this.options.seenRetentionMs ?? DEFAULT_SEEN_RETENTION_MS)).toISOString();
    let pruned = 0;
    for (;;) {
      const batch = this.pruneBatch(before);
      pruned += batch;
      if (batch < PRUNE_BATCH) return pruned;
    }
  }

  /** Joins the group (resolves once live); a new group reads the topic from its beginning. */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.pruneSeen();
    this.pruning = setInterval(() => {
      try {
        this.pruneSeen();
      } catch {
        // Tried again on the next round: a bounded table, not a correct one, depends on it.
      }
    }, PRUNE_EVERY_MS);
    this.pruning.unref();
    this.appliedUpTo = this.storeCheckpoint();
    this.subscription = await this.options.bus.subscribe({
      groupId: this.options.groupId,
      topics: [this.options.topic],
      fromBeginning: true,
      ...(this.options.batched ? { batched: true } : {}),
      handler: async (message) => this.ingest(message),
    });
  }

  async stop(): Promise<void> {
    if (this.pruning) clearInterval(this.pruning);
    this.pruning = null;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  private ingest(message: IncomingMessage): void {
    // The relays name each message's event type in a header: most of a busy topic is passed over without parsing it.
    const type = message.headers[EVENT_TYPE_HEADER];
    if (type !== undefined && !this.options.types.has(type)) return;
    const event = JSON.parse(message.value) as EventMessage;
    if (!this.options.types.has(event.type)) return;
    const recorded: RecordedEvent = {
      id: event.id,
      streamId: event.stream_id,
      type: event.type,
      data: event.data,
      metadata: event.metadata,
      revision: event.revision,
      position: event.position,
      recordedAt: event.recorded_at,
    };
    if (this.applies(recorded)) this.applyOnce(recorded);
  }
}
