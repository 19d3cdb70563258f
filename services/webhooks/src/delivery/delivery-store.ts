/**
 * Webhook events, deliveries and attempts in the webhooks service's local SQLite. This is primary state, not a
 * read model: it is fed from the bus (which does not replay it), so it is not rebuilt from the event store.
 *
 *   webhook_resource_owners     transaction stream → merchant account (from `TransactionCreated`)
 *   webhook_delivery_events     one row per (bus message, public name): the exact body sent, forever the same, and
 *                               the context it came in (correlation id, `traceparent`), which every attempt resumes
 *   webhook_deliveries          one row per (subscription, webhook event): status, schedule, ordering lane
 *   webhook_delivery_attempts   every HTTP attempt of a delivery
 *
 * Ordering: a delivery's lane is (subscription, stream) — a transaction with its captures and refunds, or an API
 * key pair. `queue_seq` orders a lane; it is given anew each time a delivery is (re)scheduled, so a replayed
 * delivery goes after the lane's queued ones (docs/events.md, "Ordering"). Only a lane's head (the undone delivery
 * with the lowest `queue_seq`) is attempted: only the head has a `next_attempt_ms`; the deliveries waiting behind it
 * have none, and the next one gets one (is promoted) when the head is done. So finding due deliveries reads heads
 * only, however many wait behind a receiver that is down.
 */
import type Database from 'better-sqlite3';
import type { WebhookDelivery } from '@switchyard/contracts';
import { withDeferredSync } from '@switchyard/readmodel';

export type DeliveryStatus = WebhookDelivery['status'];

/** An undone status: the delivery is still to be attempted (and holds its lane). */
const UNDONE = `('pending', 'retrying')`;

export interface NewWebhookEvent {
  /** `${message id}:${name}`: a redelivered bus message inserts nothing. */
  readonly key: string;
  readonly messageId: string;
  readonly name: string;
  readonly streamId: string;
  readonly resourceId: string;
  readonly merchantAccountId: string | null;
  readonly createdAt: string;
  /** The exact JSON body every attempt sends. */
  readonly body: string;
  /** The context the message came in (`contextHeaders()`: correlation id, `traceparent`); attempts log and trace in it. */
  readonly traceContext?: Readonly<Record<string, string>>;
}

/** A delivery with what attempting it needs. */
export interface DeliveryRow {
  readonly seq: number;
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventSeq: number;
  readonly streamId: string;
  readonly queueSeq: number;
  readonly status: DeliveryStatus;
  readonly nextAttemptMs: number | null;
  readonly scheduledMs: number;
  /** Failures since the delivery was last (re)scheduled: the backoff exponent. */
  readonly failures: number;
  /** Raised by every replay: an attempt started before it does not settle the replayed delivery. */
  readonly generation: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly eventId: string;
  readonly eventName: string;
  readonly resourceId: string;
  readonly body: string;
  /** The context its event came in (empty when none was recorded). */
  readonly traceContext: Readonly<Record<string, string>>;
}

/** What settling a delivery needs: which one, of which generation, in which lane. */
export type LaneMember = Pick<DeliveryRow, 'id' | 'generation' | 'subscriptionId' | 'streamId'>;

export interface AttemptRow {
  readonly deliveryId: string;
  readonly attemptedAt: string;
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

export interface SubscriptionScope {
  readonly subscriptionId: string;
  /** null: instance level (every merchant account's events, and the instance's own). */
  readonly merchantAccountId: string | null;
  /** null: every name. */
  readonly eventNames: readonly string[] | null;
}

interface DeliveryRecord {
  seq: number;
  id: string;
  subscription_id: string;
  event_seq: number;
  stream_id: string;
  queue_seq: number;
  status: DeliveryStatus;
  next_attempt_ms: number | null;
  scheduled_ms: number;
  failures: number;
  generation: number;
  created_at: string;
  updated_at: string;
  event_id: string;
  event_name: string;
  resource_id: string;
  body: string;
  trace_context: string | null;
}

interface EventRecord {
  seq: number;
  key: string;
  message_id: string;
  name: string;
  stream_id: string;
  resource_id: string;
  merchant_account_id: string | null;
  created_at: string;
  body: string;
}

const toDelivery = (r: DeliveryRecord): DeliveryRow => ({
  seq: r.seq,
  id: r.id,
  subscriptionId: r.subscription_id,
  eventSeq: r.event_seq,
  streamId: r.stream_id,
  queueSeq: r.queue_seq,
  status: r.status,
  nextAttemptMs: r.next_attempt_ms,
  scheduledMs: r.scheduled_ms,
  failures: r.failures,
  generation: r.generation,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  eventId: r.event_id,
  eventName: r.event_name,
  resourceId: r.resource_id,
  body: r.body,
  traceContext: parseTraceContext(r.trace_context),
});

/** The stored context; a row from before it was kept (or unreadable) has none. */
function parseTraceContext(text: string | null): Readonly<Record<string, string>> {
  if (text === null) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return {};
  }
}

const DELIVERY_COLUMNS = `d.seq, d.id, d.subscription_id, d.event_seq, d.stream_id, d.queue_seq, d.status, d.next_attempt_ms, d.scheduled_ms,
  d.failures, d.generation, d.created_at, d.updated_at, e.message_id AS event_id, e.name AS event_name, e.resource_id, e.body, e.trace_context`;

/** The next lane position: above every delivery's. */
const NEXT_QUEUE_SEQ = `(SELECT COALESCE(MAX(queue_seq), 0) + 1 FROM webhook_deliveries)`;

function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS webhook_resource_owners (
      stream_id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS webhook_delivery_events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, message_id TEXT NOT NULL, name TEXT NOT NULL,
      stream_id TEXT NOT NULL, resource_id TEXT NOT NULL, merchant_account_id TEXT,
      created_at TEXT NOT NULL, created_ms INTEGER NOT NULL, body TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS webhook_delivery_events_created ON webhook_delivery_events (created_ms);
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, subscription_id TEXT NOT NULL,
      event_seq INTEGER NOT NULL, stream_id TEXT NOT NULL, queue_seq INTEGER NOT NULL, status TEXT NOT NULL,
      next_attempt_ms INTEGER, scheduled_ms INTEGER NOT NULL, failures INTEGER NOT NULL DEFAULT 0,
      generation INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
      UNIQUE (subscription_id, event_seq));
    CREATE INDEX IF NOT EXISTS webhook_deliveries_queue ON webhook_deliveries (queue_seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_ms) WHERE status IN ${UNDONE};
    CREATE INDEX IF NOT EXISTS webhook_deliveries_lane ON webhook_deliveries (subscription_id, stream_id, queue_seq) WHERE status IN ${UNDONE};
    CREATE INDEX IF NOT EXISTS webhook_deliveries_list ON webhook_deliveries (subscription_id, seq);
    CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
      delivery_id TEXT NOT NULL, n INTEGER NOT NULL, attempted_at TEXT NOT NULL, response_status INTEGER,
      error TEXT, duration_ms INTEGER NOT NULL, PRIMARY KEY (delivery_id, n));
    CREATE TABLE IF NOT EXISTS webhook_ingest_syncs (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);`);
  // Added with tracing: files from before get the column (their events have no context).
  const eventColumns = db
    .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('webhook_delivery_events')`)
    .all();
  if (!eventColumns.some((column) => column.name === 'trace_context'))
    db.exec('ALTER TABLE webhook_delivery_events ADD COLUMN trace_context TEXT');
}

function prepareStatements(db: Database.Database) {
  const listWhere = `d.subscription_id = @subscriptionId AND (@status IS NULL OR d.status = @status) AND (@eventName IS NULL OR e.name = @eventName)`;
  return {
    // A synced commit of its own: it syncs the WAL, and with it the ingests committed before it without an fsync.
    markSynced: db.prepare(
      'INSERT INTO webhook_ingest_syncs (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1',
    ),
    saveOwner: db.prepare<{ streamId: string; merchantAccountId: string }>(
      'INSERT INTO webhook_resource_owners (stream_id, merchant_account_id) VALUES (@streamId, @merchantAccountId) ON CONFLICT (stream_id) DO NOTHING',
    ),
    owner: db.prepare<[string], { merchant_account_id: string }>(
      'SELECT merchant_account_id FROM webhook_resource_owners WHERE stream_id = ?',
    ),
    hasEvent: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM webhook_delivery_events WHERE key = ?'),
    insertEvent: db.prepare<Omit<NewWebhookEvent, 'traceContext'> & { createdMs: number; traceContext: string | null }>(
      `INSERT INTO webhook_delivery_events (key, message_id, name, stream_id, resource_id, merchant_account_id, created_at, created_ms, body, trace_context)
       VALUES (@key, @messageId, @name, @streamId, @resourceId, @merchantAccountId, @createdAt, @createdMs, @body, @traceContext)
       ON CONFLICT (key) DO NOTHING`,
    ),
    insertDelivery: db.prepare<{
      id: string;
      subscriptionId: string;
      eventSeq: number;
      streamId: string;
      nowMs: number;
      now: string;
    }>(
      `INSERT INTO webhook_deliveries (id, subscription_id, event_seq, stream_id, queue_seq, status, next_attempt_ms, scheduled_ms, created_at, updated_at)
       VALUES (@id, @subscriptionId, @eventSeq, @streamId, ${NEXT_QUEUE_SEQ}, 'pending', NULL, @nowMs, @now, @now)
       ON CONFLICT (subscription_id, event_seq) DO NOTHING`,
    ),
    // The lane's head is due now unless it has a time already (a retry's, a hold's).
    promoteLane: db.prepare<{ subscriptionId: string; streamId: string; nowMs: number }>(
      `UPDATE webhook_deliveries SET next_attempt_ms = @nowMs
       WHERE next_attempt_ms IS NULL AND id = (SELECT id FROM webhook_deliveries
                                               WHERE subscription_id = @subscriptionId AND stream_id = @streamId AND status IN ${UNDONE}
                                               ORDER BY queue_seq LIMIT 1)`,
    ),
    // Every lane's head without a time (a safety net at start: there should be none).
    promoteAll: db.prepare<{ nowMs: number }>(
      `UPDATE webhook_deliveries SET next_attempt_ms = @nowMs
       WHERE next_attempt_ms IS NULL AND status IN ${UNDONE}
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries b
                         WHERE b.subscription_id = webhook_deliveries.subscription_id AND b.stream_id = webhook_deliveries.stream_id
                           AND b.status IN ${UNDONE} AND b.queue_seq < webhook_deliveries.queue_seq)`,
    ),
    // A lane's head only: no undone delivery of the same lane comes before it.
    due: db.prepare<{ nowMs: number; limit: number }, DeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_delivery_events e ON e.seq = d.event_seq
       WHERE d.status IN ${UNDONE} AND d.next_attempt_ms <= @nowMs
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries b
                         WHERE b.subscription_id = d.subscription_id AND b.stream_id = d.stream_id
                           AND b.status IN ${UNDONE} AND b.queue_seq < d.queue_seq)
       ORDER BY d.next_attempt_ms, d.queue_seq LIMIT @limit`,
    ),
    // Counted on the partial indexes of undone deliveries: a scrape does not scan the delivered ones.
    backlog: db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status IN ${UNDONE}`),
    byId: db.prepare<[string], DeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_delivery_events e ON e.seq = d.event_seq WHERE d.id = ?`,
    ),
    attemptCount: db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM webhook_delivery_attempts WHERE delivery_id = ?',
    ),
    insertAttempt: db.prepare<AttemptRow & { n: number }>(
      `INSERT INTO webhook_delivery_attempts (delivery_id, n, attempted_at, response_status, error, duration_ms)
       VALUES (@deliveryId, @n, @attemptedAt, @responseStatus, @error, @durationMs)`,
    ),
    settle: db.prepare<{
      id: string;
      generation: number;
      status: DeliveryStatus;
      nextAttemptMs: number | null;
      failures: number;
      now: string;
    }>(
      `UPDATE webhook_deliveries SET status = @status, next_attempt_ms = @nextAttemptMs, failures = @failures, updated_at = @now
       WHERE id = @id AND generation = @generation AND status IN ${UNDONE}`,
    ),
    postpone: db.prepare<{ id: string; generation: number; nextAttemptMs: number; now: string }>(
      `UPDATE webhook_deliveries SET next_attempt_ms = @nextAttemptMs, updated_at = @now WHERE id = @id AND generation = @generation AND status IN ${UNDONE}`,
    ),
    failUndoneOf: db.prepare<{ subscriptionId: string; now: string }>(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_ms = NULL, updated_at = @now WHERE subscription_id = @subscriptionId AND status IN ${UNDONE}`,
    ),
    reschedule: db.prepare<{ id: string; nowMs: number; now: string }, { subscription_id: string; stream_id: string }>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_ms = NULL, scheduled_ms = @nowMs, failures = 0,
         generation = generation + 1, queue_seq = ${NEXT_QUEUE_SEQ}, updated_at = @now WHERE id = @id
       RETURNING subscription_id, stream_id`,
    ),
    listAfter: db.prepare<
      { subscriptionId: string; status: string | null; eventName: string | null; key: number; limit: number },
      DeliveryRecord
    >(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_delivery_events e ON e.seq = d.event_seq
       WHERE ${listWhere} AND d.seq < @key ORDER BY d.seq DESC LIMIT @limit`,
    ),
    listBefore: db.prepare<
      { subscriptionId: string; status: string | null; eventName: string | null; key: number; limit: number },
      DeliveryRecord
    >(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_delivery_events e ON e.seq = d.event_seq
       WHERE ${listWhere} AND d.seq > @key ORDER BY d.seq ASC LIMIT @limit`,
    ),
    rangeBounds: db.prepare<{ fromMs: number; toMs: number }, { lo: number | null; hi: number | null }>(
      'SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM webhook_delivery_events WHERE created_ms BETWEEN @fromMs AND @toMs',
    ),
    // The subscription's events of the range, in the order they came: its merchant account's (every account's
    // and the instance's own when instance level), the names it wants.
    rangeEvents: db.prepare<
      {
        subscriptionId: string;
        merchantAccountId: string | null;
        names: string | null;
        fromMs: number;
        toMs: number;
        after: number;
        hi: number;
        limit: number;
      },
      EventRecord & { delivery_id: string | null }
    >(
      `SELECT e.*, d.id AS delivery_id FROM webhook_delivery_events e
         LEFT JOIN webhook_deliveries d ON d.event_seq = e.seq AND d.subscription_id = @subscriptionId
       WHERE e.seq > @after AND e.seq <= @hi AND e.created_ms BETWEEN @fromMs AND @toMs
         AND (@merchantAccountId IS NULL OR e.merchant_account_id = @merchantAccountId)
         AND (@names IS NULL OR e.name IN (SELECT value FROM json_each(@names)))
       ORDER BY e.seq LIMIT @limit`,
    ),
  };
}

export class DeliveryStore {
  private readonly statements: ReturnType<typeof prepareStatements>;

  /** An ingest or owner row committed without an fsync since the last `syncIngested`. */
  private unsynced = false;

  constructor(private readonly db: Database.Database) {
    createSchema(db);
    this.statements = prepareStatements(db);
  }

  /**
   * Makes every ingest committed so far durable: one synced commit on the same file syncs the WAL up to it (the bus
   * calls it before the messages it covers count as acknowledged: `SubscribeOptions.sync`). No-op when nothing waits.
   */
  syncIngested(): void {
    if (!this.unsynced) return;
    this.statements.markSynced.run();
    this.unsynced = false;
  }

  /**
   * Remembers the merchant account of a stream (the first one told wins: it never changes). Committed without an
   * fsync (`withDeferredSync`: a process crash keeps it, a power loss can take it back only with everything committed
   * after it), synced by `syncIngested` before the message that brought it is acknowledged.
   */
  saveOwner(streamId: string, merchantAccountId: string): void {
    withDeferredSync(this.db, () => this.statements.saveOwner.run({ streamId, merchantAccountId }));
    this.unsynced = true;
  }

  ownerOf(streamId: string): string | null {
    return this.statements.owner.get(streamId)?.merchant_account_id ?? null;
  }

  hasEvent(key: string): boolean {
    return this.statements.hasEvent.get(key) !== undefined;
  }

  /**
   * Stores the webhook events of one bus message and, for each event stored now (not before), one delivery per
   * subscription `subscribers` names — all in one SQLite transaction, with the owner of a transaction the message
   * created (`owner`, one commit rather than two). Answers how many deliveries were created. Committed without an
   * fsync: `syncIngested` makes it durable before its message is acknowledged, one fsync for a batch of messages.
   */
  ingest(
    events: readonly NewWebhookEvent[],
    subscribers: (event: NewWebhookEvent) => readonly string[],
    newId: () => string,
    now: Date,
    owner?: { readonly streamId: string; readonly merchantAccountId: string },
  ): number {
    const nowMs = now.getTime();
    const nowIso = now.toISOString();
    const ingest = this.db.transaction(() => {
      if (owner) this.statements.saveOwner.run(owner);
      let created = 0;
      for (const event of events) {
        const traceContext =
          event.traceContext && Object.keys(event.traceContext).length > 0 ? JSON.stringify(event.traceContext) : null;
        const inserted = this.statements.insertEvent.run({
          ...event,
          createdMs: Date.parse(event.createdAt),
          traceContext,
        });
        if (inserted.changes === 0) continue;
        const eventSeq = Number(inserted.lastInsertRowid);
        for (const subscriptionId of subscribers(event)) {
          created += this.statements.insertDelivery.run({
            id: newId(),
            subscriptionId,
            eventSeq,
            streamId: event.streamId,
            nowMs,
            now: nowIso,
          }).changes;
          this.statements.promoteLane.run({ subscriptionId, streamId: event.streamId, nowMs });
        }
      }
      return created;
    });
    const created = withDeferredSync(this.db, () => ingest());
    this.unsynced = true;
    return created;
  }

  /** Gives every lane's head a time if it has none (at start). */
  promoteAll(now: Date): number {
    return this.statements.promoteAll.run({ nowMs: now.getTime() }).changes;
  }

  /** Lane heads due at `nowMs`, earliest first. */
  due(nowMs: number, limit: number): DeliveryRow[] {
    return this.statements.due.all({ nowMs, limit }).map(toDelivery);
  }

  /** Deliveries not yet done (pending or retrying), every subscription's. */
  backlog(): number {
    return this.statements.backlog.get()?.n ?? 0;
  }

  find(id: string): DeliveryRow | null {
    const record = this.statements.byId.get(id);
    return record ? toDelivery(record) : null;
  }

  /**
   * Records an attempt and, unless the delivery was replayed meanwhile (another generation) or settled otherwise,
   * its outcome: `succeeded`, `retrying` at `nextAttemptMs`, or `failed` (nextAttemptMs null).
   */
  recordAttempt(
    delivery: LaneMember,
    attempt: AttemptRow,
    outcome: { status: DeliveryStatus; nextAttemptMs: number | null; failures: number },
    now: Date,
  ): void {
    this.db.transaction(() => {
      const n = (this.statements.attemptCount.get(delivery.id)?.n ?? 0) + 1;
      this.statements.insertAttempt.run({ ...attempt, n });
      this.settle(delivery, outcome, now);
    })();
  }

  /** Settles a delivery without an attempt (given up while held). */
  settleWithoutAttempt(delivery: LaneMember & Pick<DeliveryRow, 'failures'>, status: DeliveryStatus, now: Date): void {
    this.db.transaction(() =>
      this.settle(delivery, { status, nextAttemptMs: null, failures: delivery.failures }, now),
    )();
  }

  /** Done (succeeded, failed): the next delivery of the lane becomes due. */
  private settle(
    delivery: LaneMember,
    outcome: { status: DeliveryStatus; nextAttemptMs: number | null; failures: number },
    now: Date,
  ): void {
    const changed = this.statements.settle.run({
      id: delivery.id,
      generation: delivery.generation,
      ...outcome,
      now: now.toISOString(),
    }).changes;
    if (changed > 0 && outcome.status !== 'pending' && outcome.status !== 'retrying') {
      this.statements.promoteLane.run({
        subscriptionId: delivery.subscriptionId,
        streamId: delivery.streamId,
        nowMs: now.getTime(),
      });
    }
  }

  /** Holds a delivery until `nextAttemptMs`, without counting an attempt. */
  postpone(delivery: Pick<DeliveryRow, 'id' | 'generation'>, nextAttemptMs: number, now: Date): void {
    this.statements.postpone.run({
      id: delivery.id,
      generation: delivery.generation,
      nextAttemptMs,
      now: now.toISOString(),
    });
  }

  /** Fails every undone delivery of a subscription (deleted). */
  failUndoneOf(subscriptionId: string, now: Date): number {
    return this.statements.failUndoneOf.run({ subscriptionId, now: now.toISOString() }).changes;
  }

  /**
   * Schedules a delivery again, at the end of its lane (due now when the lane has nothing else undone): status
   * pending, backoff and age start over.
   */
  reschedule(id: string, now: Date): void {
    this.db.transaction(() => {
      const lane = this.statements.reschedule.get({ id, nowMs: now.getTime(), now: now.toISOString() });
      if (lane)
        this.statements.promoteLane.run({
          subscriptionId: lane.subscription_id,
          streamId: lane.stream_id,
          nowMs: now.getTime(),
        });
    })();
  }

  /** A page of a subscription's deliveries, newest first: `key` is a delivery `seq` to continue after/before. */
  listPage(
    filter: { subscriptionId: string; status: string | null; eventName: string | null },
    direction: 'after' | 'before',
    key: number | null,
    limit: number,
  ): DeliveryRow[] {
    if (direction === 'after')
      return this.statements.listAfter.all({ ...filter, key: key ?? Number.MAX_SAFE_INTEGER, limit }).map(toDelivery);
    return this.statements.listBefore.all({ ...filter, key: key ?? 0, limit }).map(toDelivery);
  }

  attemptsOf(deliveryIds: readonly string[]): Map<string, AttemptRow[]> {
    const result = new Map<string, AttemptRow[]>(deliveryIds.map((id) => [id, []]));
    if (deliveryIds.length === 0) return result;
    const rows = this.db
      .prepare<
        [string],
        {
          delivery_id: string;
          attempted_at: string;
          response_status: number | null;
          error: string | null;
          duration_ms: number;
        }
      >(
        'SELECT * FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, n',
      )
      .all(JSON.stringify(deliveryIds));
    for (const row of rows) {
      result.get(row.delivery_id)?.push({
        deliveryId: row.delivery_id,
        attemptedAt: row.attempted_at,
        responseStatus: row.response_status,
        error: row.error,
        durationMs: row.duration_ms,
      });
    }
    return result;
  }

  /**
   * Range replay: the subscription's events created in [fromMs, toMs] after event `after` (a `seq`), at most
   * `limit`, in the order they came. Each is scheduled again — its delivery rescheduled, or one created when there
   * is none (the event happened before the subscription existed, or before it wanted that name). One transaction.
   */
  replayRange(
    scope: SubscriptionScope,
    range: { fromMs: number; toMs: number; after: number; limit: number },
    newId: () => string,
    now: Date,
  ): { scheduled: number; last: number | null; more: boolean } {
    return this.db.transaction(() => {
      const bounds = this.statements.rangeBounds.get({ fromMs: range.fromMs, toMs: range.toMs });
      if (!bounds || bounds.lo === null || bounds.hi === null) return { scheduled: 0, last: null, more: false };
      const events = this.statements.rangeEvents.all({
        subscriptionId: scope.subscriptionId,
        merchantAccountId: scope.merchantAccountId,
        names: scope.eventNames === null ? null : JSON.stringify(scope.eventNames),
        fromMs: range.fromMs,
        toMs: range.toMs,
        after: Math.max(range.after, bounds.lo - 1),
        hi: bounds.hi,
        limit: range.limit + 1,
      });
      const batch = events.slice(0, range.limit);
      const nowMs = now.getTime();
      const nowIso = now.toISOString();
      for (const event of batch) {
        if (event.delivery_id !== null) {
          this.reschedule(event.delivery_id, now);
        } else {
          this.statements.insertDelivery.run({
            id: newId(),
            subscriptionId: scope.subscriptionId,
            eventSeq: event.seq,
            streamId: event.stream_id,
            nowMs,
            now: nowIso,
          });
          this.statements.promoteLane.run({ subscriptionId: scope.subscriptionId, streamId: event.stream_id, nowMs });
        }
      }
      return { scheduled: batch.length, last: batch[batch.length - 1]?.seq ?? null, more: events.length > range.limit };
    })();
  }
}
