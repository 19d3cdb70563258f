/**
 * What the in-process bus keeps across restarts (the embedded runtime): its dead-letter topics and each consumer
 * group's parked-stream state — `DATA_DIR/bus.db`. Nothing else of the bus is kept: its other topics are fed again by
 * the relays from their checkpoints. The CLI opens the same file (`cli dead-letters`) with the server running or
 * stopped; the server reads the commands it appends within its poll interval.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateDatabaseFile } from '@switchyard/eventstore/src/private-files';
import type { DeadLetterLog, DeadLetterLogAppend } from '../dead-letter/dead-letter-log';
import { isDeadLetterTopic, topicOfDeadLetters, type DeadLetterRecord } from '../dead-letter/dead-letter-records';
import { ParkedStreams } from '../dead-letter/parked-streams';

export interface StoredDeadLetter extends DeadLetterRecord {
  /** Append order across every dead-letter topic (and process). */
  readonly seq: number;
  readonly topic: string;
}

export interface SavedPosition {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
  /** Dead-letter topics only: the group's next offset. Data topics are in memory, so their offsets are not kept. */
  readonly offset: number | null;
  readonly metadata: string | null;
}

export interface DurableBusState {
  /** Appends a record to a partition of a dead-letter topic; returns its offset, numbered here. */
  appendDeadLetter(topic: string, partition: number, record: Omit<DeadLetterRecord, 'partition' | 'offset'>): number;
  /** The records appended after `seq`, in append order. */
  deadLettersAfter(seq: number): StoredDeadLetter[];
  positions(): SavedPosition[];
  savePosition(groupId: string, topic: string, partition: number, offset: number | null, metadata: string | null): void;
}

export const BUS_STATE_FILE = 'bus.db';

interface RecordRow {
  seq: number;
  topic: string;
  topic_partition: number;
  record_offset: number;
  record_key: string;
  record_value: string;
  headers: string;
}

interface AppendParameters {
  topic: string;
  partition: number;
  key: string;
  value: string;
  headers: string;
}

interface PositionRow {
  group_id: string;
  topic: string;
  topic_partition: number;
  next_offset: number | null;
  metadata: string | null;
}

export class SqliteBusState implements DurableBusState, DeadLetterLog {
  private readonly appendStatement: Database.Statement<[AppendParameters], { record_offset: number }>;
  private readonly afterStatement: Database.Statement<[number], RecordRow>;
  private readonly saveStatement: Database.Statement<[string, string, number, number | null, string | null]>;

  /** `DATA_DIR/bus.db`, created when missing: 0600, in a directory created 0700 (it holds parked events). */
  static open(dataDir: string): SqliteBusState {
    return new SqliteBusState(new Database(privateDatabaseFile(dataDir, BUS_STATE_FILE)));
  }

  /** The file when it exists (the CLI: nothing was ever parked when it does not), else null. */
  static openExisting(dataDir: string): SqliteBusState | null {
    const file = path.join(dataDir, BUS_STATE_FILE);
    return fs.existsSync(file) ? new SqliteBusState(new Database(file)) : null;
  }

  constructor(readonly db: Database.Database) {
    db.pragma('journal_mode = WAL');
    // Parking is rare and must survive a power loss: the message is acknowledged to the relay once it is here.
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.exec(`
      CREATE TABLE IF NOT EXISTS dead_letter_records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        topic TEXT NOT NULL,
        topic_partition INTEGER NOT NULL,
        record_offset INTEGER NOT NULL,
        record_key TEXT NOT NULL,
        record_value TEXT NOT NULL,
        headers TEXT NOT NULL,
        UNIQUE (topic, topic_partition, record_offset)
      );
      CREATE TABLE IF NOT EXISTS consumer_positions (
        group_id TEXT NOT NULL,
        topic TEXT NOT NULL,
        topic_partition INTEGER NOT NULL,
        next_offset INTEGER,
        metadata TEXT,
        PRIMARY KEY (group_id, topic, topic_partition)
      );
    `);
    // One statement: the offset is taken and the row written under SQLite's write lock, so the server and the CLI
    // appending at the same moment get consecutive offsets.
    this.appendStatement = db.prepare(`
      INSERT INTO dead_letter_records (topic, topic_partition, record_offset, record_key, record_value, headers)
      SELECT @topic, @partition, coalesce(max(record_offset) + 1, 0), @key, @value, @headers FROM dead_letter_records
      WHERE topic = @topic AND topic_partition = @partition
      RETURNING record_offset`);
    this.afterStatement = db.prepare('SELECT * FROM dead_letter_records WHERE seq > ? ORDER BY seq');
    this.saveStatement = db.prepare(`
      INSERT INTO consumer_positions (group_id, topic, topic_partition, next_offset, metadata) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (group_id, topic, topic_partition)
      DO UPDATE SET next_offset = excluded.next_offset, metadata = excluded.metadata`);
  }

  appendDeadLetter(topic: string, partition: number, record: Omit<DeadLetterRecord, 'partition' | 'offset'>): number {
    const row = this.appendStatement.get({
      topic,
      partition,
      key: record.key,
      value: record.value,
      headers: JSON.stringify(record.headers),
    });
    if (!row) throw new Error(`appending to ${topic} returned no offset`);
    return row.record_offset;
  }

  deadLettersAfter(seq: number): StoredDeadLetter[] {
    return this.afterStatement.all(seq).map(toStored);
  }

  positions(): SavedPosition[] {
    const rows = this.db.prepare('SELECT * FROM consumer_positions').all() as PositionRow[];
    return rows.map((row) => ({
      groupId: row.group_id,
      topic: row.topic,
      partition: row.topic_partition,
      offset: row.next_offset,
      metadata: row.metadata,
    }));
  }

  savePosition(
    groupId: string,
    topic: string,
    partition: number,
    offset: number | null,
    metadata: string | null,
  ): void {
    this.saveStatement.run(groupId, topic, partition, offset, metadata);
  }

  // ---- DeadLetterLog: the CLI's view ------------------------------------------------------------------------

  async deadLetterTopics(): Promise<string[]> {
    const rows = this.db.prepare('SELECT DISTINCT topic FROM dead_letter_records ORDER BY topic').all() as Array<{
      topic: string;
    }>;
    return rows.map((row) => row.topic).filter(isDeadLetterTopic);
  }

  async read(deadLetterTopic: string): Promise<DeadLetterRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM dead_letter_records WHERE topic = ? ORDER BY topic_partition, record_offset')
      .all(deadLetterTopic) as RecordRow[];
    return rows.map(toStored);
  }

  async parkedStreams(groupId: string, topic: string): Promise<Map<number, ParkedStreams>> {
    const rows = this.db
      .prepare('SELECT * FROM consumer_positions WHERE group_id = ? AND topic = ?')
      .all(groupId, topic) as PositionRow[];
    return new Map(rows.map((row) => [row.topic_partition, ParkedStreams.decode(row.metadata)]));
  }

  async append(deadLetterTopic: string, messages: readonly DeadLetterLogAppend[]): Promise<void> {
    if (!isDeadLetterTopic(deadLetterTopic))
      throw new RangeError(`${deadLetterTopic} is not a dead-letter topic of ${topicOfDeadLetters(deadLetterTopic)}`);
    this.db
      .transaction(() => {
        for (const message of messages)
          this.appendDeadLetter(deadLetterTopic, message.partition, {
            key: message.key,
            value: message.value,
            headers: message.headers ?? {},
          });
      })
      .immediate();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function toStored(row: RecordRow): StoredDeadLetter {
  return {
    seq: row.seq,
    topic: row.topic,
    partition: row.topic_partition,
    offset: row.record_offset,
    key: row.record_key,
    value: row.record_value,
    headers: JSON.parse(row.headers) as Record<string, string>,
  };
}
