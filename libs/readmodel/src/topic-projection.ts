/**
 * A projection fed from another service's topic instead of its store, which another process owns (distributed
 * runtime): the stored gift cards' usage and the stored payment methods' usage follow `transactions.events` this way,
 * each as a consumer group of its own. The embedded runtime keeps following the store (`Projector`, read-your-writes).
 *
 * The bus delivers at least once: each event is applied in one SQLite transaction with the record of its id (the
 * `seenTable`), so a redelivery, or a new consumer group reading the topic from its beginning, applies nothing twice.
 * An event the store-following projection already applied (at or before its checkpoint, `projection:<name>`: an
 * installation that ran embedded before) is skipped too. Reads may lag a moment behind the other service here.
 */
import type Database from 'better-sqlite3';
import type { BusSubscription, IncomingMessage, MessageBus } from '@switchyard/bus';
import type { EventMessage } from '@switchyard/contracts';
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
}

export class TopicProjection {
  private subscription: BusSubscription | null = null;
  private readonly applyOnce: (event: RecordedEvent) => void;
  private readonly storeCheckpoint: () => string | undefined;
  private readonly saveCheckpoint: (position: string) => void;
  private readonly applyFolded: (events: readonly RecordedEvent[]) => void;
  private readonly applies: (event: RecordedEvent) => boolean;
  /** Read at `start`: a fold from the store just before (`foldFromStore`) moves it. */
  private appliedUpTo: string | undefined;

  constructor(
    db: Database.Database,
    projection: Projection,
    private readonly options: TopicProjectionOptions,
  ) {
    this.applies = options.applies ?? (() => true);
    if (!/^[a-z_][a-z0-9_]*$/.test(options.seenTable)) throw new Error(`not a table name: ${options.seenTable}`);
    db.exec(`CREATE TABLE IF NOT EXISTS ${options.seenTable} (event_id TEXT PRIMARY KEY)`);
    db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
    const seen = db.prepare<[string]>(`INSERT OR IGNORE INTO ${options.seenTable} (event_id) VALUES (?)`);
    const checkpoint = db.prepare<[string]>('SELECT position FROM checkpoints WHERE name = ?');
    this.storeCheckpoint = () =>
      (checkpoint.get(projectionCheckpointName(projection)) as { position: string } | undefined)?.position;
    const save = db.prepare<[string, string]>(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
    this.saveCheckpoint = (position) => save.run(projectionCheckpointName(projection), position);
    const applies = this.applies;
    this.applyFolded = db.transaction((events: readonly RecordedEvent[]) => {
      for (const event of events)
        if (options.types.has(event.type) && applies(event) && seen.run(event.id).changes > 0)
          projection.apply(event, db);
    });
    this.applyOnce = db.transaction((event: RecordedEvent) => {
      const upTo = this.appliedUpTo;
      if (upTo !== undefined && options.comparePositions(event.position, upTo) <= 0) return;
      if (seen.run(event.id).changes === 0) return;
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

  /** Joins the group (resolves once live); a new group reads the topic from its beginning. */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.appliedUpTo = this.storeCheckpoint();
    this.subscription = await this.options.bus.subscribe({
      groupId: this.options.groupId,
      topics: [this.options.topic],
      fromBeginning: true,
      handler: async (message) => this.ingest(message),
    });
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  private ingest(message: IncomingMessage): void {
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
