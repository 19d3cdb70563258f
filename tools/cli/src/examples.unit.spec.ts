/**
 * The examples under examples/ (vitest and the type check only look under libs/, services/, tools/ and tests/, so
 * they are imported from here: this both type-checks them and runs them). The Kafka consumer's message handling;
 * the webhook receiver runs over HTTP in examples.int.spec.ts.
 */
import type { EventMessage } from '@switchyard/contracts';
import type { KafkaMessage } from 'kafkajs';
import {
  createMessageHandler,
  decodeEnvelope,
  describeEvent,
  SeenEventIds,
  TOPIC,
  type EventEnvelope,
} from '../../../examples/kafka-consumer/consumer';
import { secretsFromEnv, type WebhookEvent as ExampleWebhookEvent } from '../../../examples/webhook-receiver/receiver';
import type { WebhookEvent } from '@switchyard/contracts';

// The examples' own copies of the wire types must keep accepting what the services send.
const envelopeOf = (message: EventMessage): EventEnvelope => message;
const webhookEventOf = (event: WebhookEvent): ExampleWebhookEvent => event;

const envelope = (overrides: Partial<EventMessage> = {}): EventMessage => ({
  id: 'e-1',
  type: 'CaptureSucceeded',
  name: 'capture.succeeded',
  names: ['capture.succeeded', 'transaction.captured'],
  stream_id: 'transaction-1',
  revision: 4,
  position: '17',
  recorded_at: '2025-03-01T10:00:05.100Z',
  occurred_at: '2025-03-01T10:00:05.012Z',
  correlation_id: null,
  causation_id: null,
  schema_version: 1,
  data: { captureId: 'cap-1', at: '2025-03-01T10:00:05.012Z' },
  metadata: {},
  ...overrides,
});

let offset = 0;
const kafkaMessage = (
  value: EventMessage | string | null,
  headers: KafkaMessage['headers'] = {},
): Pick<KafkaMessage, 'key' | 'value' | 'headers' | 'offset'> => ({
  key: Buffer.from('transaction-1'),
  value: value === null ? null : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  headers,
  offset: String(offset++),
});

describe('examples/kafka-consumer', () => {
  it('follows transactions.events', () => expect(TOPIC).toBe('transactions.events'));

  it('hands each named event on once, skipping repeats by the event-id header', async () => {
    const handled: EventEnvelope[] = [];
    const handle = createMessageHandler({ onEvent: (event) => void handled.push(event), log: () => undefined });
    const first = envelope();
    expect(await handle(kafkaMessage(first, { 'event-id': Buffer.from('e-1') }))).toBe('handled');
    expect(await handle(kafkaMessage(first, { 'event-id': Buffer.from('e-1') }))).toBe('repeat');
    expect(await handle(kafkaMessage(envelope({ id: 'e-2', revision: 5 }), { 'event-id': 'e-2' }))).toBe('handled');
    expect(handled.map((event) => [event.id, event.names])).toEqual([
      ['e-1', ['capture.succeeded', 'transaction.captured']],
      ['e-2', ['capture.succeeded', 'transaction.captured']],
    ]);
    expect(describeEvent(handled[0]!)).toBe(
      '2025-03-01T10:00:05.012Z transaction-1 #4 capture.succeeded, transaction.captured',
    );
  });

  it('skips internal events and what is not an envelope, and keeps an event whose handler failed for its redelivery', async () => {
    const logged: string[] = [];
    let fail = true;
    const handled: string[] = [];
    const handle = createMessageHandler({
      seen: new SeenEventIds(10),
      onEvent: (event) => {
        if (fail) throw new Error('database down');
        handled.push(event.id);
      },
      log: (line) => logged.push(line),
    });
    expect(await handle(kafkaMessage(envelope({ id: 'e-3', type: 'VoidRequested', name: null, names: [] })))).toBe(
      'internal',
    );
    expect(await handle(kafkaMessage('not json'))).toBe('undecodable');
    expect(await handle(kafkaMessage(null))).toBe('undecodable');
    expect(logged).toHaveLength(2);
    await expect(handle(kafkaMessage(envelope({ id: 'e-4' }), { 'event-id': 'e-4' }))).rejects.toThrow('database down');
    fail = false;
    expect(await handle(kafkaMessage(envelope({ id: 'e-4' }), { 'event-id': 'e-4' }))).toBe('handled');
    expect(handled).toEqual(['e-4']);
  });

  it('reads the envelope with fields it does not know', () => {
    expect(decodeEnvelope(JSON.stringify({ ...envelope(), added_later: true }))).toMatchObject({
      id: 'e-1',
      added_later: true,
    });
    expect(decodeEnvelope(JSON.stringify({ id: 'e-1' }))).toBeNull();
    expect(envelopeOf(envelope()).schema_version).toBe(1);
  });
});

describe('examples/webhook-receiver', () => {
  it('takes its secrets from WEBHOOK_SECRETS, comma separated, or WEBHOOK_SECRET', () => {
    expect(secretsFromEnv({ WEBHOOK_SECRETS: ' a, b ,' })).toEqual(['a', 'b']);
    expect(secretsFromEnv({ WEBHOOK_SECRET: 'c' })).toEqual(['c']);
    expect(secretsFromEnv({})).toEqual([]);
    const event: WebhookEvent = {
      type: 'event',
      id: 'e',
      name: 'refund.succeeded',
      created_at: '2025-03-01T10:00:00Z',
      merchant_account_id: null,
      target: {},
    };
    expect(webhookEventOf(event).name).toBe('refund.succeeded');
  });
});
