/**
 * kill -9 while 200 appends race on a SQLite event store, then kill -9 the relay while it publishes to Kafka.
 * Afterwards: every append that was acknowledged is stored, no stream has a gap, and a consumer receives every
 * event at least once, in order per stream, and — deduplicating by event id — handles each exactly once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deduplicating, InMemorySeenEventIds, KafkaMessageBus, type IncomingMessage } from '@switchyard/bus';
import type { EventMessage } from '@switchyard/contracts';
import { SqliteEventStore } from '@switchyard/eventstore';
import Database from 'better-sqlite3';
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { kafkaAvailability } from '@switchyard/bus/src/contract';
import { describeWithInfra, kafkaBrokersForTests, startTsProcess, waitFor } from '@switchyard/testing';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();

interface Ack {
  id: string;
  streamId: string;
  revision: number;
}

const KILLS = 3;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-crash-'));
const storeFile = path.join(dir, 'events.db');
const acks: Ack[] = [];

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('kill -9 during 200 concurrent appends to the SQLite store', () => {
  it(`keeps every acknowledged append and leaves no gap, over ${KILLS} kills`, async () => {
    for (let kill = 0; kill < KILLS; kill += 1) {
      const writer = startTsProcess('tests/fixtures/crash-writer.ts', { STORE_FILE: storeFile, RUN_ID: String(kill) });
      let buffered = '';
      writer.child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) if (line.startsWith('{')) acks.push(JSON.parse(line) as Ack);
      });
      // A random moment inside the second or third round of 200 appends.
      const target = acks.length + 250 + Math.floor(Math.random() * 250);
      await waitFor(
        'enough acknowledged appends',
        async () => (acks.length >= target ? true : undefined),
        60_000,
        writer.output,
      );
      await writer.kill('SIGKILL');
    }

    const store = new SqliteEventStore(storeFile);
    try {
      const all = await store.readAll();
      const stored = new Map(all.map((event) => [event.id, event]));
      const lost = acks.filter(
        (ack) => stored.get(ack.id)?.streamId !== ack.streamId || stored.get(ack.id)?.revision !== ack.revision,
      );
      expect(lost).toEqual([]);

      const revisionsByStream = new Map<string, number[]>();
      for (const event of all)
        revisionsByStream.set(event.streamId, [...(revisionsByStream.get(event.streamId) ?? []), event.revision]);
      for (const [, revisions] of revisionsByStream) expect(revisions).toEqual(revisions.map((_, index) => index));
      const positions = all.map((event) => Number(event.position));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      console.log(`crash: ${acks.length} appends acknowledged, ${all.length} stored, ${KILLS} kills, 0 lost`);
    } finally {
      await store.close();
    }
  }, 180_000);
});

const kafka = await kafkaAvailability(kafkaBrokersForTests());

describeWithInfra('kill -9 of the relay while it publishes to Kafka', kafka, () => {
  it('delivers every stored event at least once, in order per stream; consumers see each id once', async () => {
    const store = new SqliteEventStore(storeFile);
    const expected = await store.readAll();
    await store.close();
    expect(expected.length).toBeGreaterThan(0);

    const topic = `crash.events.${Date.now()}`;
    const env = {
      STORE_FILE: storeFile,
      TOPIC: topic,
      KAFKA_BROKERS: kafkaBrokersForTests().join(','),
      PUBLISH_DELAY_MS: '25',
    };
    const bus = new KafkaMessageBus({ brokers: kafkaBrokersForTests(), clientId: 'crash-consumer' });
    const received: EventMessage[] = [];
    const handled: EventMessage[] = [];
    const record = (message: IncomingMessage) => received.push(JSON.parse(message.value) as EventMessage);
    const dedupe = deduplicating(
      async (message: IncomingMessage) => void handled.push(JSON.parse(message.value) as EventMessage),
      new InMemorySeenEventIds(),
    );
    const subscription = await bus.subscribe({
      groupId: `crash-consumer-${Date.now()}`,
      topics: [topic],
      fromBeginning: true,
      handler: async (message) => {
        record(message);
        await dedupe(message);
      },
    });

    try {
      for (let kill = 0; kill < 2; kill += 1) {
        const relay = startTsProcess('tests/fixtures/relay-runner.ts', env);
        // Kill at a random moment while batches are still going out.
        const target = received.length + 50 + Math.floor(Math.random() * 200);
        await waitFor(
          'the relay publishing',
          async () => (received.length >= target ? true : undefined),
          60_000,
          () => `run ${kill}: ${received.length} received\n${relay.output()}`,
        );
        await relay.kill('SIGKILL');
      }
      const relay = startTsProcess('tests/fixtures/relay-runner.ts', env);
      let endOffset = '?';
      const admin = new Kafka({
        clientId: 'crash-admin',
        brokers: kafkaBrokersForTests(),
        logLevel: logLevel.NOTHING,
      }).admin();
      const checkpoint = () => {
        const db = new Database(storeFile, { readonly: true });
        try {
          return JSON.stringify(db.prepare('SELECT * FROM checkpoints').all());
        } finally {
          db.close();
        }
      };
      const offsets = setInterval(() => {
        void admin
          .connect()
          .then(() => admin.fetchTopicOffsets(topic))
          .then(
            (o) => (endOffset = JSON.stringify(o)),
            () => undefined,
          );
      }, 2_000);
      try {
        await waitFor(
          'every event handled',
          async () => (new Set(handled.map((e) => e.id)).size >= expected.length ? true : undefined),
          90_000,
          () =>
            `${expected.length} stored, ${received.length} received, ${handled.length} handled, topic end offset ${endOffset}, relay checkpoint ${checkpoint()}\n${relay.output()}`,
        );
      } finally {
        clearInterval(offsets);
        await admin.disconnect();
        await relay.kill('SIGTERM');
      }
    } finally {
      await subscription.stop();
      await bus.close();
    }

    expect(handled.map((event) => event.id).sort()).toEqual(expected.map((event) => event.id).sort());
    const byStream = new Map<string, number[]>();
    for (const event of handled)
      byStream.set(event.stream_id, [...(byStream.get(event.stream_id) ?? []), event.revision]);
    for (const [, revisions] of byStream) expect(revisions).toEqual(revisions.map((_, index) => index));
    expect(received.length).toBeGreaterThanOrEqual(expected.length);
    console.log(
      `relay: ${expected.length} events, ${received.length} messages received (${received.length - handled.length} duplicates dropped), 3 relay runs, 2 kills`,
    );
  }, 240_000);
});
