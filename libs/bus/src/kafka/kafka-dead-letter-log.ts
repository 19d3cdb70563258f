import { randomUUID } from 'node:crypto';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { DeadLetterLog, DeadLetterLogAppend } from '../dead-letter/dead-letter-log';
import { isDeadLetterTopic, type DeadLetterRecord } from '../dead-letter/dead-letter-records';
import { ParkedStreams } from '../dead-letter/parked-streams';
import { toBusError } from './kafka-errors';
import { kafkajs } from './kafkajs';
import { kafkaLogLevels, stderrLogCreator } from './kafka-logging';

export interface KafkaDeadLetterLogOptions {
  readonly brokers: readonly string[];
  readonly clientId?: string;
  /** How long reading a dead-letter topic to its end may take. Default 30 s. */
  readonly readTimeoutMs?: number;
}

/**
 * The dead-letter topics of a Kafka cluster, for `cli dead-letters`. A topic is read to the end it had when asked by
 * a consumer in a throw-away group (kafkajs reads only through groups), deleted afterwards; the groups' parked streams
 * are their committed offsets' metadata (admin `fetchOffsets`); commands are produced to the entry's partition.
 */
export class KafkaDeadLetterLog implements DeadLetterLog {
  private readonly kafka: Kafka;
  private admin: Promise<Admin> | undefined;
  private producer: Promise<Producer> | undefined;

  constructor(private readonly options: KafkaDeadLetterLogOptions) {
    this.kafka = new (kafkajs().Kafka)({
      clientId: options.clientId ?? 'switchyard-cli',
      brokers: [...options.brokers],
      connectionTimeout: 3_000,
      retry: { retries: 3 },
      logLevel: kafkaLogLevels.warn,
      logCreator: stderrLogCreator,
    });
  }

  async deadLetterTopics(): Promise<string[]> {
    const admin = await this.connectedAdmin();
    return (await admin.listTopics()).filter(isDeadLetterTopic).sort();
  }

  async read(deadLetterTopic: string): Promise<DeadLetterRecord[]> {
    const admin = await this.connectedAdmin();
    if (!(await admin.listTopics()).includes(deadLetterTopic)) return [];
    const ends = new Map(
      (await admin.fetchTopicOffsets(deadLetterTopic))
        .filter((end) => BigInt(end.high) > BigInt(end.low))
        .map((end) => [end.partition, BigInt(end.high)]),
    );
    if (ends.size === 0) return [];
    const groupId = `switchyard-cli-${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    const records: DeadLetterRecord[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [deadLetterTopic], fromBeginning: true });
      const remaining = new Set(ends.keys());
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          const end = ends.get(partition);
          if (end === undefined || BigInt(message.offset) >= end) return;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) {
            const last = Array.isArray(value) ? value[value.length - 1] : value;
            if (last !== undefined) headers[name] = last.toString();
          }
          records.push({
            partition,
            offset: Number(message.offset),
            key: message.key?.toString() ?? '',
            value: message.value?.toString() ?? '',
            headers,
          });
          if (BigInt(message.offset) + 1n >= end) remaining.delete(partition);
          if (remaining.size === 0) finish();
        },
      });
      const timeoutMs = this.options.readTimeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`reading ${deadLetterTopic} took longer than ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([finished, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      throw toBusError(error, `read of ${deadLetterTopic}`);
    } finally {
      await consumer.disconnect().catch(() => undefined);
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
    return records.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  }

  async parkedStreams(groupId: string, topic: string): Promise<Map<number, ParkedStreams>> {
    const admin = await this.connectedAdmin();
    const states = new Map<number, ParkedStreams>();
    for (const { partitions } of await admin.fetchOffsets({ groupId, topics: [topic] })) {
      for (const { partition, metadata } of partitions) states.set(partition, ParkedStreams.decode(metadata));
    }
    return states;
  }

  async append(deadLetterTopic: string, messages: readonly DeadLetterLogAppend[]): Promise<void> {
    if (messages.length === 0) return;
    try {
      this.producer ??= (async () => {
        const producer = this.kafka.producer({
          createPartitioner: kafkajs().Partitioners.DefaultPartitioner,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
        });
        await producer.connect();
        return producer;
      })();
      const producer = await this.producer;
      await producer.send({
        topic: deadLetterTopic,
        acks: -1,
        messages: messages.map((message) => ({
          key: message.key,
          value: message.value,
          headers: { ...message.headers },
          partition: message.partition,
        })),
      });
    } catch (error) {
      throw toBusError(error, `publish to ${deadLetterTopic}`);
    }
  }

  async close(): Promise<void> {
    const clients = await Promise.allSettled([this.admin, this.producer].filter((client) => client !== undefined));
    await Promise.allSettled(
      clients.map((client) => (client.status === 'fulfilled' ? client.value?.disconnect() : undefined)),
    );
  }

  private connectedAdmin(): Promise<Admin> {
    this.admin ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      return admin;
    })();
    return this.admin;
  }
}
