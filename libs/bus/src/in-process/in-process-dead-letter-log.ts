import type { DeadLetterLog, DeadLetterLogAppend } from '../dead-letter/dead-letter-log';
import { isDeadLetterTopic, type DeadLetterRecord } from '../dead-letter/dead-letter-records';
import { ParkedStreams } from '../dead-letter/parked-streams';
import type { InProcessBroker } from './in-process-broker';

/** The dead-letter topics of an in-process broker, for a caller in the same process (tests; an embedded admin). */
export class InProcessDeadLetterLog implements DeadLetterLog {
  constructor(private readonly broker: InProcessBroker) {}

  async deadLetterTopics(): Promise<string[]> {
    return this.broker.topicNames().filter(isDeadLetterTopic).sort();
  }

  async read(deadLetterTopic: string): Promise<DeadLetterRecord[]> {
    const records: DeadLetterRecord[] = [];
    for (let partition = 0; partition < this.broker.partitions; partition += 1) {
      for (const record of this.broker.records(deadLetterTopic, partition)) records.push({ ...record, partition });
    }
    return records;
  }

  async parkedStreams(groupId: string, topic: string): Promise<Map<number, ParkedStreams>> {
    const states = new Map<number, ParkedStreams>();
    for (let partition = 0; partition < this.broker.partitions; partition += 1) {
      states.set(partition, ParkedStreams.decode(this.broker.position(groupId, topic, partition)?.metadata));
    }
    return states;
  }

  /** The broker puts a record in its key's partition, which is the partition of the entry the command is about. */
  async append(deadLetterTopic: string, messages: readonly DeadLetterLogAppend[]): Promise<void> {
    this.broker.append(deadLetterTopic, messages);
  }

  async close(): Promise<void> {}
}
