/**
 * An example consumer of Switchyard's `transactions.events` topic with kafkajs (deploy/kafka/topics.md): joins a
 * consumer group, decodes each message's envelope, skips repeats by the `event-id` header (the relays publish at
 * least once), and prints the public event names (docs/events.md).
 *
 * Run it from the repository root (with a broker: `npm run kafka:start`, and the services running distributed):
 *
 *   KAFKA_BROKERS=127.0.0.1:9092 GROUP_ID=example-consumer node -r ./scripts/register.cjs examples/kafka-consumer/consumer.ts
 */
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from 'kafkajs';

/** The message value: `EventMessage` of libs/contracts/src/events.ts, version 1. Unknown fields may be added: ignore them. */
export interface EventEnvelope {
  readonly id: string;
  readonly type: string;
  readonly name: string | null;
  readonly names: readonly string[];
  readonly stream_id: string;
  readonly revision: number;
  readonly position: string;
  readonly recorded_at: string;
  readonly occurred_at: string;
  readonly correlation_id: string | null;
  readonly causation_id: string | null;
  readonly schema_version: number;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export const TOPIC = 'transactions.events';
export const EVENT_ID_HEADER = 'event-id';

/** Event ids already handled, bounded. A real consumer records them with its own writes, in one transaction. */
export class SeenEventIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 100_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value as string);
  }
}

const headerText = (headers: IHeaders | undefined, name: string): string | undefined => {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
};

/** Parses a message value into the envelope; null when it is not one (logged and skipped, not retried forever). */
export function decodeEnvelope(value: Buffer | string | null): EventEnvelope | null {
  if (value === null) return null;
  try {
    const parsed = JSON.parse(value.toString()) as Partial<EventEnvelope>;
    if (
      typeof parsed.id !== 'string' ||
      typeof parsed.type !== 'string' ||
      !Array.isArray(parsed.names) ||
      typeof parsed.stream_id !== 'string'
    )
      return null;
    return parsed as EventEnvelope;
  } catch {
    return null;
  }
}

export interface HandlerOptions {
  readonly seen?: SeenEventIds;
  /** Called once per event that has public names. */
  readonly onEvent: (event: EventEnvelope) => void | Promise<void>;
  readonly log?: (line: string) => void;
}

/** Handles one Kafka message: decode, skip repeats, hand named events on. */
export function createMessageHandler(
  options: HandlerOptions,
): (
  message: Pick<KafkaMessage, 'key' | 'value' | 'headers' | 'offset'>,
) => Promise<'handled' | 'repeat' | 'internal' | 'undecodable'> {
  const seen = options.seen ?? new SeenEventIds();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  return async (message) => {
    const envelope = decodeEnvelope(message.value);
    if (!envelope) {
      log(`skipping offset ${message.offset}: not an event envelope`);
      return 'undecodable';
    }
    // The header and the envelope carry the same id; the header can be read without parsing the value.
    const eventId = headerText(message.headers, EVENT_ID_HEADER) ?? envelope.id;
    if (seen.has(eventId)) return 'repeat';
    if (envelope.names.length === 0) {
      seen.add(eventId);
      return 'internal'; // internal events (TransactionCreated, VoidRequested, …) have no public name
    }
    // Marked as seen only once handled: a handler that throws fails eachMessage, and kafkajs delivers it again.
    await options.onEvent(envelope);
    seen.add(eventId);
    return 'handled';
  };
}

/** `2025-03-01T10:00:00.123Z transaction-… #3 capture.succeeded, transaction.captured` */
export const describeEvent = (event: EventEnvelope): string =>
  `${event.occurred_at ?? event.recorded_at} ${event.stream_id} #${event.revision} ${event.names.join(', ')}`;

async function main(): Promise<void> {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092')
    .split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  const groupId = process.env.GROUP_ID ?? 'switchyard-example-consumer';
  const kafka = new Kafka({ clientId: 'switchyard-example-consumer', brokers, logLevel: logLevel.WARN });
  const consumer = kafka.consumer({ groupId });
  const handle = createMessageHandler({ onEvent: (event) => void process.stdout.write(`${describeEvent(event)}\n`) });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await consumer.disconnect();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());

  await consumer.connect();
  // A new group reads the topic from its start; afterwards, from the group's committed offsets.
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  process.stderr.write(`consuming ${TOPIC} from ${brokers.join(',')} as group ${groupId}\n`);
  // The offset is committed after eachMessage resolves: a crash before that delivers the message again, which
  // the event-id check above then skips.
  await consumer.run({ eachMessage: async ({ message }) => void (await handle(message)) });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
