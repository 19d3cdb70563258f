import type { CommittedPosition, OffsetCommit } from '../dead-letter/dead-lettering';
import { isDeadLetterTopic } from '../dead-letter/dead-letter-records';
import type { IncomingMessage, OutgoingMessage } from '../message-bus';
import type { DurableBusState, StoredDeadLetter } from './durable-bus-state';

/**
 * The state an in-process bus shares between its clients, as a Kafka cluster does: partitioned topic logs and,
 * per consumer group, the committed offset of every partition and the members. Several `InProcessMessageBus`
 * clients on one broker behave like several Kafka clients on one cluster (a group resumes from its committed
 * offsets in a new client; two clients in one group share the partitions). Nothing is persisted.
 *
 * Retention: a message stays in memory until every group that consumes its topic has committed it; a topic no
 * group has joined keeps its last `unconsumedRetention` messages per partition. A group that joins later "from
 * the beginning" starts at the earliest message still kept, as a Kafka consumer does after retention. Dead-letter
 * topics (`<topic>.dead-letter`) are kept whole: they are small, and `cli dead-letters list` reads them.
 *
 * With `durable` (the embedded runtime: `DATA_DIR/bus.db`), the dead-letter topics and the parked-stream state of
 * every group survive the process, and records other processes append there (the CLI's replay and discard
 * commands) are read every `durablePollIntervalMs`.
 */
export interface InProcessBrokerOptions {
  /** Partitions per topic; a message goes to the partition of its key. Default 1, as the dev Kafka broker. */
  readonly partitions?: number;
  /** Messages kept per partition of a topic no consumer group has joined. Default 10,000. */
  readonly unconsumedRetention?: number;
  /** Where dead-letter topics and parked-stream state are kept across restarts. Default: in memory only. */
  readonly durable?: DurableBusState;
  /** How often records appended to `durable` by other processes are looked for. Default 100 ms. */
  readonly durablePollIntervalMs?: number;
}

/** One consumer in a group, as the broker sees it; implemented by the bus client's subscription. */
export interface GroupMember {
  readonly topics: ReadonlySet<string>;
  /**
   * Handles the message and commits its offset (`InProcessBroker.commit`) before resolving, so that a member that
   * waits for its deliveries on stop has its offsets committed when it is gone. A member that is stopping may
   * resolve without committing: the message then goes to the next member.
   */
  deliver(message: IncomingMessage): Promise<void>;
  /** Called after `deliver` rejected; resolves when the message may be delivered again. */
  backOff(error: unknown, message: IncomingMessage, attempt: number): Promise<void>;
  /** Makes what its handler committed so far durable (`SubscribeOptions.sync`), before `consumed` answers. */
  sync(): Promise<void>;
}

export interface StoredRecord {
  readonly key: string;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A wake-up for every waiter, re-armed after each notify. */
class Signal {
  private waiters: Array<() => void> = [];

  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** One partition of a topic: the messages still kept, and the offset of the first of them. */
class PartitionLog {
  /** Offset of `records[0]`. */
  private base = 0;
  private records: StoredRecord[] = [];

  get start(): number {
    return this.base;
  }

  get end(): number {
    return this.base + this.records.length;
  }

  push(record: StoredRecord): void {
    this.records.push(record);
  }

  /** Appends a record numbered elsewhere (the durable state); an empty log starts at its offset. */
  pushAt(offset: number, record: StoredRecord): void {
    if (this.records.length === 0 && offset > this.base) this.base = offset;
    if (offset !== this.end) return;
    this.records.push(record);
  }

  read(offset: number): StoredRecord | undefined {
    return offset < this.base ? undefined : this.records[offset - this.base];
  }

  /**
   * Drops the messages before `offset`. A partial trim is batched (an array splice moves what remains), so a
   * partition whose consumers keep up is emptied at once and one with a lagging group is trimmed every 1,024.
   */
  trimTo(offset: number): void {
    const count = Math.min(offset, this.end) - this.base;
    if (count <= 0) return;
    if (count === this.records.length) this.records = [];
    else if (count >= TRIM_BATCH) this.records.splice(0, count);
    else return;
    this.base += count;
  }
}

const TRIM_BATCH = 1024;

class ConsumerGroup {
  /** In join order: partition p of a topic belongs to the (p mod n)-th member subscribed to the topic. */
  readonly members: GroupMember[] = [];
  /** `${topic}\u0000${partition}` → next offset to deliver. */
  readonly committed = new Map<string, number>();
  /** `${topic}\u0000${partition}` → the metadata committed with the offset (the parked streams). */
  readonly metadata = new Map<string, string>();
  readonly changed = new Signal();
  /** Notified when an offset is committed or a member leaves (`InProcessBroker.consumed`). */
  readonly progressed = new Signal();
  private readonly workers = new Set<string>();

  constructor(
    readonly id: string,
    private readonly broker: InProcessBroker,
  ) {}

  assignee(topic: string, partition: number): GroupMember | undefined {
    const candidates = this.members.filter((member) => member.topics.has(topic));
    return candidates[partition % Math.max(1, candidates.length)];
  }

  hasMemberFor(topic: string): boolean {
    return this.members.some((member) => member.topics.has(topic));
  }

  ensureWorker(topic: string, partition: number): void {
    const slot = partitionSlot(topic, partition);
    if (this.workers.has(slot)) return;
    this.workers.add(slot);
    void this.work(topic, partition).finally(() => {
      this.workers.delete(slot);
      // A member may have subscribed while the worker was winding down.
      if (this.hasMemberFor(topic)) this.ensureWorker(topic, partition);
    });
  }

  /**
   * One message of a partition in flight at a time, whichever member it is assigned to: this is what keeps
   * a key's messages in order, across redeliveries and across members joining or leaving.
   */
  private async work(topic: string, partition: number): Promise<void> {
    const slot = partitionSlot(topic, partition);
    let attempt = 0;
    while (this.hasMemberFor(topic)) {
      const member = this.assignee(topic, partition);
      // An offset before the earliest message kept resumes at it (Kafka's reset after retention).
      const offset = Math.max(this.committed.get(slot) ?? 0, this.broker.start(topic, partition));
      const record = this.broker.read(topic, partition, offset);
      if (!member || !record) {
        await this.changed.wait();
        continue;
      }
      const message: IncomingMessage = { topic, partition, offset: String(offset), ...record };
      try {
        await member.deliver(message);
        attempt = 0;
        // Not committed by a member still in charge of the partition: wait for a change rather than spin.
        if (this.committed.get(slot) === offset && this.assignee(topic, partition) === member)
          await this.changed.wait();
      } catch (error) {
        attempt += 1;
        await member.backOff(error, message, attempt);
      }
    }
  }
}

const partitionSlot = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
const groupSlot = (groupId: string, topic: string, partition: number): string =>
  `${groupId}\u0000${topic}\u0000${partition}`;

/** FNV-1a over the key's UTF-16 code units: stable across runs, which is all partitioning needs here. */
const hashKey = (key: string): number => {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index += 1) {
    hash ^= key.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};

export class InProcessBroker {
  readonly partitions: number;
  private readonly unconsumedRetention: number;
  private readonly topics = new Map<string, PartitionLog[]>();
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly durable: DurableBusState | undefined;
  /** `${group}\u0000${topic}\u0000${partition}` → the position `durable` kept from an earlier run. */
  private readonly savedPositions = new Map<string, { offset: number | null; metadata: string | null }>();
  private durableSeq = 0;
  private durablePoll: NodeJS.Timeout | undefined;

  constructor(options: InProcessBrokerOptions = {}) {
    const partitions = options.partitions ?? 1;
    if (!Number.isInteger(partitions) || partitions < 1)
      throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
    const unconsumedRetention = options.unconsumedRetention ?? 10_000;
    if (!Number.isInteger(unconsumedRetention) || unconsumedRetention < 0)
      throw new RangeError(`unconsumedRetention must be a non-negative integer, got ${unconsumedRetention}`);
    this.partitions = partitions;
    this.unconsumedRetention = unconsumedRetention;
    this.durable = options.durable;
    if (this.durable) {
      for (const saved of this.durable.positions()) {
        this.savedPositions.set(groupSlot(saved.groupId, saved.topic, saved.partition), {
          offset: saved.offset,
          metadata: saved.metadata,
        });
      }
      this.pullDurable();
      this.durablePoll = setInterval(() => this.pullDurable(), options.durablePollIntervalMs ?? 100);
      this.durablePoll.unref();
    }
  }

  /** Appends the messages; returns the offset of each. */
  append(topic: string, messages: readonly OutgoingMessage[]): number[] {
    const log = this.topic(topic);
    const touched = new Set<number>();
    const offsets: number[] = [];
    for (const message of messages) {
      const partition = hashKey(message.key) % this.partitions;
      const record = { key: message.key, value: message.value, headers: { ...message.headers } };
      if (this.durable && isDeadLetterTopic(topic)) {
        // Numbered by the store, which the CLI appends to as well; read back in the store's order.
        offsets.push(this.durable.appendDeadLetter(topic, partition, record));
        this.pullDurable();
      } else {
        offsets.push(log[partition]?.end ?? 0);
        log[partition]?.push(record);
      }
      touched.add(partition);
    }
    for (const partition of touched) this.trim(topic, partition);
    for (const group of this.groups.values()) group.changed.notify();
    return offsets;
  }

  /** Stops looking for records appended to the durable state by other processes. */
  close(): void {
    if (this.durablePoll) clearInterval(this.durablePoll);
    this.durablePoll = undefined;
  }

  /** A group's committed position in a partition, with its metadata. */
  position(groupId: string, topic: string, partition: number): CommittedPosition | undefined {
    const group = this.groups.get(groupId);
    const slot = partitionSlot(topic, partition);
    const offset = group?.committed.get(slot);
    if (offset === undefined) return undefined;
    return { offset: String(offset), metadata: group?.metadata.get(slot) ?? null };
  }

  /** Commits a group's positions (Kafka's offset commit, with its metadata); all of them in one step. */
  commit(groupId: string, commits: readonly OffsetCommit[]): void {
    const group = this.group(groupId);
    for (const commit of commits) {
      if (this.durable) {
        const slot = partitionSlot(commit.topic, commit.partition);
        const changed = (group.metadata.get(slot) ?? null) !== commit.metadata;
        // Data topics live in memory only, so their offsets mean nothing to the next run; their parked streams do.
        if (isDeadLetterTopic(commit.topic) || changed) {
          this.durable.savePosition(
            groupId,
            commit.topic,
            commit.partition,
            isDeadLetterTopic(commit.topic) ? Number(commit.offset) : null,
            commit.metadata,
          );
        }
      }
    }
    for (const commit of commits) {
      const slot = partitionSlot(commit.topic, commit.partition);
      group.committed.set(slot, Number(commit.offset));
      if (commit.metadata === null) group.metadata.delete(slot);
      else group.metadata.set(slot, commit.metadata);
      this.trim(commit.topic, commit.partition);
    }
    group.progressed.notify();
  }

  /** The member of a group a partition of a topic is assigned to now. */
  assignee(groupId: string, topic: string, partition: number): GroupMember | undefined {
    return this.groups.get(groupId)?.assignee(topic, partition);
  }

  /** Per partition of `topic`: messages after the group's committed offset. */
  lag(groupId: string, topic: string): Array<{ partition: number; lag: number }> {
    const group = this.groups.get(groupId);
    return this.topic(topic).map((log, partition) => ({
      partition,
      lag: Math.max(
        0,
        log.end - Math.max(group?.committed.get(partitionSlot(topic, partition)) ?? log.start, log.start),
      ),
    }));
  }

  /** Every record still kept in a partition of a topic, with its offset. */
  records(topic: string, partition: number): Array<StoredRecord & { offset: number }> {
    const log = this.topics.get(topic)?.[partition];
    const records: Array<StoredRecord & { offset: number }> = [];
    if (!log) return records;
    for (let offset = log.start; offset < log.end; offset += 1) {
      const record = log.read(offset);
      if (record) records.push({ ...record, offset });
    }
    return records;
  }

  /** The topics this broker knows. */
  topicNames(): string[] {
    return [...this.topics.keys()];
  }

  /** The consumer groups that ever joined. */
  groupIds(): string[] {
    return [...this.groups.keys()];
  }

  /** Reads the dead-letter records appended to the durable state since the last look (by this or another process). */
  private pullDurable(): void {
    if (!this.durable) return;
    const rows: StoredDeadLetter[] = this.durable.deadLettersAfter(this.durableSeq);
    if (rows.length === 0) return;
    const touchedTopics = new Set<string>();
    for (const row of rows) {
      this.durableSeq = Math.max(this.durableSeq, row.seq);
      const log = this.topic(row.topic)[row.partition];
      if (!log || row.offset < log.end) continue; // another partition count than this run's, or already read
      log.pushAt(row.offset, { key: row.key, value: row.value, headers: row.headers });
      touchedTopics.add(row.topic);
    }
    if (touchedTopics.size > 0) for (const group of this.groups.values()) group.changed.notify();
  }

  /** Earliest offset still kept in a partition. */
  start(topic: string, partition: number): number {
    return this.topics.get(topic)?.[partition]?.start ?? 0;
  }

  /** Drops what every group consuming the topic has committed (or, with no group, what exceeds the retention). */
  trim(topic: string, partition: number): void {
    const log = this.topics.get(topic)?.[partition];
    if (!log || isDeadLetterTopic(topic)) return;
    const slot = partitionSlot(topic, partition);
    let keepFrom = Number.POSITIVE_INFINITY;
    for (const group of this.groups.values()) {
      const committed = group.committed.get(slot);
      if (committed !== undefined) keepFrom = Math.min(keepFrom, committed);
    }
    log.trimTo(keepFrom === Number.POSITIVE_INFINITY ? log.end - this.unconsumedRetention : keepFrom);
  }

  /**
   * Resolves once every group with a member subscribed to `topic` has committed everything appended to it so far
   * (a group whose members all leave stops counting), and those members have synced what they made of it (`sync`).
   */
  async consumed(topic: string): Promise<void> {
    const ends = this.topic(topic).map((log) => log.end);
    for (const group of this.groups.values()) {
      const behind = () =>
        group.hasMemberFor(topic) &&
        ends.some((end, partition) => (group.committed.get(partitionSlot(topic, partition)) ?? 0) < end);
      while (behind()) await group.progressed.wait();
    }
    const members = [...this.groups.values()].flatMap((group) =>
      group.members.filter((member) => member.topics.has(topic)),
    );
    await Promise.all(members.map((member) => member.sync()));
  }

  read(topic: string, partition: number, offset: number): StoredRecord | undefined {
    return this.topics.get(topic)?.[partition]?.read(offset);
  }

  /**
   * Adds a member to its group. Partitions the group has no committed offset for start at the beginning, or
   * at the current end when `fromBeginning` is false (Kafka's auto.offset.reset, fixed at subscribe time).
   */
  join(groupId: string, member: GroupMember, fromBeginning: boolean): void {
    const group = this.group(groupId);
    for (const topic of member.topics) {
      const log = this.topic(topic);
      log.forEach((partitionLog, partition) => {
        const slot = partitionSlot(topic, partition);
        if (group.committed.has(slot)) return;
        const saved = this.savedPositions.get(groupSlot(groupId, topic, partition));
        group.committed.set(slot, saved?.offset ?? (fromBeginning ? partitionLog.start : partitionLog.end));
        if (saved?.metadata) group.metadata.set(slot, saved.metadata);
      });
    }
    group.members.push(member);
    group.changed.notify();
    for (const topic of member.topics) {
      for (let partition = 0; partition < this.partitions; partition += 1) group.ensureWorker(topic, partition);
    }
  }

  leave(groupId: string, member: GroupMember): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    const index = group.members.indexOf(member);
    if (index >= 0) group.members.splice(index, 1);
    group.changed.notify();
    group.progressed.notify();
  }

  private topic(name: string): PartitionLog[] {
    let log = this.topics.get(name);
    if (!log) {
      log = Array.from({ length: this.partitions }, () => new PartitionLog());
      this.topics.set(name, log);
    }
    return log;
  }

  private group(id: string): ConsumerGroup {
    let group = this.groups.get(id);
    if (!group) {
      group = new ConsumerGroup(id, this);
      this.groups.set(id, group);
    }
    return group;
  }
}
